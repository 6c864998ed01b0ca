// BuildTrialDocument: the `litmus inspect --json` document (schema in docs/inspect-json.md).
// Key order follows the fixtures' expected.json so the two read side by side.
#include "litmus/engine/trial_document.h"

#include <openssl/evp.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "litmus/engine/reductions.h"

namespace litmus {
namespace {

using Json = nlohmann::ordered_json;

std::string_view TrialErrorName(TrialError error) {
  switch (error) {
    case TrialError::kTensorUnavailable: return "TensorUnavailable";
    case TrialError::kTensorUnavailableForStep: return "TensorUnavailableForStep";
    case TrialError::kInvalidWorker: return "InvalidWorker";
    case TrialError::kStepNotYetAvailable: return "StepNotYetAvailable";
    case TrialError::kStepUnavailable: return "StepUnavailable";
    case TrialError::kNoMoreData: return "NoMoreData";
  }
  return "Unknown";
}

Json ErrorJson(const Status& status) { return Json{{"error", ErrorClassName(status)}}; }

std::string Sha256Hex(std::span<const std::byte> bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xF]);
  }
  return out;
}

// A double as the fixtures write it: NaN and infinities as strings.
Json FloatJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

size_t Utf8Length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

Json ElementJson(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return FloatJson(t.ElementAsDouble(i));
    case DType::kComplex64:
    case DType::kComplex128: {
      const std::complex<double> z = t.ElementAsComplex(i);
      return Json{{"re", FloatJson(z.real())}, {"im", FloatJson(z.imag())}};
    }
    case DType::kBool:
      return t.ElementAsDouble(i) != 0;
    case DType::kInt8: return t.as<int8_t>()[i];
    case DType::kInt16: return t.as<int16_t>()[i];
    case DType::kInt32: return t.as<int32_t>()[i];
    case DType::kInt64: return t.as<int64_t>()[i];
    case DType::kUInt8: return t.as<uint8_t>()[i];
    case DType::kUInt16: return t.as<uint16_t>()[i];
    case DType::kUInt32: return t.as<uint32_t>()[i];
    case DType::kUInt64: return t.as<uint64_t>()[i];
    case DType::kInvalid:
    case DType::kString:
      return t.strings()[static_cast<size_t>(i)];
  }
  return nullptr;
}

Json ValueJson(const Tensor& t, int64_t max_listed) {
  Json v;
  if (t.is_string()) {
    size_t longest = 0;
    for (const auto& s : t.strings()) longest = std::max(longest, Utf8Length(s));
    v["dtype"] = "<U" + std::to_string(longest);
  } else {
    v["dtype"] = DTypeName(t.dtype());
  }
  v["shape"] = t.shape();
  v["size"] = t.num_elements();
  if (t.num_elements() <= max_listed) {
    Json values = Json::array();
    for (int64_t i = 0; i < t.num_elements(); ++i) values.push_back(ElementJson(t, i));
    v["values"] = std::move(values);
  }
  if (t.is_string()) return v;
  v["sha256_le_c_order"] = Sha256Hex(t.bytes());
  if (IsFloating(t.dtype()) || IsComplex(t.dtype())) {
    int64_t nan = 0, posinf = 0, neginf = 0;
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const std::complex<double> z = t.ElementAsComplex(i);
      nan += std::isnan(z.real()) || std::isnan(z.imag());
      posinf += (std::isinf(z.real()) && z.real() > 0) || (std::isinf(z.imag()) && z.imag() > 0);
      neginf += (std::isinf(z.real()) && z.real() < 0) || (std::isinf(z.imag()) && z.imag() < 0);
    }
    v["nan_count"] = nan;
    v["posinf_count"] = posinf;
    v["neginf_count"] = neginf;
  }
  return v;
}

bool SameValue(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.is_string()) return a.strings() == b.strings();
  return a.bytes().size() == b.bytes().size() &&
         std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin());
}

Json WorkerJson(const Trial& trial, const std::string& name, int64_t step, const TensorEntry& entry,
                const TrialDocumentOptions& options) {
  Json w;
  auto shape = trial.Shape(name, step, Mode::kGlobal, entry.worker);
  w["shape"] = shape.ok() ? Json(*shape) : ErrorJson(shape.status());

  auto value = trial.Value(name, step, Mode::kGlobal, entry.worker);
  w["value"] = value.ok() ? ValueJson(**value, options.max_listed_values) : ErrorJson(value.status());

  auto via_mode = trial.Value(name, entry.mode_step, entry.mode, entry.worker);
  if (!via_mode.ok()) {
    w["value_via_mode_step_matches"] = ErrorJson(via_mode.status());
  } else {
    w["value_via_mode_step_matches"] = value.ok() && SameValue(**value, **via_mode);
  }

  Json saved = Json::array();
  for (const auto& [key, location] : entry.stored_reductions) {
    saved.push_back(Json::array({layout::ReductionName(key.first), key.second}));
  }
  w["saved_reductions"] = std::move(saved);

  Json reductions;
  for (layout::Reduction r : layout::kAllReductions) {
    for (bool abs : {false, true}) {
      std::string key = abs ? "abs_" : "";
      key += layout::ReductionName(r);
      auto result = trial.Reduction(name, step, r, abs, Mode::kGlobal, entry.worker);
      if (result.ok()) {
        reductions[key] = Json{{"value", FloatJson(*result)}, {"dtype", "float64"}, {"shape", Json::array()}};
      } else {
        reductions[key] = Json{{"value", nullptr}, {"error", ErrorClassName(result.status())}};
      }
    }
  }
  w["reductions"] = std::move(reductions);
  return w;
}

Json TensorJson(const Trial& trial, const std::string& name, const TrialDocumentOptions& options) {
  Json t;
  t["steps"] = trial.TensorSteps(name);
  const std::vector<int64_t> all_steps = trial.TensorSteps(name, /*include_incomplete=*/true);
  t["steps_including_incomplete"] = all_steps;

  Json by_mode = Json::object();
  for (int64_t step : all_steps) {
    for (const TensorEntry& entry : trial.Entries(name, step)) {
      // One (mode, mode_step) per global step; the first worker's entry speaks for it.
      by_mode[std::string(ModeName(entry.mode))].push_back(Json::array({entry.mode_step, step}));
      break;
    }
  }
  t["steps_by_mode"] = std::move(by_mode);
  t["original_name"] = nullptr;
  if (!options.include_values) return t;

  Json per_step = Json::object();
  for (int64_t step : all_steps) {
    const std::vector<TensorEntry> entries = trial.Entries(name, step);
    if (entries.empty()) continue;
    Json s;
    const auto mode = trial.ModeOfGlobalStep(step);
    s["mode"] = mode ? ModeName(mode->first) : ModeName(entries.front().mode);
    s["mode_step"] = mode ? mode->second : entries.front().mode_step;
    Json workers = Json::array();
    for (const TensorEntry& e : entries) workers.push_back(e.worker);
    s["workers"] = std::move(workers);
    Json by_worker;
    for (const TensorEntry& e : entries) by_worker[e.worker] = WorkerJson(trial, name, step, e, options);
    s["by_worker"] = std::move(by_worker);
    per_step[std::to_string(step)] = std::move(s);
  }
  t["per_step"] = std::move(per_step);
  return t;
}

}  // namespace

std::string ErrorClassName(const Status& status) {
  if (auto error = GetTrialError(status)) return std::string(TrialErrorName(*error));
  return std::string(StatusCodeName(status.code()));
}

Status VerifyAllRecords(const Trial& trial) {
  for (const std::string& name : trial.TensorNames()) {
    for (int64_t step : trial.TensorSteps(name, /*include_incomplete=*/true)) {
      for (const TensorEntry& entry : trial.Entries(name, step)) {
        if (entry.location) {
          auto value = trial.Value(name, step, Mode::kGlobal, entry.worker);
          if (!value.ok() && !GetTrialError(value.status())) return value.status();
        }
        for (const auto& [key, location] : entry.stored_reductions) {
          auto r = trial.Reduction(name, step, key.first, key.second, Mode::kGlobal, entry.worker);
          if (!r.ok() && (r.status().code() == StatusCode::kDataLoss ||
                          r.status().code() == StatusCode::kUnimplemented)) {
            return r.status();
          }
        }
      }
    }
  }
  return OkStatus();
}

StatusOr<std::string> BuildTrialDocument(const Trial& trial, const TrialDocumentOptions& options) {
  if (options.include_values) LITMUS_RETURN_IF_ERROR(VerifyAllRecords(trial));
  Json doc;
  doc["trial"] = std::filesystem::path(trial.root()).filename().string();
  if (doc["trial"].get<std::string>().empty()) {
    doc["trial"] = std::filesystem::path(trial.root()).parent_path().filename().string();
  }
  doc["training_job_end_marker_present"] = trial.end_marker_seen();
  doc["steps"] = trial.Steps();
  doc["steps_including_incomplete"] = trial.Steps(Mode::kGlobal, true);
  doc["loaded_all_steps"] = trial.loaded_all_steps();
  doc["workers"] = trial.workers();
  doc["num_workers_from_collections"] = trial.num_workers();
  doc["last_complete_step"] = trial.last_complete_step();

  Json modes;
  for (Mode mode : kAllModes) {
    Json m;
    const std::vector<int64_t> mode_steps = trial.Steps(mode);
    m["mode_steps"] = mode_steps;
    Json global = Json::array();
    for (int64_t s : mode_steps) {
      const auto g = mode == Mode::kGlobal ? std::optional<int64_t>(s) : trial.GlobalStep(mode, s);
      global.push_back(g ? Json(*g) : Json(nullptr));
    }
    m["global_steps"] = std::move(global);
    m["mode_steps_including_incomplete"] = trial.Steps(mode, true);
    modes[std::string(ModeName(mode))] = std::move(m);
  }
  doc["modes"] = std::move(modes);

  Json step_to_mode = Json::object();
  for (int64_t g : trial.Steps(Mode::kGlobal, true)) {
    if (auto m = trial.ModeOfGlobalStep(g)) {
      step_to_mode[std::to_string(g)] = Json::array({ModeName(m->first), m->second});
    }
  }
  doc["global_step_to_mode"] = std::move(step_to_mode);

  const std::vector<std::string> names = trial.TensorNames();
  doc["tensor_names"] = names;
  Json by_mode;
  for (Mode mode : kAllModes) {
    // smdebug raises KeyError for a mode it never saw (GLOBAL always exists).
    if (mode != Mode::kGlobal && !trial.HasMode(mode)) {
      by_mode[std::string(ModeName(mode))] = Json{{"error", "KeyError"}};
    } else {
      by_mode[std::string(ModeName(mode))] =
          mode == Mode::kGlobal ? Json(names) : Json(trial.TensorNamesForMode(mode));
    }
  }
  doc["tensor_names_by_mode"] = std::move(by_mode);
  Json by_step = Json::object();
  for (int64_t g : trial.Steps(Mode::kGlobal, true)) by_step[std::to_string(g)] = trial.TensorNamesAtStep(g);
  doc["tensor_names_by_step"] = std::move(by_step);

  Json collections = Json::object();
  for (const auto& [name, c] : trial.collections()) {
    Json j;
    j["tensor_names"] = c.tensor_names;
    j["include_regex"] = c.include_regex;
    auto members = trial.TensorNamesInCollection(name);
    j["trial_tensor_names"] = members.ok() ? Json(*members) : ErrorJson(members.status());
    if (c.reduction_config) {
      j["reduction_config"] = Json{{"save_raw_tensor", c.reduction_config->save_raw_tensor},
                                   {"reductions", c.reduction_config->reductions},
                                   {"save_shape", c.reduction_config->save_shape}};
    } else {
      j["reduction_config"] = nullptr;
    }
    collections[name] = std::move(j);
  }
  doc["collections"] = std::move(collections);

  Json tensors = Json::object();
  for (const std::string& name : names) tensors[name] = TensorJson(trial, name, options);
  doc["tensors"] = std::move(tensors);
  return doc.dump(options.indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace litmus
