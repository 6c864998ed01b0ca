// ParseCanonicalIndexJson: the fast path of ParseIndexJson (index_parser.h) for index files in
// the exact layout smdebug writes (writer/format index_model.h):
//   {"meta": {"mode": M, "mode_step": N, "event_file_name": F},
//    "tensor_payload": [{"tensorname": T, "start_idx": N, "length": N}, ...],
//    "shape_payload": []}
// (keys in this order; "shape_payload" may be absent; any JSON whitespace between tokens;
// strings of printable ASCII without escapes; integers without sign, fraction or exponent).
// A trial of small tensors has hundreds of thousands of index entries, and the general parser
// (a SAX state machine that validates every shape of input) took ~190 ns per entry.
// Contract: returns the IndexFile only for input that ParseIndexJson's general path accepts with
// exactly that result; returns nullopt for everything else (another layout, an escape, a value
// the general path rejects, ...), without deciding anything: the caller then runs the general
// path. index_parser_diff_test checks both against the reference parser.
// ParseCanonicalIndexView is the same parse with the names (and event_file_name) viewing `json`
// (the caller keeps it alive, e.g. as the view's owner): no string allocated per entry.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "index_file_view.h"
#include "litmus/format/index_model.h"

namespace litmus {

std::optional<IndexFile> ParseCanonicalIndexJson(std::string_view json);
std::optional<IndexFileView> ParseCanonicalIndexView(std::string_view json);

}  // namespace litmus
