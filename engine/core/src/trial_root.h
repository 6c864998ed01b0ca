// TrialRoot: the check every reader of a trial folder makes first (Trial::Open and
// TrialOutline::Open), so that both refuse the same inputs with the same one-line messages.
#pragma once

#include <string>

#include "litmus/format/env.h"
#include "litmus/status.h"

namespace litmus::internal {

// `root` without trailing slashes, if it is a folder of `env`; otherwise NotFound ("no such
// trial folder") or InvalidArgument ("not a folder") naming it, or the Env's own error.
StatusOr<std::string> CheckedTrialRoot(Env* env, std::string root);

}  // namespace litmus::internal
