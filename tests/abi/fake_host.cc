// fake_host.cc — the in-memory host table of fake_host.h. Each function records its call, checks
// its arguments like the engine must, and records error text for every non-OK status (the ABI's
// "query functions have already recorded a message" rule). Thread-safety: none.
#include "fake_host.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <set>

namespace litmus::testing {
namespace {

FakeHost& HostOf(litmus_ctx_t* ctx) { return *ctx->host; }

litmus_status_t Fail(litmus_ctx_t* ctx, litmus_status_t status, const std::string& message) {
  ctx->error_set = true;
  ctx->error = message;
  return status;
}

void Count(litmus_ctx_t* ctx, const char* function) { ++HostOf(ctx).calls[function]; }

std::string ModeText(int32_t mode) {
  switch (mode) {
    case LITMUS_MODE_TRAIN: return "TRAIN";
    case LITMUS_MODE_EVAL: return "EVAL";
    case LITMUS_MODE_PREDICT: return "PREDICT";
    case LITMUS_MODE_GLOBAL: return "GLOBAL";
    default: return "mode " + std::to_string(mode);
  }
}

FakeTrial* TrialAt(litmus_ctx_t* ctx, uint32_t trial) {
  std::vector<FakeTrial>& trials = HostOf(ctx).trials;
  return trial < trials.size() ? &trials[trial] : nullptr;
}

std::string Text(litmus_str_t text) { return std::string(View(text)); }

void SetError(litmus_ctx_t* ctx, const char* message, size_t size) {
  Count(ctx, "set_error");
  ctx->error_set = true;
  ctx->error.assign(message, size);
}

void Log(litmus_ctx_t* ctx, int32_t level, const char* message, size_t size) {
  Count(ctx, "log");
  HostOf(ctx).logs.emplace_back(level, std::string(message, size));
}

void* Alloc(size_t size) { return std::malloc(size); }
void Free(void* pointer) { std::free(pointer); }

uint32_t TrialCount(litmus_ctx_t* ctx) {
  Count(ctx, "trial_count");
  return static_cast<uint32_t>(HostOf(ctx).trials.size());
}

const int64_t* Keep(litmus_ctx_t* ctx, std::vector<int64_t> values) {
  ctx->int_arrays.push_back(std::move(values));
  return ctx->int_arrays.back().data();
}

litmus_status_t Steps(litmus_ctx_t* ctx, uint32_t trial, int32_t mode, const int64_t** steps,
                      size_t* count) {
  Count(ctx, "steps");
  FakeTrial* t = TrialAt(ctx, trial);
  if (t == nullptr) return Fail(ctx, LITMUS_INVALID_ARGUMENT, "no trial " + std::to_string(trial));
  std::vector<int64_t> out;
  for (const auto& [step, s] : t->steps) {
    if (mode == LITMUS_MODE_GLOBAL) out.push_back(step);
    else if (s.mode == mode) out.push_back(s.mode_step);
  }
  *count = out.size();
  *steps = Keep(ctx, std::move(out));
  return LITMUS_OK;
}

litmus_status_t StepMode(litmus_ctx_t* ctx, uint32_t trial, int64_t step, int32_t* mode,
                         int64_t* mode_step) {
  Count(ctx, "step_mode");
  FakeTrial* t = TrialAt(ctx, trial);
  if (t == nullptr) return Fail(ctx, LITMUS_INVALID_ARGUMENT, "no trial " + std::to_string(trial));
  const auto found = t->steps.find(step);
  if (found == t->steps.end()) {
    return Fail(ctx, LITMUS_STEP_UNAVAILABLE, "fake host: step " + std::to_string(step) + " unknown");
  }
  *mode = found->second.mode;
  *mode_step = found->second.mode_step;
  return LITMUS_OK;
}

litmus_status_t GlobalStep(litmus_ctx_t* ctx, uint32_t trial, int32_t mode, int64_t mode_step,
                           int64_t* step) {
  Count(ctx, "global_step");
  FakeTrial* t = TrialAt(ctx, trial);
  if (t == nullptr) return Fail(ctx, LITMUS_INVALID_ARGUMENT, "no trial " + std::to_string(trial));
  for (const auto& [global, s] : t->steps) {
    if (s.mode == mode && s.mode_step == mode_step) {
      *step = global;
      return LITMUS_OK;
    }
  }
  return Fail(ctx, LITMUS_STEP_UNAVAILABLE,
              "fake host: mode step " + std::to_string(mode_step) + " of " + ModeText(mode) +
                  " unknown");
}

litmus_status_t Workers(litmus_ctx_t* ctx, uint32_t trial, const litmus_str_t** workers,
                        size_t* count) {
  Count(ctx, "workers");
  FakeTrial* t = TrialAt(ctx, trial);
  if (t == nullptr) return Fail(ctx, LITMUS_INVALID_ARGUMENT, "no trial " + std::to_string(trial));
  std::set<std::string> names;
  for (const auto& [step, s] : t->steps) {
    for (const auto& [worker, tensors] : s.workers) names.insert(worker);
  }
  // The names must outlive the call: keep them in the trial-independent, process-lifetime pool.
  static std::set<std::string> pool;
  std::vector<litmus_str_t> out;
  for (const std::string& name : names) {
    const std::string& kept = *pool.insert(name).first;
    out.push_back({kept.data(), kept.size()});
  }
  ctx->str_arrays.push_back(std::move(out));
  *workers = ctx->str_arrays.back().data();
  *count = ctx->str_arrays.back().size();
  return LITMUS_OK;
}

bool EverSaved(const FakeTrial& t, const std::string& name) {
  for (const auto& [step, s] : t.steps) {
    for (const auto& [worker, tensors] : s.workers) {
      if (tensors.count(name) != 0) return true;
    }
  }
  return false;
}

// re.search for the regexes the tests use: a literal, optionally anchored with a leading '^'.
// (std::regex trips GCC 12's -Wmaybe-uninitialized under sanitizers.)
bool SearchLiteral(const std::string& regex, const std::string& name) {
  if (regex.empty()) return true;
  if (regex[0] == '^') return name.compare(0, regex.size() - 1, regex, 1) == 0;
  return name.find(regex) != std::string::npos;
}

litmus_status_t TensorNames(litmus_ctx_t* ctx, uint32_t trial, const litmus_tensor_query_t* query,
                            const litmus_str_t** names, size_t* count) {
  Count(ctx, "tensor_names");
  FakeTrial* t = TrialAt(ctx, trial);
  if (t == nullptr) return Fail(ctx, LITMUS_INVALID_ARGUMENT, "no trial " + std::to_string(trial));
  if (query == nullptr || query->struct_size < sizeof(litmus_tensor_query_t)) {
    return Fail(ctx, LITMUS_INVALID_ARGUMENT, "fake host: bad tensor query");
  }
  const std::string regex = Text(query->regex);
  if (regex.find_first_of(".*+?()[]{}|\\$") != std::string::npos ||
      regex.find('^', 1) != std::string::npos) {
    return Fail(ctx, LITMUS_INVALID_ARGUMENT, "fake host: unsupported regex " + regex);
  }
  const std::string collection = Text(query->collection);
  std::set<std::string> matched;
  for (const auto& [step, s] : t->steps) {
    if (query->step >= 0 && step != query->step) continue;
    if (query->mode != 0 && s.mode != query->mode) continue;
    for (const auto& [worker, tensors] : s.workers) {
      for (const auto& [name, value] : tensors) {
        if (!collection.empty()) {
          const auto c = t->collections.find(collection);
          if (c == t->collections.end() ||
              std::find(c->second.begin(), c->second.end(), name) == c->second.end()) {
            continue;
          }
        }
        if (!SearchLiteral(regex, name)) continue;
        matched.insert(name);
      }
    }
  }
  static std::set<std::string> pool;
  std::vector<litmus_str_t> out;
  for (const std::string& name : matched) {
    const std::string& kept = *pool.insert(name).first;
    out.push_back({kept.data(), kept.size()});
  }
  ctx->str_arrays.push_back(std::move(out));
  *names = ctx->str_arrays.back().data();
  *count = ctx->str_arrays.back().size();
  return LITMUS_OK;
}

litmus_status_t TensorSteps(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int32_t mode,
                            const int64_t** steps, size_t* count) {
  Count(ctx, "tensor_steps");
  FakeTrial* t = TrialAt(ctx, trial);
  if (t == nullptr) return Fail(ctx, LITMUS_INVALID_ARGUMENT, "no trial " + std::to_string(trial));
  const std::string tensor = Text(name);
  if (!EverSaved(*t, tensor)) {
    return Fail(ctx, LITMUS_TENSOR_UNAVAILABLE, "fake host: tensor " + tensor + " was never saved");
  }
  std::vector<int64_t> out;
  for (const auto& [step, s] : t->steps) {
    for (const auto& [worker, tensors] : s.workers) {
      if (tensors.count(tensor) == 0) continue;
      if (mode == LITMUS_MODE_GLOBAL) out.push_back(step);
      else if (s.mode == mode) out.push_back(s.mode_step);
      break;
    }
  }
  *count = out.size();
  *steps = Keep(ctx, std::move(out));
  return LITMUS_OK;
}

// Finds the value of (tensor, step, mode, worker) with the ABI's outcomes.
litmus_status_t Find(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step,
                     int32_t mode, litmus_str_t worker, const FakeValue** value,
                     const FakeStep** found_step, int64_t* global) {
  FakeTrial* t = TrialAt(ctx, trial);
  if (t == nullptr) return Fail(ctx, LITMUS_INVALID_ARGUMENT, "no trial " + std::to_string(trial));
  const std::string tensor = Text(name);
  if (!EverSaved(*t, tensor)) {
    return Fail(ctx, LITMUS_TENSOR_UNAVAILABLE, "fake host: tensor " + tensor + " was never saved");
  }
  const FakeStep* s = nullptr;
  for (const auto& [g, candidate] : t->steps) {
    if ((mode == LITMUS_MODE_GLOBAL && g == step) ||
        (mode != LITMUS_MODE_GLOBAL && candidate.mode == mode && candidate.mode_step == step)) {
      s = &candidate;
      *global = g;
      break;
    }
  }
  if (s == nullptr) {
    const int64_t last = t->steps.empty() ? -1 : t->steps.rbegin()->first;
    if (step > last && t->ended) {
      return Fail(ctx, LITMUS_NO_MORE_DATA, "fake host: no step " + std::to_string(step) +
                                                " after the end of training");
    }
    if (step > last) {
      return Fail(ctx, LITMUS_NOT_YET_AVAILABLE,
                  "fake host: step " + std::to_string(step) + " not yet available");
    }
    return Fail(ctx, LITMUS_STEP_UNAVAILABLE,
                "fake host: step " + std::to_string(step) + " of " + ModeText(mode) + " not saved");
  }
  const std::map<std::string, FakeValue>* tensors = nullptr;
  if (worker.size == 0) {
    for (const auto& [w, values] : s->workers) {
      if (values.count(tensor) != 0) {
        tensors = &values;
        break;
      }
    }
  } else {
    const auto w = s->workers.find(Text(worker));
    if (w == s->workers.end()) {
      return Fail(ctx, LITMUS_INVALID_WORKER, "fake host: no worker " + Text(worker));
    }
    tensors = &w->second;
  }
  const auto v = tensors == nullptr ? std::map<std::string, FakeValue>::const_iterator()
                                    : tensors->find(tensor);
  if (tensors == nullptr || v == tensors->end()) {
    return Fail(ctx, LITMUS_TENSOR_UNAVAILABLE_FOR_STEP,
                "fake host: tensor " + tensor + " not saved at step " + std::to_string(step));
  }
  *value = &v->second;
  *found_step = s;
  return LITMUS_OK;
}

size_t ElementSize(int32_t dtype) {
  switch (dtype) {
    case LITMUS_DTYPE_FLOAT64:
    case LITMUS_DTYPE_INT64: return 8;
    case LITMUS_DTYPE_STRING: return 0;
    default: return 4;
  }
}

litmus_status_t TensorValue(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step,
                            int32_t mode, litmus_str_t worker, litmus_tensor_view_t* out) {
  Count(ctx, "tensor_value");
  const FakeValue* value = nullptr;
  const FakeStep* s = nullptr;
  int64_t global = 0;
  const litmus_status_t status = Find(ctx, trial, name, step, mode, worker, &value, &s, &global);
  if (status != LITMUS_OK) return status;
  if (!value->has_value) {
    return Fail(ctx, LITMUS_TENSOR_UNAVAILABLE_FOR_STEP,
                "fake host: only reductions of " + Text(name) + " saved at step " +
                    std::to_string(step));
  }
  litmus_tensor_view_t view;
  std::memset(&view, 0, sizeof(view));
  view.struct_size = sizeof(view);
  view.dtype = value->dtype;
  view.rank = static_cast<uint32_t>(value->shape.size());
  view.shape = value->shape.empty() ? nullptr : value->shape.data();
  int64_t elements = 1;
  for (const int64_t d : value->shape) elements *= d;
  view.num_elements = elements;
  if (value->dtype == LITMUS_DTYPE_STRING) {
    std::vector<litmus_str_t> strings;
    for (const std::string& text : value->strings) strings.push_back({text.data(), text.size()});
    ctx->str_arrays.push_back(std::move(strings));
    view.strings = ctx->str_arrays.back().data();
  } else {
    view.data = elements == 0 ? nullptr : value->bytes.data();
    view.byte_size = value->bytes.size();
  }
  view.step = global;
  view.mode = s->mode;
  view.mode_step = s->mode_step;
  // Write no more than the caller's struct_size, and say how much was written.
  const size_t size = std::min<size_t>(out->struct_size, sizeof(view));
  view.struct_size = static_cast<uint32_t>(size);
  std::memcpy(out, &view, size);
  return LITMUS_OK;
}

litmus_status_t TensorReduction(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step,
                                int32_t mode, int32_t reduction, uint32_t abs, litmus_str_t worker,
                                double* out) {
  Count(ctx, "tensor_reduction");
  const FakeValue* value = nullptr;
  const FakeStep* s = nullptr;
  int64_t global = 0;
  const litmus_status_t status = Find(ctx, trial, name, step, mode, worker, &value, &s, &global);
  if (status != LITMUS_OK) return status;
  const auto saved = value->saved_reductions.find({reduction, abs != 0});
  if (saved != value->saved_reductions.end()) {
    *out = saved->second;
    return LITMUS_OK;
  }
  if (!value->has_value) {
    return Fail(ctx, LITMUS_TENSOR_UNAVAILABLE_FOR_STEP,
                "fake host: reduction not saved for " + Text(name));
  }
  std::vector<double> xs;
  const size_t element = ElementSize(value->dtype);
  for (size_t i = 0; element > 0 && i + element <= value->bytes.size(); i += element) {
    double x = 0;
    if (value->dtype == LITMUS_DTYPE_FLOAT32) {
      float f;
      std::memcpy(&f, value->bytes.data() + i, sizeof(f));
      x = f;
    } else if (value->dtype == LITMUS_DTYPE_FLOAT64) {
      std::memcpy(&x, value->bytes.data() + i, sizeof(x));
    } else {
      return Fail(ctx, LITMUS_INTERNAL, "fake host: reductions of float tensors only");
    }
    xs.push_back(abs != 0 ? std::fabs(x) : x);
  }
  if (xs.empty() && reduction != LITMUS_REDUCTION_SUM) {
    return Fail(ctx, LITMUS_INVALID_ARGUMENT, "fake host: reduction of an empty tensor");
  }
  double sum = 0;
  for (const double x : xs) sum += x;
  const double mean = xs.empty() ? 0 : sum / static_cast<double>(xs.size());
  switch (reduction) {
    case LITMUS_REDUCTION_MIN: *out = *std::min_element(xs.begin(), xs.end()); break;
    case LITMUS_REDUCTION_MAX: *out = *std::max_element(xs.begin(), xs.end()); break;
    case LITMUS_REDUCTION_MEAN: *out = mean; break;
    case LITMUS_REDUCTION_SUM: *out = sum; break;
    case LITMUS_REDUCTION_L2: {
      double squares = 0;
      for (const double x : xs) squares += x * x;
      *out = std::sqrt(squares);
      break;
    }
    default: return Fail(ctx, LITMUS_INVALID_ARGUMENT, "fake host: reduction not implemented");
  }
  return LITMUS_OK;
}

litmus_status_t TensorShape(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step,
                            int32_t mode, litmus_str_t worker, const int64_t** shape,
                            uint32_t* rank) {
  Count(ctx, "tensor_shape");
  const FakeValue* value = nullptr;
  const FakeStep* s = nullptr;
  int64_t global = 0;
  const litmus_status_t status = Find(ctx, trial, name, step, mode, worker, &value, &s, &global);
  if (status != LITMUS_OK) return status;
  *rank = static_cast<uint32_t>(value->shape.size());
  *shape = Keep(ctx, value->shape);
  return LITMUS_OK;
}

litmus_status_t RequireTensorEx(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name,
                                const int64_t* steps, size_t step_count, uint32_t flags) {
  Count(ctx, "require_tensor_ex");
  if (!ctx->in_set_required_tensors) {
    return Fail(ctx, LITMUS_INVALID_ARGUMENT, "require_tensor_ex outside set_required_tensors");
  }
  FakeTrial* t = TrialAt(ctx, trial);
  if (t == nullptr) return Fail(ctx, LITMUS_INVALID_ARGUMENT, "no trial " + std::to_string(trial));
  const bool regex = (flags & LITMUS_REQUIRE_REGEX) != 0;
  if (!regex && !EverSaved(*t, Text(name))) {
    return Fail(ctx, LITMUS_TENSOR_UNAVAILABLE, "fake host: Tensor " + Text(name) + " was not saved.");
  }
  HostOf(ctx).requirements.push_back(FakeRequirement{trial, Text(name),
                                                     std::vector<int64_t>(steps, steps + step_count), regex,
                                                     (flags & LITMUS_REQUIRE_REDUCTIONS_ONLY) != 0});
  return LITMUS_OK;
}

litmus_status_t RequireTensor(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name,
                              const int64_t* steps, size_t step_count, uint32_t should_match_regex) {
  Count(ctx, "require_tensor");
  if (!ctx->in_set_required_tensors) {
    return Fail(ctx, LITMUS_INVALID_ARGUMENT, "require_tensor outside set_required_tensors");
  }
  FakeTrial* t = TrialAt(ctx, trial);
  if (t == nullptr) return Fail(ctx, LITMUS_INVALID_ARGUMENT, "no trial " + std::to_string(trial));
  if (should_match_regex == 0 && !EverSaved(*t, Text(name))) {
    return Fail(ctx, LITMUS_TENSOR_UNAVAILABLE, "fake host: Tensor " + Text(name) + " was not saved.");
  }
  HostOf(ctx).requirements.push_back(FakeRequirement{
      trial, Text(name), std::vector<int64_t>(steps, steps + step_count), should_match_regex != 0});
  return LITMUS_OK;
}

void ReportViolations(litmus_ctx_t* ctx, int64_t count) {
  Count(ctx, "report_violations");
  HostOf(ctx).violations += count;
}

void ReportDetail(litmus_ctx_t* ctx, litmus_str_t key, litmus_str_t json_value) {
  Count(ctx, "report_detail");
  HostOf(ctx).details[Text(key)] = Text(json_value);
}

void ReportSeries(litmus_ctx_t* ctx, litmus_str_t series, litmus_str_t tensor, int64_t step, double value) {
  Count(ctx, "report_series");
  HostOf(ctx).series.push_back({Text(series), Text(tensor), step, value});
}

void ReportThreshold(litmus_ctx_t* ctx, litmus_str_t series, double value, int32_t fires_when) {
  Count(ctx, "report_threshold");
  HostOf(ctx).thresholds[Text(series)][fires_when] = value;
}

void ReportRecommendation(litmus_ctx_t* ctx, litmus_str_t text) {
  Count(ctx, "report_recommendation");
  HostOf(ctx).recommendations.push_back(Text(text));
}

litmus_status_t AddAction(litmus_ctx_t* ctx, litmus_str_t action_json) {
  Count(ctx, "add_action");
  if (ctx->in_set_required_tensors || ctx->in_invoke || ctx->in_poll) {
    return Fail(ctx, LITMUS_INVALID_ARGUMENT, "fake host: add_action outside create");
  }
  const std::string text = Text(action_json);
  if (text.empty() || (text.front() != '{' && text.front() != '[')) {
    return Fail(ctx, LITMUS_INVALID_ARGUMENT, "fake host: add_action: not a JSON object or list: " + text);
  }
  HostOf(ctx).actions.push_back(text);
  return LITMUS_OK;
}

FakeValue FromBytes(int32_t dtype, const void* data, size_t bytes, int64_t elements) {
  FakeValue value;
  value.dtype = dtype;
  value.shape = {elements};
  value.bytes.resize(bytes);
  if (bytes > 0) std::memcpy(value.bytes.data(), data, bytes);
  return value;
}

}  // namespace

FakeValue Floats(const std::vector<float>& values) {
  return FromBytes(LITMUS_DTYPE_FLOAT32, values.data(), values.size() * sizeof(float),
                   static_cast<int64_t>(values.size()));
}

FakeValue Doubles(const std::vector<double>& values) {
  return FromBytes(LITMUS_DTYPE_FLOAT64, values.data(), values.size() * sizeof(double),
                   static_cast<int64_t>(values.size()));
}

FakeValue ReductionOnly(int32_t reduction, bool abs, double value) {
  FakeValue v;
  v.has_value = false;
  v.saved_reductions[{reduction, abs}] = value;
  return v;
}

void FakeTrial::Put(int64_t step, const std::string& tensor, FakeValue value,
                    const std::string& worker) {
  FakeStep& s = steps[step];
  if (s.workers.empty()) s.mode_step = step;
  s.workers[worker][tensor] = std::move(value);
}

FakeHost::FakeHost() {
  std::memset(&table_, 0, sizeof(table_));
  table_.struct_size = sizeof(table_);
  table_.abi_major = LITMUS_ABI_MAJOR;
  table_.abi_minor = LITMUS_ABI_MINOR;
  table_.set_error = SetError;
  table_.log = Log;
  table_.alloc = Alloc;
  table_.free = Free;
  table_.trial_count = TrialCount;
  table_.steps = Steps;
  table_.step_mode = StepMode;
  table_.global_step = GlobalStep;
  table_.workers = Workers;
  table_.tensor_names = TensorNames;
  table_.tensor_steps = TensorSteps;
  table_.tensor_value = TensorValue;
  table_.tensor_reduction = TensorReduction;
  table_.tensor_shape = TensorShape;
  table_.require_tensor = RequireTensor;
  table_.report_violations = ReportViolations;
  table_.report_detail = ReportDetail;
  table_.add_action = AddAction;
  table_.require_tensor_ex = RequireTensorEx;
  table_.report_series = ReportSeries;
  table_.report_threshold = ReportThreshold;
  table_.report_recommendation = ReportRecommendation;
}

litmus_status_t LoadPlugin(const std::string& path, FakeHost& host, litmus_ctx* ctx,
                           const litmus_plugin_api_t** api, std::string* dl_error) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    *dl_error = dlerror();
    return LITMUS_INTERNAL;
  }
  void* symbol = dlsym(handle, LITMUS_PLUGIN_ENTRY_NAME);
  if (symbol == nullptr) {
    *dl_error = "no " LITMUS_PLUGIN_ENTRY_NAME " in " + path;
    return LITMUS_INTERNAL;
  }
  litmus_plugin_entry_fn entry;
  std::memcpy(&entry, &symbol, sizeof(entry));
  return entry(&host.table(), ctx, api);
}

const litmus_rule_descriptor_t* FindRule(const litmus_plugin_api_t* api, std::string_view name) {
  if (api == nullptr || api->rule_count == 0) return nullptr;
  const size_t stride = api->rules[0].struct_size;
  for (size_t i = 0; i < api->rule_count; ++i) {
    const auto* rule = reinterpret_cast<const litmus_rule_descriptor_t*>(
        reinterpret_cast<const unsigned char*>(api->rules) + i * stride);
    if (View(rule->name) == name) return rule;
  }
  return nullptr;
}

std::string_view View(litmus_str_t text) {
  return text.size == 0 ? std::string_view() : std::string_view(text.data, text.size);
}

}  // namespace litmus::testing
