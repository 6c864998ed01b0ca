// WriteTrialDocument: the `litmus inspect --json` document (schema in docs/inspect-json.md),
// written piece by piece: small values go through nlohmann::json, the document around them is
// written by hand so that no more than one (tensor, step) record is held at a time. Key order
// follows the fixtures' expected.json so the two read side by side.
#include "litmus/engine/trial_document.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>

#include "litmus/engine/reductions.h"
#include "litmus/engine/trial_outline.h"

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
    const NonFiniteCounts counts = CountNonFinite(t);
    v["nan_count"] = counts.nan;
    v["posinf_count"] = counts.posinf;
    v["neginf_count"] = counts.neginf;
  }
  return v;
}

bool SameValue(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.is_string()) return a.strings() == b.strings();
  return a.bytes().size() == b.bytes().size() &&
         std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin());
}

// What a record read may fail with without being an expected outcome: corruption or a dtype
// litmus cannot decode. The document stops there (VerifyRecords returns the same errors).
bool IsDamage(const Status& status) {
  return status.code() == StatusCode::kDataLoss || status.code() == StatusCode::kUnimplemented;
}

// tensors.<name>.per_step.<step>.by_worker.<worker>. The raw value is read once and the
// reductions that are not stored are computed from it in one batch (bit for bit what
// Trial::Reduction computes, reductions.h), so a tensor is decoded once however large.
Status WorkerJson(const Trial& trial, const std::string& name, int64_t step, const TensorEntry& entry,
                  const TrialDocumentOptions& options, Json& w) {
  const StatusOr<TensorPtr> value = trial.Value(name, step, Mode::kGlobal, entry.worker);
  if (!value.ok() && !GetTrialError(value.status())) return value.status();

  if (entry.shape) {
    w["shape"] = *entry.shape;
  } else if (value.ok()) {
    w["shape"] = (*value)->shape();
  } else {
    auto shape = trial.Shape(name, step, Mode::kGlobal, entry.worker);
    w["shape"] = shape.ok() ? Json(*shape) : ErrorJson(shape.status());
  }
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

  // Reductions computed from the value read above: every one that is not stored.
  std::vector<ReductionRequest> computed_requests;
  for (layout::Reduction r : layout::kAllReductions) {
    for (bool abs : {false, true}) {
      if (value.ok() && !entry.stored_reductions.contains({r, abs})) computed_requests.push_back({r, abs});
    }
  }
  const std::vector<StatusOr<double>> computed =
      value.ok() ? ComputeReductions(**value, computed_requests) : std::vector<StatusOr<double>>{};
  size_t next_computed = 0;

  Json reductions;
  for (layout::Reduction r : layout::kAllReductions) {
    for (bool abs : {false, true}) {
      std::string key = abs ? "abs_" : "";
      key += layout::ReductionName(r);
      StatusOr<double> result = 0.0;
      if (value.ok() && !entry.stored_reductions.contains({r, abs})) {
        result = computed[next_computed++];
      } else {
        result = trial.Reduction(name, step, r, abs, Mode::kGlobal, entry.worker);
        if (!result.ok() && IsDamage(result.status())) return result.status();
      }
      if (result.ok()) {
        reductions[key] = Json{{"value", FloatJson(*result)}, {"dtype", "float64"}, {"shape", Json::array()}};
      } else {
        reductions[key] = Json{{"value", nullptr}, {"error", ErrorClassName(result.status())}};
      }
    }
  }
  w["reductions"] = std::move(reductions);
  return OkStatus();
}

// tensors.<name>.per_step.<step>; false (nothing to write) if no worker saved the tensor there.
StatusOr<bool> StepJson(const Trial& trial, const std::string& name, int64_t step,
                        const TrialDocumentOptions& options, Json& s) {
  const std::vector<TensorEntry> entries = trial.Entries(name, step);
  if (entries.empty()) return false;
  const auto mode = trial.ModeOfGlobalStep(step);
  s["mode"] = mode ? ModeName(mode->first) : ModeName(entries.front().mode);
  s["mode_step"] = mode ? mode->second : entries.front().mode_step;
  Json workers = Json::array();
  for (const TensorEntry& e : entries) workers.push_back(e.worker);
  s["workers"] = std::move(workers);
  Json by_worker;
  for (const TensorEntry& e : entries) {
    Json w;
    LITMUS_RETURN_IF_ERROR(WorkerJson(trial, name, step, e, options, w));
    by_worker[e.worker] = std::move(w);
  }
  s["by_worker"] = std::move(by_worker);
  return true;
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace); }

// Arrays and objects of numbers written straight to the stream, exactly as Dump() would write
// them (compact, no spaces): a trial with a million steps has lists with a million items, which
// as nlohmann values would cost tens of bytes each.
void WriteSteps(std::ostream& out, const std::vector<int64_t>& steps) {
  out << '[';
  for (size_t i = 0; i < steps.size(); ++i) out << (i ? "," : "") << steps[i];
  out << ']';
}

// Entries(name, step).front()'s (mode, mode step), or nullopt if the tensor has none there.
std::optional<std::pair<Mode, int64_t>> DefaultEntryMode(const Trial& trial, const std::string& name, int64_t step) {
  for (const TensorEntry& entry : trial.Entries(name, step)) return std::pair(entry.mode, entry.mode_step);
  return std::nullopt;
}
std::optional<std::pair<Mode, int64_t>> DefaultEntryMode(const TrialOutline& outline, const std::string& name,
                                                         int64_t step) {
  return outline.TensorModeAt(name, step);
}

// modes.<mode>: its mode steps (complete), their global steps, and every known mode step.
struct ModeSteps {
  std::vector<int64_t> mode_steps, including_incomplete;
  std::vector<std::optional<int64_t>> global_steps;
};
ModeSteps StepsOfMode(const Trial& trial, Mode mode) {
  ModeSteps out;
  out.mode_steps = trial.Steps(mode);
  for (int64_t s : out.mode_steps) {
    out.global_steps.push_back(mode == Mode::kGlobal ? std::optional<int64_t>(s) : trial.GlobalStep(mode, s));
  }
  out.including_incomplete = trial.Steps(mode, true);
  return out;
}
ModeSteps StepsOfMode(const TrialOutline& outline, Mode mode) {
  ModeSteps out;
  for (const auto& [mode_step, global] : outline.ModeStepOwners(mode)) {
    out.including_incomplete.push_back(mode_step);
    if (outline.IsStepComplete(global)) {
      out.mode_steps.push_back(mode_step);
      out.global_steps.push_back(global);
    }
  }
  return out;
}

// The tensor's catalog keys (everything but per_step), restricted to the selected steps, as
// Dump() writes the object, without its closing brace (per_step may follow).
template <typename T>
void WriteTensorCatalog(const BasicSelectedTrial<T>& selected, const std::string& name,
                        const std::vector<int64_t>& all_steps, std::ostream& out) {
  const T& trial = selected.trial();
  out << "{\"steps\":";
  WriteSteps(out, selected.FilterSteps(trial.TensorSteps(name)));
  out << ",\"steps_including_incomplete\":";
  WriteSteps(out, all_steps);
  // steps_by_mode: one (mode, mode_step) per global step, the default worker's entry speaking
  // for it; modes in the order they first appear.
  std::vector<std::pair<Mode, int64_t>> modes(all_steps.size(), {Mode::kGlobal, -1});
  std::vector<bool> has_mode(all_steps.size(), false);
  std::vector<Mode> order;
  for (size_t i = 0; i < all_steps.size(); ++i) {
    if (const auto mode = DefaultEntryMode(trial, name, all_steps[i])) {
      modes[i] = *mode;
      has_mode[i] = true;
      if (std::find(order.begin(), order.end(), mode->first) == order.end()) order.push_back(mode->first);
    }
  }
  out << ",\"steps_by_mode\":{";
  for (size_t m = 0; m < order.size(); ++m) {
    out << (m ? "," : "") << '"' << ModeName(order[m]) << "\":[";
    bool first = true;
    for (size_t i = 0; i < all_steps.size(); ++i) {
      if (!has_mode[i] || modes[i].first != order[m]) continue;
      out << (first ? "" : ",") << '[' << modes[i].second << ',' << all_steps[i] << ']';
      first = false;
    }
    out << ']';
  }
  out << "},\"original_name\":null";
}

// A JSON array of numbers written item by item: `[`, then Item() << value for each, `]` when
// destroyed.
class ListWriter {
 public:
  explicit ListWriter(std::ostream& out) : out_(out) { out_ << '['; }
  ~ListWriter() { out_ << ']'; }
  ListWriter(const ListWriter&) = delete;
  ListWriter& operator=(const ListWriter&) = delete;
  std::ostream& Item() {
    if (!first_) out_ << ',';
    first_ = false;
    return out_;
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

// WriteTensorCatalog for an outline, from the tensor's runs of steps: no list of its steps.
void WriteOutlineTensorCatalog(const SelectedOutline& selected, const std::string& name, std::ostream& out) {
  const TrialOutline& outline = selected.trial();
  // (A tensor's steps are known steps: FilterSteps keeps those IncludesStep selects.)
  const auto each_selected = [&](auto&& f) {
    outline.ForEachTensorStep(name, [&](int64_t g) {
      if (selected.IncludesStep(g)) f(g);
    });
  };
  out << "{\"steps\":";
  {
    ListWriter list(out);
    each_selected([&](int64_t g) {
      if (outline.TensorStepComplete(g)) list.Item() << g;
    });
  }
  out << ",\"steps_including_incomplete\":";
  {
    ListWriter list(out);
    each_selected([&](int64_t g) { list.Item() << g; });
  }
  std::vector<Mode> order;  // modes in the order they first appear
  each_selected([&](int64_t g) {
    const auto mode = outline.TensorModeAt(name, g);
    if (mode && std::find(order.begin(), order.end(), mode->first) == order.end()) order.push_back(mode->first);
  });
  out << ",\"steps_by_mode\":{";
  for (size_t m = 0; m < order.size(); ++m) {
    out << (m ? "," : "") << '"' << ModeName(order[m]) << "\":";
    ListWriter list(out);
    each_selected([&](int64_t g) {
      const auto mode = outline.TensorModeAt(name, g);
      if (mode && mode->first == order[m]) list.Item() << '[' << mode->second << ',' << g << ']';
    });
  }
  out << "},\"original_name\":null";
}

std::vector<std::string> Intersect(const std::vector<std::string>& sorted_a, const std::vector<std::string>& sorted_b) {
  std::vector<std::string> out;
  std::set_intersection(sorted_a.begin(), sorted_a.end(), sorted_b.begin(), sorted_b.end(), std::back_inserter(out));
  return out;
}

// Writes the document's frame: `{` + one `"key": value` per line + `}`. Objects whose members
// come one by one (OpenObject ... Member ... CloseObject) put each member on its own line.
class DocumentWriter {
 public:
  explicit DocumentWriter(std::ostream& out) : out_(out) {}

  void Begin() { out_ << '{'; }
  void End() { out_ << "}\n"; }
  void Key(std::string_view key) {
    out_ << (first_key_ ? "" : ",\n") << Dump(Json(std::string(key))) << ": ";
    first_key_ = false;
  }
  void Field(std::string_view key, const Json& value) {
    Key(key);
    out_ << Dump(value);
  }
  // An object-valued field whose members follow, one per line.
  void OpenObject(std::string_view key) {
    Key(key);
    out_ << '{';
    first_member_ = true;
  }
  void MemberKey(std::string_view key) {
    out_ << (first_member_ ? "\n" : ",\n") << Dump(Json(std::string(key))) << ": ";
    first_member_ = false;
  }
  void Member(std::string_view key, const Json& value) {
    MemberKey(key);
    out_ << Dump(value);
  }
  void CloseObject() { out_ << (first_member_ ? "}" : "\n}"); }
  std::ostream& raw() { return out_; }
  Status status() const {
    return out_.good() ? OkStatus() : UnavailableError("cannot write the document (output closed or full)");
  }

 private:
  std::ostream& out_;
  bool first_key_ = true;
  bool first_member_ = true;
};

std::string TrialName(const std::string& root) {
  std::string name = std::filesystem::path(root).filename().string();
  if (name.empty()) name = std::filesystem::path(root).parent_path().filename().string();
  return name;
}

Json SelectionJson(const TrialSelection& s) {
  Json j;
  j["tensor_regex"] = s.tensor_regex;
  j["collections"] = s.collections;
  j["mode"] = s.mode ? Json(ModeName(*s.mode)) : Json(nullptr);
  if (s.steps) {
    const bool open_begin = s.steps->begin == std::numeric_limits<int64_t>::min();
    const bool open_end = s.steps->end == std::numeric_limits<int64_t>::max();
    j["steps"] = Json{{"begin", open_begin ? Json(nullptr) : Json(s.steps->begin)},
                      {"end", open_end ? Json(nullptr) : Json(s.steps->end)}};
  } else {
    j["steps"] = nullptr;
  }
  return j;
}

}  // namespace

std::string ErrorClassName(const Status& status) {
  if (auto error = GetTrialError(status)) return std::string(TrialErrorName(*error));
  return std::string(StatusCodeName(status.code()));
}

DamageReport FindDamagedRecords(const SelectedTrial& selected, size_t max_listed) {
  const Trial& trial = selected.trial();
  DamageReport report;
  const auto damaged = [&](const Status& status) {
    ++report.count;
    if (report.listed.size() < max_listed) report.listed.push_back(status);
    return report.listed.size() >= max_listed && max_listed == 1;  // VerifyRecords: the first is enough
  };
  for (const std::string& name : selected.tensor_names()) {
    for (int64_t step : selected.FilterSteps(trial.TensorSteps(name, /*include_incomplete=*/true))) {
      for (const TensorEntry& entry : trial.Entries(name, step)) {
        if (entry.location) {
          auto value = trial.Value(name, step, Mode::kGlobal, entry.worker);
          if (!value.ok() && IsDamage(value.status()) && damaged(value.status())) return report;
        }
        for (const auto& [key, location] : entry.stored_reductions) {
          auto r = trial.Reduction(name, step, key.first, key.second, Mode::kGlobal, entry.worker);
          if (!r.ok() && IsDamage(r.status()) && damaged(r.status())) return report;
        }
      }
      trial.Release({{name, step}});
    }
  }
  return report;
}

Status VerifyRecords(const SelectedTrial& selected) {
  const DamageReport report = FindDamagedRecords(selected, 1);
  return report.listed.empty() ? OkStatus() : report.listed.front();
}

namespace {

// per_step: for an outline with values, writes each tensor's per_step members (a Trial's
// document reads them itself).
template <typename T>
Status WriteDocument(const BasicSelectedTrial<T>& selected, const TrialDocumentOptions& options, std::ostream& out,
                     const PerStepWriter* per_step = nullptr) {
  const T& trial = selected.trial();
  DocumentWriter doc(out);
  doc.Begin();
  doc.Field("trial", TrialName(trial.root()));
  if (!selected.selection().SelectsEverything()) doc.Field("selection", SelectionJson(selected.selection()));
  doc.Field("training_job_end_marker_present", trial.end_marker_seen());
  if constexpr (std::is_same_v<T, TrialOutline>) {
    // (Streamed from the outline's runs: no list of every step.)
    for (const bool include_incomplete : {false, true}) {
      doc.Key(include_incomplete ? "steps_including_incomplete" : "steps");
      ListWriter list(out);
      trial.ForEachStep([&](int64_t g, bool complete) {
        if (include_incomplete || complete) list.Item() << g;
      });
    }
  } else {
    doc.Key("steps");
    WriteSteps(out, trial.Steps());
    doc.Key("steps_including_incomplete");
    WriteSteps(out, trial.Steps(Mode::kGlobal, true));
  }
  doc.Field("loaded_all_steps", trial.loaded_all_steps());
  doc.Field("workers", trial.workers());
  doc.Field("num_workers_from_collections", trial.num_workers());
  doc.Field("last_complete_step", trial.last_complete_step());

  doc.OpenObject("modes");
  for (Mode mode : kAllModes) {
    if constexpr (std::is_same_v<T, TrialOutline>) {
      doc.MemberKey(ModeName(mode));
      const char* keys[] = {"{\"mode_steps\":", ",\"global_steps\":", ",\"mode_steps_including_incomplete\":"};
      for (int pass = 0; pass < 3; ++pass) {
        out << keys[pass];
        ListWriter list(out);
        trial.ForEachModeStep(mode, [&](int64_t mode_step, int64_t g) {
          if (pass == 2) {
            list.Item() << mode_step;
          } else if (trial.IsStepComplete(g)) {
            list.Item() << (pass == 0 ? mode_step : g);
          }
        });
      }
      out << '}';
      continue;
    }
    const ModeSteps m = StepsOfMode(trial, mode);
    doc.MemberKey(ModeName(mode));
    out << "{\"mode_steps\":";
    WriteSteps(out, m.mode_steps);
    out << ",\"global_steps\":[";
    for (size_t i = 0; i < m.global_steps.size(); ++i) {
      out << (i ? "," : "");
      if (m.global_steps[i]) {
        out << *m.global_steps[i];
      } else {
        out << "null";
      }
    }
    out << "],\"mode_steps_including_incomplete\":";
    WriteSteps(out, m.including_incomplete);
    out << '}';
  }
  doc.CloseObject();

  doc.Key("global_step_to_mode");
  out << '{';
  bool first_step = true;
  const auto step_to_mode = [&](int64_t g) {
    if (auto m = trial.ModeOfGlobalStep(g)) {
      out << (first_step ? "" : ",") << '"' << g << "\":[\"" << ModeName(m->first) << "\"," << m->second << ']';
      first_step = false;
    }
  };
  if constexpr (std::is_same_v<T, TrialOutline>) {
    trial.ForEachStep([&](int64_t g, bool) { step_to_mode(g); });
  } else {
    for (int64_t g : trial.Steps(Mode::kGlobal, true)) step_to_mode(g);
  }
  out << '}';

  const std::vector<std::string>& names = selected.tensor_names();
  doc.Field("tensor_names", names);
  Json by_mode;
  for (Mode mode : kAllModes) {
    // smdebug raises KeyError for a mode it never saw (GLOBAL always exists).
    if (mode != Mode::kGlobal && !trial.HasMode(mode)) {
      by_mode[std::string(ModeName(mode))] = Json{{"error", "KeyError"}};
    } else {
      by_mode[std::string(ModeName(mode))] =
          mode == Mode::kGlobal ? Json(names) : Json(Intersect(trial.TensorNamesForMode(mode), names));
    }
  }
  doc.Field("tensor_names_by_mode", by_mode);
  by_mode = nullptr;

  doc.OpenObject("tensor_names_by_step");
  for (int64_t g : selected.steps()) {
    std::vector<std::string> at_step = trial.TensorNamesAtStep(g);
    if (!selected.selection().SelectsEverything()) {
      std::sort(at_step.begin(), at_step.end());
      at_step = Intersect(at_step, names);
    }
    doc.Member(std::to_string(g), at_step);
  }
  doc.CloseObject();
  LITMUS_RETURN_IF_ERROR(doc.status());

  doc.OpenObject("collections");
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
    doc.Member(name, j);
  }
  doc.CloseObject();

  // tensors: per tensor one line with its catalog, then (with values) one line per step record.
  doc.OpenObject("tensors");
  for (const std::string& name : names) {
    doc.MemberKey(name);
    if constexpr (std::is_same_v<T, TrialOutline>) {
      WriteOutlineTensorCatalog(selected, name, out);
      if (per_step != nullptr) {
        out << ", \"per_step\": {";
        LITMUS_RETURN_IF_ERROR((*per_step)(static_cast<size_t>(&name - names.data()), out));
        out << '}';
      }
      out << '}';
      LITMUS_RETURN_IF_ERROR(doc.status());
      continue;
    }
    const std::vector<int64_t> all_steps = selected.FilterSteps(trial.TensorSteps(name, /*include_incomplete=*/true));
    WriteTensorCatalog(selected, name, all_steps, out);
    if constexpr (std::is_same_v<T, Trial>) {
      if (options.include_values) {
        out << ", \"per_step\": {";
        // (The first member's ",\n" becomes "\n", as the folder-at-a-time writer does it.)
        std::ostringstream first;
        size_t next = 0;
        for (; next < all_steps.size() && first.tellp() == 0; ++next) {
          LITMUS_RETURN_IF_ERROR(WriteStepRecords(trial, name, std::span(all_steps).subspan(next, 1), options, first));
        }
        const std::string first_record = std::move(first).str();
        if (!first_record.empty()) out << std::string_view(first_record).substr(1);
        LITMUS_RETURN_IF_ERROR(WriteStepRecords(trial, name, std::span(all_steps).subspan(next), options, out));
        out << '}';
      }
    }
    out << '}';
    LITMUS_RETURN_IF_ERROR(doc.status());
  }
  doc.CloseObject();
  doc.End();
  out.flush();
  return doc.status();
}

}  // namespace

Status WriteTrialDocument(const SelectedTrial& selected, const TrialDocumentOptions& options, std::ostream& out) {
  return WriteDocument(selected, options, out);
}

Status WriteTrialDocument(const SelectedOutline& selected, const TrialDocumentOptions& options, std::ostream& out) {
  if (options.include_values) {
    return InvalidArgumentError("an outline has no record locations: its document describes only the catalog");
  }
  return WriteDocument(selected, options, out);
}

Status WriteTrialDocument(const SelectedOutline& selected, const TrialDocumentOptions& options,
                          const PerStepWriter& per_step, std::ostream& out) {
  return WriteDocument(selected, options, out, &per_step);
}

Status WriteStepRecords(const Trial& trial, const std::string& name, std::span<const int64_t> steps,
                        const TrialDocumentOptions& options, std::ostream& out) {
  for (int64_t step : steps) {
    Json s;
    StatusOr<bool> written = StepJson(trial, name, step, options, s);
    trial.Release({{name, step}});  // decoded values are not needed again
    LITMUS_RETURN_IF_ERROR(written.status());
    if (!*written) continue;
    out << ",\n" << Dump(Json(std::to_string(step))) << ": " << Dump(s);
    if (!out.good()) return UnavailableError("cannot write the document (output closed or full)");
  }
  return OkStatus();
}

StatusOr<std::string> BuildTrialDocument(const Trial& trial, const TrialDocumentOptions& options) {
  std::ostringstream out;
  LITMUS_RETURN_IF_ERROR(WriteTrialDocument(SelectedTrial::All(trial), options, out));
  return out.str();
}

}  // namespace litmus
