// In-memory model of the two JSON files of a trial, and their serialization exactly as smdebug's
// Python writes them (json.dumps defaults: ", " / ": " separators, ensure_ascii escaping, no
// trailing newline). Parsing lives in the engine (it needs a JSON library); the writer only
// serializes. Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "litmus/format/mode.h"

namespace litmus {

// index/<P9>/<S12>_<worker>.json
struct IndexEntry {
  std::string tensor_name;
  uint64_t start_idx = 0;  // offset of the framed record in the event file
  uint64_t length = 0;     // framed record size = payload + 16
};
struct ShapeEntry {
  std::string tensor_name;
  std::string original_name;
  std::vector<int64_t> shape;
};
struct IndexFile {
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  std::optional<std::string> event_file_name;  // relative to the trial root; absent if no tensor
  std::vector<IndexEntry> tensor_payload;
  std::vector<ShapeEntry> shape_payload;
};

// collections/000000000/<worker>_collections.json
struct ModeSaveConfig {
  int64_t save_interval = 1;
  std::vector<int64_t> save_steps;
  int64_t start_step = 0;
  std::optional<int64_t> end_step;  // null = no end
};
struct ReductionConfigJson {
  bool save_raw_tensor = true;
  std::string reductions;  // comma-separated items: "min,l2_norm,abs_mean,abs_l1_norm"
  bool save_shape = false;
};
struct CollectionJson {
  std::string name;
  std::vector<std::string> include_regex;
  std::vector<std::string> tensor_names;  // serialized sorted
  std::optional<ReductionConfigJson> reduction_config;  // null allowed
  // Keyed by mode; absent modes are written as null. The whole object is null when nullopt.
  std::optional<std::map<Mode, std::optional<ModeSaveConfig>>> save_config;
  bool save_histogram = true;
};
struct CollectionsFile {
  std::vector<CollectionJson> collections;  // written in this order
  int64_t num_workers = 1;
};

// Python json.dumps(str) with ensure_ascii=True: quotes, escapes \" \\ \n \r \t \b \f, other
// control characters and all non-ASCII as \uXXXX (UTF-16 surrogate pairs above U+FFFF).
std::string JsonQuote(std::string_view utf8);

std::string SerializeIndexJson(const IndexFile& index);
std::string SerializeCollectionsJson(const CollectionsFile& file);

}  // namespace litmus
