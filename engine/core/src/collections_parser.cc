// Collections JSON parsing with nlohmann_json (collections_parser.h). Parsed without exceptions
// (allow_exceptions=false) and every access is type-checked first.
#include "collections_parser.h"

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "litmus/format/mode.h"
#include "python_regex.h"

namespace litmus {
namespace {

using Json = nlohmann::json;

// Reads a JSON integer that fits int64 into *out. An out-parameter rather than std::optional:
// GCC's -Wmaybe-uninitialized misfires on the latter at -O2.
bool Int(const Json& value, int64_t* out) {
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    *out = value.get<int64_t>();
    return true;
  }
  if (value.is_number_unsigned() && value.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
    *out = static_cast<int64_t>(value.get<uint64_t>());
    return true;
  }
  return false;
}

// Reads `key` of `object` as a list of strings; absent, null or false give an empty list
// (smdebug's Collection.from_dict defaults include_regex to False).
Status StringList(const Json& object, const char* key, std::vector<std::string>* out,
                  const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null() || (it->is_boolean() && !it->get<bool>())) {
    return OkStatus();
  }
  if (!it->is_array()) return DataLossError(where + "." + key + " is not a list");
  for (const Json& item : *it) {
    if (!item.is_string()) return DataLossError(where + "." + key + " has a non-string item");
    out->push_back(item.get<std::string>());
  }
  return OkStatus();
}

Status Bool(const Json& object, const char* key, bool* out, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) return OkStatus();
  if (!it->is_boolean()) return DataLossError(where + "." + key + " is not a boolean");
  *out = it->get<bool>();
  return OkStatus();
}

StatusOr<std::optional<ReductionConfigJson>> ParseReductionConfig(const Json& value,
                                                                  const std::string& where) {
  if (value.is_null()) return std::optional<ReductionConfigJson>();
  if (!value.is_object()) return DataLossError(where + " is neither an object nor null");
  ReductionConfigJson config;
  config.save_raw_tensor = false;  // smdebug's ReductionConfig.from_dict default
  LITMUS_RETURN_IF_ERROR(Bool(value, "save_raw_tensor", &config.save_raw_tensor, where));
  LITMUS_RETURN_IF_ERROR(Bool(value, "save_shape", &config.save_shape, where));
  if (const auto it = value.find("reductions"); it != value.end()) {
    if (!it->is_string()) return DataLossError(where + ".reductions is not a string");
    config.reductions = it->get<std::string>();
    const auto parsed = ParseReductionList(config.reductions);
    if (!parsed.ok()) return DataLossError(where + ": " + parsed.status().message());
  }
  return std::optional<ReductionConfigJson>(std::move(config));
}

StatusOr<ModeSaveConfig> ParseModeSaveConfig(const Json& value, const std::string& where) {
  if (!value.is_object()) return DataLossError(where + " is neither an object nor null");
  ModeSaveConfig config;
  for (const auto& [key, target] : {std::pair{"save_interval", &config.save_interval},
                                    std::pair{"start_step", &config.start_step}}) {
    if (const auto it = value.find(key); it != value.end() && !Int(*it, target)) {
      return DataLossError(where + "." + key + " is not an integer");
    }
  }
  if (const auto it = value.find("end_step"); it != value.end() && !it->is_null()) {
    int64_t end_step = 0;
    if (!Int(*it, &end_step)) return DataLossError(where + ".end_step is neither an integer nor null");
    config.end_step = end_step;
  }
  if (const auto it = value.find("save_steps"); it != value.end()) {
    if (!it->is_array()) return DataLossError(where + ".save_steps is not a list");
    for (const Json& step : *it) {
      int64_t v = 0;
      if (!Int(step, &v)) return DataLossError(where + ".save_steps has a non-integer item");
      config.save_steps.push_back(v);
    }
  }
  return config;
}

StatusOr<CollectionJson> ParseCollection(const std::string& key, const Json& value,
                                         const std::string& where) {
  if (!value.is_object()) return DataLossError(where + " is not an object");
  CollectionJson collection;
  collection.name = key;
  if (const auto it = value.find("name"); it != value.end() && !it->is_null() && !it->is_string()) {
    return DataLossError(where + ".name is not a string");
  }
  LITMUS_RETURN_IF_ERROR(StringList(value, "include_regex", &collection.include_regex, where));
  LITMUS_RETURN_IF_ERROR(StringList(value, "tensor_names", &collection.tensor_names, where));
  LITMUS_RETURN_IF_ERROR(Bool(value, "save_histogram", &collection.save_histogram, where));
  if (const auto it = value.find("reduction_config"); it != value.end()) {
    LITMUS_ASSIGN_OR_RETURN(collection.reduction_config,
                            ParseReductionConfig(*it, where + ".reduction_config"));
  }
  if (const auto it = value.find("save_config"); it != value.end() && !it->is_null()) {
    if (!it->is_object()) return DataLossError(where + ".save_config is neither an object nor null");
    std::map<Mode, std::optional<ModeSaveConfig>> modes;
    for (const auto& [mode_name, mode_value] : it->items()) {
      const std::optional<Mode> mode = ModeFromName(mode_name);
      if (!mode) return DataLossError(where + ".save_config has an unknown mode '" + mode_name + "'");
      if (mode_value.is_null()) {
        modes[*mode] = std::nullopt;
        continue;
      }
      LITMUS_ASSIGN_OR_RETURN(ModeSaveConfig config,
                              ParseModeSaveConfig(mode_value, where + ".save_config." + mode_name));
      modes[*mode] = std::move(config);
    }
    collection.save_config = std::move(modes);
  }
  return collection;
}

std::string_view Trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

StatusOr<std::vector<std::pair<layout::Reduction, bool>>> ParseReductionList(std::string_view reductions) {
  constexpr std::string_view kPlain[] = {"min", "max", "mean", "std", "variance", "sum", "prod"};
  constexpr std::string_view kNorms[] = {"l1", "l2"};
  std::vector<std::pair<layout::Reduction, bool>> out;
  while (true) {
    const size_t comma = reductions.find(',');
    const std::string_view raw = reductions.substr(0, comma);
    std::string_view item = Trim(raw);
    if (!item.empty()) {
      const std::string_view original = item;
      const bool abs = item.starts_with("abs_");
      if (abs) item.remove_prefix(4);
      bool known = false;
      if (item.ends_with("_norm")) {
        item.remove_suffix(5);
        for (const std::string_view n : kNorms) known = known || item == n;
      } else {
        for (const std::string_view r : kPlain) known = known || item == r;
      }
      const std::optional<layout::Reduction> reduction =
          known ? layout::ReductionFromName(item) : std::nullopt;
      if (!reduction) {
        return InvalidArgumentError("unknown reduction '" + std::string(original) + "'");
      }
      out.emplace_back(*reduction, abs);
    }
    if (comma == std::string_view::npos) break;
    reductions.remove_prefix(comma + 1);
  }
  return out;
}

StatusOr<CollectionsFile> ParseCollectionsJson(std::string_view json, std::string_view file_name) {
  const std::string file(file_name);
  const Json doc = Json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return DataLossError(file + ": empty or corrupt collections file (invalid JSON)");
  if (!doc.is_object()) return DataLossError(file + ": collections file is not a JSON object");
  for (const auto& [key, value] : doc.items()) {
    if (key != "collections" && key != "_meta") {
      return DataLossError(file + ": unexpected top-level key '" + key +
                           "' (only \"collections\" and \"_meta\" are allowed)");
    }
  }
  CollectionsFile out;
  const auto meta = doc.find("_meta");
  if (meta == doc.end() || !meta->is_object()) {
    return DataLossError(file + ": \"_meta\" is missing or not an object");
  }
  const auto num_workers = meta->find("num_workers");
  if (num_workers == meta->end() || !Int(*num_workers, &out.num_workers) || out.num_workers < 1) {
    return DataLossError(file + ": _meta.num_workers is not an integer >= 1");
  }

  if (const auto collections = doc.find("collections"); collections != doc.end()) {
    if (!collections->is_object()) return DataLossError(file + ": \"collections\" is not an object");
    for (const auto& [key, value] : collections->items()) {
      auto parsed = ParseCollection(key, value, file + ": collection '" + key + "'");
      if (!parsed.ok()) return parsed.status();
      out.collections.push_back(std::move(parsed).value());
    }
  }
  return out;
}

Collection MakeCollection(const CollectionJson& json, Status* regex_status) {
  Collection collection;
  collection.name = json.name;
  collection.include_regex = json.include_regex;
  collection.tensor_names = json.tensor_names;
  collection.reduction_config = json.reduction_config;
  *regex_status = OkStatus();
  for (const std::string& pattern : json.include_regex) {
    auto compiled = Regex::Compile(pattern);
    if (!compiled.ok()) {
      if (regex_status->ok()) {
        *regex_status = compiled.status().WithContext("collection '" + json.name + "': ");
      }
      continue;
    }
    collection.compiled_regex.push_back(std::move(compiled).value());
  }
  return collection;
}

}  // namespace litmus
