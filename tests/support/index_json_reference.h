// ParseIndexJsonReference: the straightforward DOM-based index parser, the oracle that the
// streaming ParseIndexJson (engine/core/src/index_parser.h) must agree with on every input:
// same IndexFile, or the same error code and message.
#pragma once

#include <string_view>

#include "litmus/format/index_model.h"
#include "litmus/status.h"

namespace litmus::testing {

StatusOr<IndexFile> ParseIndexJsonReference(std::string_view json, std::string_view file_name);

}  // namespace litmus::testing
