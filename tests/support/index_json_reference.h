// ParseIndexJsonReference: the straightforward DOM-based index parser, the oracle that the
// streaming ParseIndexJson (engine/core/src/index_parser.h) must agree with on every input:
// same IndexFile, or the same error code and message.
#pragma once

#include <string>
#include <string_view>

#include "litmus/format/index_model.h"
#include "litmus/status.h"

namespace litmus::testing {

StatusOr<IndexFile> ParseIndexJsonReference(std::string_view json, std::string_view file_name);

// Every field of a parse result (or its error) in one line: two results agree when these match.
std::string DescribeIndexResult(const StatusOr<IndexFile>& result);

}  // namespace litmus::testing
