// The index parser litmus used until 2026-11-25, kept as the oracle of the differential tests
// of ParseIndexJson (index_parser_diff_test.cc and the fuzz_index_parser fuzzer): it builds
// nlohmann's DOM and validates it, which is easy to read and hard to get wrong, and slow.
#include "support/index_json_reference.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "index_parser.h"
#include "litmus/format/mode.h"

namespace litmus::testing {
namespace {

using Json = nlohmann::json;

Status Corrupt(std::string_view file_name, std::string_view why) {
  return DataLossError(std::string(file_name) + ": " + std::string(why));
}

// Reads a JSON integer >= 0 into *out (floats, strings, booleans and negatives are rejected).
// An out-parameter rather than std::optional: GCC's -Wmaybe-uninitialized misfires on the latter.
bool NonNegativeInt(const Json& value, uint64_t* out) {
  if (value.is_number_unsigned()) {
    *out = value.get<uint64_t>();
    return true;
  }
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(value.get<int64_t>());
    return true;
  }
  return false;
}

}  // namespace

StatusOr<IndexFile> ParseIndexJsonReference(std::string_view json, std::string_view file_name) {
  const Json doc = Json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Corrupt(file_name, "empty or corrupt index file (invalid JSON)");
  if (!doc.is_object()) return Corrupt(file_name, "index file is not a JSON object");

  const auto meta_it = doc.find("meta");
  if (meta_it == doc.end() || !meta_it->is_object() || meta_it->empty()) {
    return Corrupt(file_name, "index file has no (or an empty) \"meta\" object");
  }
  const auto tensors_it = doc.find("tensor_payload");
  const auto shapes_it = doc.find("shape_payload");
  if (tensors_it == doc.end() && shapes_it == doc.end()) {
    return Corrupt(file_name, "index file has neither \"tensor_payload\" nor \"shape_payload\"");
  }

  IndexFile index;
  const Json& meta = *meta_it;
  const auto mode_it = meta.find("mode");
  if (mode_it == meta.end() || !mode_it->is_string()) {
    return Corrupt(file_name, "meta.mode is missing or not a string");
  }
  const std::optional<Mode> mode = ModeFromName(mode_it->get_ref<const std::string&>());
  if (!mode) {
    return Corrupt(file_name, "unknown mode '" + mode_it->get<std::string>() + "' in meta.mode");
  }
  index.mode = *mode;
  const auto mode_step_it = meta.find("mode_step");
  if (mode_step_it == meta.end()) return Corrupt(file_name, "meta.mode_step is missing");
  uint64_t mode_step = 0;
  if (!NonNegativeInt(*mode_step_it, &mode_step) ||
      mode_step > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Corrupt(file_name, "meta.mode_step is not a non-negative integer");
  }
  index.mode_step = static_cast<int64_t>(mode_step);
  if (const auto it = meta.find("event_file_name"); it != meta.end()) {
    if (!it->is_string()) return Corrupt(file_name, "meta.event_file_name is not a string");
    const std::string& path = it->get_ref<const std::string&>();
    if (!SafeRelativePath(path)) {
      return InvalidArgumentError(std::string(file_name) + ": event_file_name '" + path +
                                  "' is not a relative path inside the trial");
    }
    index.event_file_name = path;
  }

  if (tensors_it != doc.end()) {
    if (!tensors_it->is_array()) return Corrupt(file_name, "tensor_payload is not a list");
    index.tensor_payload.reserve(tensors_it->size());
    for (const Json& entry : *tensors_it) {
      // Built only for an error message (this runs for every entry of every index file).
      const auto where = [&index] { return "tensor_payload[" + std::to_string(index.tensor_payload.size()) + "]"; };
      if (!entry.is_object()) return Corrupt(file_name, where() + " is not an object");
      const auto name = entry.find("tensorname");
      const auto start = entry.find("start_idx");
      const auto length = entry.find("length");
      if (name == entry.end() || !name->is_string()) {
        return Corrupt(file_name, where() + ".tensorname is missing or not a string");
      }
      uint64_t start_v = 0;
      uint64_t length_v = 0;
      if (start == entry.end() || !NonNegativeInt(*start, &start_v)) {
        return Corrupt(file_name, where() + ".start_idx is not a non-negative integer");
      }
      if (length == entry.end() || !NonNegativeInt(*length, &length_v)) {
        return Corrupt(file_name, where() + ".length is not a non-negative integer");
      }
      if (length_v < 16) {
        return Corrupt(file_name, where() + ".length " + std::to_string(length_v) +
                                      " is smaller than a framed record (16 bytes)");
      }
      if (start_v > std::numeric_limits<uint64_t>::max() - length_v) {
        return Corrupt(file_name, where() + ": start_idx + length overflows");
      }
      index.tensor_payload.push_back(IndexEntry{name->get<std::string>(), start_v, length_v});
    }
    if (!index.tensor_payload.empty() && !index.event_file_name) {
      return Corrupt(file_name, "tensor_payload without meta.event_file_name");
    }
  }

  if (shapes_it != doc.end()) {
    if (!shapes_it->is_array()) return Corrupt(file_name, "shape_payload is not a list");
    index.shape_payload.reserve(shapes_it->size());
    for (const Json& entry : *shapes_it) {
      const auto where = [&index] { return "shape_payload[" + std::to_string(index.shape_payload.size()) + "]"; };
      if (!entry.is_object()) return Corrupt(file_name, where() + " is not an object");
      const auto name = entry.find("tensorname");
      if (name == entry.end() || !name->is_string()) {
        return Corrupt(file_name, where() + ".tensorname is missing or not a string");
      }
      ShapeEntry shape;
      shape.tensor_name = name->get<std::string>();
      shape.original_name = shape.tensor_name;
      if (const auto orig = entry.find("originalname"); orig != entry.end() && !orig->is_null()) {
        if (!orig->is_string()) return Corrupt(file_name, where() + ".originalname is not a string");
        shape.original_name = orig->get<std::string>();
      }
      const auto dims = entry.find("shape");
      if (dims == entry.end() || !dims->is_array()) {
        return Corrupt(file_name, where() + ".shape is missing or not a list");
      }
      for (const Json& dim : *dims) {
        uint64_t d = 0;
        if (!NonNegativeInt(dim, &d) || d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          return Corrupt(file_name, where() + ".shape has a dimension that is not a non-negative integer");
        }
        shape.shape.push_back(static_cast<int64_t>(d));
      }
      index.shape_payload.push_back(std::move(shape));
    }
  }
  return index;
}

std::string DescribeIndexResult(const StatusOr<IndexFile>& r) {
  if (!r.ok()) return "error " + r.status().ToString();
  std::string out = "mode " + std::to_string(static_cast<int>(r->mode)) + " step " + std::to_string(r->mode_step) +
                    " file " + r->event_file_name.value_or("<none>");
  for (const IndexEntry& e : r->tensor_payload) {
    out += " | t " + e.tensor_name + " " + std::to_string(e.start_idx) + " " + std::to_string(e.length);
  }
  for (const ShapeEntry& s : r->shape_payload) {
    out += " | s " + s.tensor_name + " / " + s.original_name + " [";
    for (int64_t d : s.shape) out += std::to_string(d) + ",";
    out += "]";
  }
  return out;
}

}  // namespace litmus::testing
