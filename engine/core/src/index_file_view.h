// IndexFileView: one parsed index file as the catalog adds it, without a string allocated per
// entry. A trial of small tensors has hundreds of thousands of index entries, and allocating
// each entry's name (then freeing it once the catalog had copied what it keeps) was ~30 % of
// opening one: the names now view the file's own text, which the view owns (smdebug writes names
// without escapes), or the strings of the general parser's IndexFile for any other file.
// Move-only in effect (copies share the owner); the views stay valid across moves.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/format/index_model.h"
#include "litmus/format/mode.h"
#include "litmus/status.h"

namespace litmus {

struct IndexEntryView {
  std::string_view tensor_name;
  uint64_t start_idx = 0;  // offset of the framed record in the event file
  uint64_t length = 0;     // framed record size = payload + 16
};

struct IndexFileView {
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  std::optional<std::string_view> event_file_name;  // relative to the trial root; absent if no tensor
  std::vector<IndexEntryView> tensor_payload;
  std::vector<ShapeEntry> shape_payload;  // (copied: smdebug writes none)
  // What the views point into (the file's text or an IndexFile).
  std::shared_ptr<const void> owner;

  // A view of `file` (which it then owns).
  static IndexFileView Of(IndexFile file);
  // The IndexFile this view shows (its own strings).
  IndexFile ToIndexFile() const;
};

// ParseIndexJson (index_parser.h) of `json`, the same checks, errors and result, as a view.
StatusOr<IndexFileView> ParseIndexFileView(std::string json, std::string_view file_name);

}  // namespace litmus
