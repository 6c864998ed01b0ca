// ActionClient's out-of-line destructor (anchors its vtable here).
#include "litmus/actions/action_client.h"

namespace litmus::actions {

ActionClient::~ActionClient() = default;

}  // namespace litmus::actions
