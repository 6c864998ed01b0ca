// Parser for a trial's index files (index/<P9>/<S12>_<worker>.json, docs/trial-format.md §4)
// into litmus::IndexFile, with smdebug's validation rules (§4.3) plus a path-safety check of
// meta.event_file_name. Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "litmus/format/index_model.h"
#include "litmus/status.h"

namespace litmus {

// Parses one index file. `file_name` only goes into error messages. Errors (all naming the file):
//   DataLoss:        invalid JSON; not an object; `meta` missing, not an object or empty; neither
//                    `tensor_payload` nor `shape_payload`; an unknown mode name; a non-empty
//                    tensor_payload without event_file_name; wrong types (e.g. a string offset, a
//                    float or negative mode step, a negative length, a length below the 16 bytes
//                    of a framed record, start_idx + length overflowing 64 bits).
//   InvalidArgument: an event_file_name that is not a safe relative path (SafeRelativePath).
// Offsets are 64-bit. Unknown keys are ignored, as smdebug does.
StatusOr<IndexFile> ParseIndexJson(std::string_view json, std::string_view file_name);
// ParseIndexJson without its fast path for smdebug's layout (for a caller that ran that path
// itself and it declined: ParseIndexFileView); the same result.
StatusOr<IndexFile> ParseIndexJsonGeneral(std::string_view json, std::string_view file_name);

// True if `path` is a non-empty relative '/'-separated path that stays inside the folder it is
// relative to: no leading '/', no ".." component, no NUL, no backslash (so no Windows-style
// "..\\x" or "C:\\x" either), no empty or "." component.
bool SafeRelativePath(std::string_view path);

}  // namespace litmus
