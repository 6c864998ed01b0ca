// IndexFileView (index_file_view.h): smdebug's layout parsed in place (canonical_index_parser.h),
// anything else through ParseIndexJson's general path (ParseIndexJsonGeneral: the fast path has
// declined already).
#include "index_file_view.h"

#include <utility>

#include "canonical_index_parser.h"
#include "index_parser.h"

namespace litmus {

IndexFileView IndexFileView::Of(IndexFile file) {
  auto owned = std::make_shared<IndexFile>(std::move(file));
  IndexFileView view;
  view.mode = owned->mode;
  view.mode_step = owned->mode_step;
  if (owned->event_file_name) view.event_file_name = *owned->event_file_name;
  view.tensor_payload.reserve(owned->tensor_payload.size());
  for (const IndexEntry& e : owned->tensor_payload) view.tensor_payload.push_back({e.tensor_name, e.start_idx, e.length});
  view.shape_payload = std::move(owned->shape_payload);
  view.owner = std::move(owned);
  return view;
}

IndexFile IndexFileView::ToIndexFile() const {
  IndexFile file;
  file.mode = mode;
  file.mode_step = mode_step;
  if (event_file_name) file.event_file_name.emplace(*event_file_name);
  file.tensor_payload.reserve(tensor_payload.size());
  for (const IndexEntryView& e : tensor_payload) {
    file.tensor_payload.push_back(IndexEntry{std::string(e.tensor_name), e.start_idx, e.length});
  }
  file.shape_payload = shape_payload;
  return file;
}

StatusOr<IndexFileView> ParseIndexFileView(std::string json, std::string_view file_name) {
  auto text = std::make_shared<const std::string>(std::move(json));
  if (std::optional<IndexFileView> canonical = ParseCanonicalIndexView(*text)) {
    canonical->owner = std::move(text);
    return *std::move(canonical);
  }
  LITMUS_ASSIGN_OR_RETURN(IndexFile file, ParseIndexJsonGeneral(*text, file_name));
  return IndexFileView::Of(std::move(file));
}

}  // namespace litmus
