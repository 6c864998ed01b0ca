// The host table over litmus::Trial. Every function is noexcept with its whole body in a
// catch-all (an exception must never unwind into plugin code), validates what the plugin passes,
// and records smdebug's exception text (docs/job-contract.md §5.4) on failure.
// Thread-safety: no global state; see host_api.h.
#include "plugin/host_api.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>

#include "litmus/engine/trial.h"
#include "litmus/format/mode.h"
#include "litmus/format/trial_layout.h"

using litmus::PluginCallPhase;

litmus_ctx::litmus_ctx(std::string tag, std::vector<litmus::Trial*> rule_trials, litmus::RuleReport* rule_report)
    : log_tag(std::move(tag)), trials(std::move(rule_trials)), report(rule_report) {}

void litmus_ctx::BeginCall(PluginCallPhase call_phase, std::vector<litmus::TensorRequirement>* call_requirements) {
  EndCall();
  data_loss.clear();
  phase = call_phase;
  requirements = call_requirements;
  series_mode_step = INT64_MIN;  // (the trial may have learnt a step's mode since the last call)
}

void litmus_ctx::EndCall() {
  phase = PluginCallPhase::kIdle;
  has_error = false;
  error.clear();
  requirements = nullptr;
  requirement_index.Clear();
  int64_arrays.clear();
  string_arrays.clear();
  str_arrays.clear();
  tensors.clear();
}

namespace litmus {
namespace {

// ---- helpers ------------------------------------------------------------------------------------

// Records `message` as the call's error text and returns `status`. Never throws.
litmus_status_t Fail(litmus_ctx_t* ctx, litmus_status_t status, std::string_view message) noexcept {
  try {
    ctx->error.assign(message.data(), message.size());
    ctx->has_error = true;
  } catch (...) {
    ctx->error.clear();
    ctx->has_error = false;  // out of memory: the caller reports "without an error message"
  }
  return status;
}

// Runs `body` for host function `function`, turning any exception into LITMUS_INTERNAL.
template <class Body>
litmus_status_t Guarded(litmus_ctx_t* ctx, const char* function, Body&& body) noexcept {
  if (ctx == nullptr) return LITMUS_INVALID_ARGUMENT;  // nowhere to put a message
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(ctx, LITMUS_INTERNAL, "out of memory in host function");
  } catch (const std::exception& e) {
    try {
      return Fail(ctx, LITMUS_INTERNAL, std::string("internal error in host function ") + function + ": " + e.what());
    } catch (...) {
      return Fail(ctx, LITMUS_INTERNAL, "internal error in host function");
    }
  } catch (...) {
    return Fail(ctx, LITMUS_INTERNAL, "internal error in host function (unknown exception)");
  }
}

// The plugin's string, borrowed for the call; nullopt (after recording LITMUS_INVALID_ARGUMENT)
// for NULL data with a size.
std::optional<std::string_view> ToView(litmus_ctx_t* ctx, litmus_str_t s, const char* function, const char* what) {
  if (s.data == nullptr && s.size > 0) {
    Fail(ctx, LITMUS_INVALID_ARGUMENT,
         std::string(function) + ": " + what + " has NULL data and size " + std::to_string(s.size));
    return std::nullopt;
  }
  return s.size == 0 ? std::string_view() : std::string_view(s.data, s.size);
}

// The same as a std::string.
std::optional<std::string> ToString(litmus_ctx_t* ctx, litmus_str_t s, const char* function, const char* what) {
  const std::optional<std::string_view> view = ToView(ctx, s, function, what);
  if (!view) return std::nullopt;
  return std::string(*view);
}

litmus_str_t ToStr(const std::string& s) { return {s.data(), s.size()}; }

// The rule's trial `index`, or nullptr after recording LITMUS_INVALID_ARGUMENT.
const Trial* GetTrial(litmus_ctx_t* ctx, uint32_t index, const char* function) {
  if (index < ctx->trials.size() && ctx->trials[index] != nullptr) return ctx->trials[index];
  Fail(ctx, LITMUS_INVALID_ARGUMENT,
       std::string(function) + ": trial index " + std::to_string(index) + " out of range (" +
           (ctx->phase == PluginCallPhase::kEntry ? std::string("no trials during the plugin entry")
                                                  : "the rule has " + std::to_string(ctx->trials.size()) +
                                                        " trial(s): 0 = base trial, 1.. = other trials") +
           ")");
  return nullptr;
}

// A LITMUS_MODE_* value, or nullopt after recording LITMUS_INVALID_ARGUMENT.
std::optional<Mode> GetMode(litmus_ctx_t* ctx, int32_t mode, const char* function) {
  std::optional<Mode> m = ModeFromValue(mode);
  if (!m) {
    Fail(ctx, LITMUS_INVALID_ARGUMENT,
         std::string(function) + ": invalid mode " + std::to_string(mode) +
             " (expected LITMUS_MODE_TRAIN=1, EVAL=2, PREDICT=3 or GLOBAL=4)");
  }
  return m;
}

litmus_status_t NullOutput(litmus_ctx_t* ctx, const char* function) {
  return Fail(ctx, LITMUS_INVALID_ARGUMENT, std::string(function) + ": an output pointer is NULL");
}

// Hands `values` to the plugin as a borrowed array.
void Borrow(litmus_ctx_t* ctx, std::vector<int64_t> values, const int64_t** out, size_t* count) {
  const std::vector<int64_t>& kept = ctx->int64_arrays.emplace_back(std::move(values));
  *out = kept.empty() ? nullptr : kept.data();
  *count = kept.size();
}

// Views of strings that outlive the call (the trial's own names): only the array is kept.
void Borrow(litmus_ctx_t* ctx, const std::vector<std::string_view>& values, const litmus_str_t** out, size_t* count) {
  std::vector<litmus_str_t>& strs = ctx->str_arrays.emplace_back();
  strs.reserve(values.size());
  for (const std::string_view s : values) strs.push_back({s.data(), s.size()});
  *out = strs.empty() ? nullptr : strs.data();
  *count = strs.size();
}

void Borrow(litmus_ctx_t* ctx, std::vector<std::string> values, const litmus_str_t** out, size_t* count) {
  const std::vector<std::string>& kept = ctx->string_arrays.emplace_back(std::move(values));
  Borrow(ctx, std::vector<std::string_view>(kept.begin(), kept.end()), out, count);
}

std::string StepOfMode(int64_t step, Mode mode) {
  return std::to_string(step) + " of mode " + std::string(ModeName(mode));
}

// The global step `step` of `mode` stands for, if known.
std::optional<int64_t> ToGlobalStep(const Trial& trial, int64_t step, Mode mode) {
  if (mode == Mode::kGlobal) return step;
  return trial.GlobalStep(mode, step);
}

// Maps a failed Trial::Value/Reduction/Shape to a status and smdebug's exception text.
// `value_hint`: add smdebug's "query the reductions" hint (tensor.value only).
litmus_status_t TrialFailure(litmus_ctx_t* ctx, const Trial& trial, const Status& status, const std::string& name,
                             int64_t step, Mode mode, const std::optional<std::string>& worker, bool value_hint) {
  const std::optional<TrialError> error = GetTrialError(status);
  if (status.code() == StatusCode::kDataLoss && ctx->data_loss.empty()) ctx->data_loss = status.message();
  if (!error) {
    if (status.code() == StatusCode::kInvalidArgument) {
      return Fail(ctx, LITMUS_INVALID_ARGUMENT,
                  "tensor " + name + " at step " + StepOfMode(step, mode) + ": " + status.message());
    }
    return Fail(ctx, LITMUS_INTERNAL, status.ToString());
  }
  switch (*error) {
    case TrialError::kTensorUnavailable:
      return Fail(ctx, LITMUS_TENSOR_UNAVAILABLE, "Tensor " + name + " was not saved.");
    case TrialError::kTensorUnavailableForStep: {
      std::string text = "Value for tensor " + name + " is not available for step " + std::to_string(step) +
                         " with mode " + std::string(ModeName(mode)) + " as it was not saved.";
      if (value_hint) {
        if (const std::optional<int64_t> global = ToGlobalStep(trial, step, mode)) {
          for (const TensorEntry& entry : trial.Entries(name, *global)) {
            if (worker && entry.worker != *worker) continue;
            if (!entry.stored_reductions.empty()) {
              text += "This tensor has reductions saved for this step. You might want to query for the reductions.";
            }
            break;
          }
        }
      }
      return Fail(ctx, LITMUS_TENSOR_UNAVAILABLE_FOR_STEP, text);
    }
    case TrialError::kInvalidWorker:
      return Fail(ctx, LITMUS_INVALID_WORKER, "Invalid Worker: " + worker.value_or(""));
    case TrialError::kStepNotYetAvailable:
      return Fail(ctx, LITMUS_NOT_YET_AVAILABLE, "Step " + StepOfMode(step, mode) + " not yet available");
    case TrialError::kStepUnavailable:
      return Fail(ctx, LITMUS_STEP_UNAVAILABLE,
                  "Step " + StepOfMode(step, mode) + " is not available as it was not saved");
    case TrialError::kNoMoreData: {
      const std::vector<int64_t> known = trial.Steps(mode, /*include_incomplete=*/true);
      return Fail(ctx, LITMUS_NO_MORE_DATA,
                  "Looking for step " + StepOfMode(step, mode) +
                      " and reached end of training. Max step available is " +
                      (known.empty() ? std::string("-1") : std::to_string(known.back())));
    }
  }
  return Fail(ctx, LITMUS_INTERNAL, status.ToString());
}

// Common argument decoding of tensor_value / tensor_reduction / tensor_shape.
struct TensorArgs {
  const Trial* trial = nullptr;
  std::string_view name;  // the plugin's, borrowed for the call
  Mode mode = Mode::kGlobal;
  std::optional<std::string> worker;
};

std::optional<TensorArgs> GetTensorArgs(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int32_t mode,
                                        litmus_str_t worker, const char* function) {
  TensorArgs args;
  args.trial = GetTrial(ctx, trial, function);
  if (args.trial == nullptr) return std::nullopt;
  const std::optional<std::string_view> n = ToView(ctx, name, function, "name");
  if (!n) return std::nullopt;
  args.name = *n;
  std::optional<Mode> m = GetMode(ctx, mode, function);
  if (!m) return std::nullopt;
  args.mode = *m;
  std::optional<std::string> w = ToString(ctx, worker, function, "worker");
  if (!w) return std::nullopt;
  if (!w->empty()) args.worker = std::move(*w);
  return args;
}

// The in-process call's values (CallValues), when the call has them and `args` ask for what they
// hold: the default worker's tensor at a global step. Null otherwise: the trial answers.
const CallValues* CallValuesFor(const litmus_ctx_t* ctx, const TensorArgs& args) {
  return args.mode == Mode::kGlobal && !args.worker ? ctx->call_values : nullptr;
}

int32_t ViewDType(DType dtype) {
  // smdebug stores strings without a dtype (DT_INVALID); the ABI has one string type.
  return IsString(dtype) ? LITMUS_DTYPE_STRING : static_cast<int32_t>(dtype);
}

// ---- the host functions -------------------------------------------------------------------------

void HostSetError(litmus_ctx_t* ctx, const char* message, size_t size) noexcept {
  if (ctx == nullptr) return;
  if (message == nullptr || size == 0) return;  // no text: treated as "no error message"
  Fail(ctx, LITMUS_OK, std::string_view(message, size));
}

void HostLog(litmus_ctx_t* ctx, int32_t level, const char* message, size_t size) noexcept {
  if (ctx == nullptr || (message == nullptr && size > 0)) return;
  try {
    spdlog::level::level_enum spd = spdlog::level::info;
    if (level <= LITMUS_LOG_TRACE) {
      spd = spdlog::level::trace;
    } else if (level == LITMUS_LOG_DEBUG) {
      spd = spdlog::level::debug;
    } else if (level == LITMUS_LOG_INFO) {
      spd = spdlog::level::info;
    } else if (level == LITMUS_LOG_WARNING) {
      spd = spdlog::level::warn;
    } else {
      spd = spdlog::level::err;
    }
    spdlog::log(spd, "{}: {}", ctx->log_tag, std::string_view(message == nullptr ? "" : message, size));
  } catch (...) {
    // Logging never fails a rule.
  }
}

void* HostAlloc(size_t size) noexcept { return std::malloc(size == 0 ? 1 : size); }
void HostFree(void* pointer) noexcept { std::free(pointer); }

uint32_t HostTrialCount(litmus_ctx_t* ctx) noexcept {
  return ctx == nullptr ? 0 : static_cast<uint32_t>(ctx->trials.size());
}

litmus_status_t HostSteps(litmus_ctx_t* ctx, uint32_t trial, int32_t mode, const int64_t** steps,
                          size_t* count) noexcept {
  return Guarded(ctx, "steps", [&]() -> litmus_status_t {
    if (steps == nullptr || count == nullptr) return NullOutput(ctx, "steps");
    const Trial* t = GetTrial(ctx, trial, "steps");
    if (t == nullptr) return LITMUS_INVALID_ARGUMENT;
    const std::optional<Mode> m = GetMode(ctx, mode, "steps");
    if (!m) return LITMUS_INVALID_ARGUMENT;
    Borrow(ctx, t->Steps(*m), steps, count);
    return LITMUS_OK;
  });
}

litmus_status_t HostStepMode(litmus_ctx_t* ctx, uint32_t trial, int64_t step, int32_t* mode,
                             int64_t* mode_step) noexcept {
  return Guarded(ctx, "step_mode", [&]() -> litmus_status_t {
    if (mode == nullptr || mode_step == nullptr) return NullOutput(ctx, "step_mode");
    const Trial* t = GetTrial(ctx, trial, "step_mode");
    if (t == nullptr) return LITMUS_INVALID_ARGUMENT;
    const std::optional<std::pair<Mode, int64_t>> found = t->ModeOfGlobalStep(step);
    if (!found) {
      return Fail(ctx, LITMUS_STEP_UNAVAILABLE,
                  "Step " + StepOfMode(step, Mode::kGlobal) + " is not available as it was not saved");
    }
    *mode = static_cast<int32_t>(found->first);
    *mode_step = found->second;
    return LITMUS_OK;
  });
}

litmus_status_t HostGlobalStep(litmus_ctx_t* ctx, uint32_t trial, int32_t mode, int64_t mode_step,
                               int64_t* step) noexcept {
  return Guarded(ctx, "global_step", [&]() -> litmus_status_t {
    if (step == nullptr) return NullOutput(ctx, "global_step");
    const Trial* t = GetTrial(ctx, trial, "global_step");
    if (t == nullptr) return LITMUS_INVALID_ARGUMENT;
    const std::optional<Mode> m = GetMode(ctx, mode, "global_step");
    if (!m) return LITMUS_INVALID_ARGUMENT;
    // A global step maps to itself, but only if the trial knows it.
    const std::optional<int64_t> global =
        *m == Mode::kGlobal ? (t->ModeOfGlobalStep(mode_step) ? std::optional<int64_t>(mode_step) : std::nullopt)
                            : t->GlobalStep(*m, mode_step);
    if (!global) {
      return Fail(ctx, LITMUS_STEP_UNAVAILABLE,
                  "Step " + StepOfMode(mode_step, *m) + " is not available as it was not saved");
    }
    *step = *global;
    return LITMUS_OK;
  });
}

litmus_status_t HostWorkers(litmus_ctx_t* ctx, uint32_t trial, const litmus_str_t** workers, size_t* count) noexcept {
  return Guarded(ctx, "workers", [&]() -> litmus_status_t {
    if (workers == nullptr || count == nullptr) return NullOutput(ctx, "workers");
    const Trial* t = GetTrial(ctx, trial, "workers");
    if (t == nullptr) return LITMUS_INVALID_ARGUMENT;
    Borrow(ctx, t->workers(), workers, count);
    return LITMUS_OK;
  });
}

// True if the caller's query (of size struct_size) includes the field ending at `end`.
bool HasField(const litmus_tensor_query_t* query, size_t end) { return query->struct_size >= end; }
#define LITMUS_QUERY_HAS(query, field) \
  HasField(query, offsetof(litmus_tensor_query_t, field) + sizeof(litmus_tensor_query_t::field))

litmus_status_t HostTensorNames(litmus_ctx_t* ctx, uint32_t trial, const litmus_tensor_query_t* query,
                                const litmus_str_t** names, size_t* count) noexcept {
  return Guarded(ctx, "tensor_names", [&]() -> litmus_status_t {
    if (names == nullptr || count == nullptr) return NullOutput(ctx, "tensor_names");
    const Trial* t = GetTrial(ctx, trial, "tensor_names");
    if (t == nullptr) return LITMUS_INVALID_ARGUMENT;
    // Missing query fields (a NULL query or a short struct_size) do not filter.
    litmus_tensor_query_t q{};
    q.step = -1;
    if (query != nullptr) {
      if (LITMUS_QUERY_HAS(query, collection)) q.collection = query->collection;
      if (LITMUS_QUERY_HAS(query, regex)) q.regex = query->regex;
      if (LITMUS_QUERY_HAS(query, step)) q.step = query->step;
      if (LITMUS_QUERY_HAS(query, mode)) q.mode = query->mode;
    }
    std::optional<std::string> collection = ToString(ctx, q.collection, "tensor_names", "query.collection");
    if (!collection) return LITMUS_INVALID_ARGUMENT;
    std::optional<std::string> regex = ToString(ctx, q.regex, "tensor_names", "query.regex");
    if (!regex) return LITMUS_INVALID_ARGUMENT;
    std::optional<Mode> mode;
    if (q.mode != 0) {
      mode = GetMode(ctx, q.mode, "tensor_names");
      if (!mode) return LITMUS_INVALID_ARGUMENT;
    }

    // Filters intersect; each list below is sorted, holds saved names only and views the
    // trial's own copies (valid as long as the trial: nothing is copied, as rules ask at every
    // step). The first filter starts the selection, the step is checked last (one lookup per
    // selected name), and every name is listed only when nothing filters.
    std::optional<std::vector<std::string_view>> selected;  // nullopt: every saved name
    auto intersect = [&selected](std::vector<std::string_view> other) {
      if (!selected) {
        selected = std::move(other);
        return;
      }
      std::vector<std::string_view> out;
      std::set_intersection(selected->begin(), selected->end(), other.begin(), other.end(), std::back_inserter(out));
      selected = std::move(out);
    };
    // GLOBAL means every mode, as smdebug's tensor_names(mode=ModeKeys.GLOBAL).
    if (mode && *mode != Mode::kGlobal) intersect(t->TensorNameViewsForMode(*mode));
    if (!collection->empty()) {
      StatusOr<std::vector<std::string_view>> members = t->TensorNameViewsInCollection(*collection);
      if (members.ok()) {
        intersect(*std::move(members));
      } else if (members.status().code() == StatusCode::kNotFound) {
        selected.emplace();  // an unknown collection selects nothing (docs/rules/semantics.md §1.3)
      } else {
        return Fail(ctx, LITMUS_INVALID_ARGUMENT, "tensor_names: " + members.status().message());
      }
    }
    if (!regex->empty()) {
      StatusOr<std::vector<std::string_view>> matching = t->TensorNameViewsMatching(*regex);
      if (!matching.ok()) return Fail(ctx, LITMUS_INVALID_ARGUMENT, "tensor_names: " + matching.status().message());
      intersect(*std::move(matching));
    }
    if (q.step >= 0) {
      Borrow(ctx, t->TensorNameViewsAtStep(q.step, selected ? &*selected : nullptr), names, count);
    } else if (selected) {
      Borrow(ctx, *selected, names, count);
    } else {
      Borrow(ctx, t->TensorNames(), names, count);
    }
    return LITMUS_OK;
  });
}
#undef LITMUS_QUERY_HAS

litmus_status_t HostTensorSteps(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int32_t mode,
                                const int64_t** steps, size_t* count) noexcept {
  return Guarded(ctx, "tensor_steps", [&]() -> litmus_status_t {
    if (steps == nullptr || count == nullptr) return NullOutput(ctx, "tensor_steps");
    const Trial* t = GetTrial(ctx, trial, "tensor_steps");
    if (t == nullptr) return LITMUS_INVALID_ARGUMENT;
    std::optional<std::string> n = ToString(ctx, name, "tensor_steps", "name");
    if (!n) return LITMUS_INVALID_ARGUMENT;
    const std::optional<Mode> m = GetMode(ctx, mode, "tensor_steps");
    if (!m) return LITMUS_INVALID_ARGUMENT;
    if (!t->HasTensor(*n)) return Fail(ctx, LITMUS_TENSOR_UNAVAILABLE, "Tensor " + *n + " was not saved.");
    Borrow(ctx, t->TensorSteps(*n, *m), steps, count);
    return LITMUS_OK;
  });
}

litmus_status_t HostTensorValue(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step, int32_t mode,
                                litmus_str_t worker, litmus_tensor_view_t* out) noexcept {
  return Guarded(ctx, "tensor_value", [&]() -> litmus_status_t {
    if (out == nullptr) return NullOutput(ctx, "tensor_value");
    if (out->struct_size < sizeof(uint32_t)) {
      return Fail(ctx, LITMUS_INVALID_ARGUMENT,
                  "tensor_value: out->struct_size is " + std::to_string(out->struct_size) +
                      "; set it to sizeof(litmus_tensor_view_t)");
    }
    std::optional<TensorArgs> args = GetTensorArgs(ctx, trial, name, mode, worker, "tensor_value");
    if (!args) return LITMUS_INVALID_ARGUMENT;
    TensorPtr found;
    if (const litmus::CallValues* values = CallValuesFor(ctx, *args)) found = values->Find(trial, args->name, step);
    if (found == nullptr) {
      StatusOr<TensorPtr> value = args->trial->Value(args->name, step, args->mode, args->worker, /*rule_read=*/true);
      if (!value.ok()) {
        return TrialFailure(ctx, *args->trial, value.status(), std::string(args->name), step, args->mode, args->worker,
                            true);
      }
      found = *std::move(value);
    }
    ctx->tensors.push_back(std::move(found));  // keeps data, shape and strings alive until the call returns
    const Tensor& tensor = *ctx->tensors.back();

    litmus_tensor_view_t view{};
    view.dtype = ViewDType(tensor.dtype());
    if (!tensor.is_string() && !tensor.bytes().empty()) {
      view.data = tensor.bytes().data();
      view.byte_size = tensor.bytes().size();
    }
    view.shape = tensor.shape().empty() ? nullptr : tensor.shape().data();
    view.rank = static_cast<uint32_t>(tensor.shape().size());
    view.num_elements = tensor.num_elements();
    if (tensor.is_string()) {
      std::vector<litmus_str_t>& strs = ctx->str_arrays.emplace_back();
      strs.reserve(tensor.strings().size());
      for (const std::string& s : tensor.strings()) strs.push_back(ToStr(s));
      view.strings = strs.empty() ? nullptr : strs.data();
    }
    const int64_t global = ToGlobalStep(*args->trial, step, args->mode).value_or(step);
    view.step = global;
    if (const auto mode_of = args->trial->ModeOfGlobalStep(global)) {
      view.mode = static_cast<int32_t>(mode_of->first);
      view.mode_step = mode_of->second;
    } else {
      view.mode = LITMUS_MODE_GLOBAL;
      view.mode_step = global;
    }
    // Write no byte beyond the caller's struct_size (an older plugin has a shorter view).
    const uint32_t filled = std::min<uint32_t>(out->struct_size, sizeof(view));
    view.struct_size = filled;
    std::memcpy(out, &view, filled);
    return LITMUS_OK;
  });
}

litmus_status_t HostTensorReduction(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step, int32_t mode,
                                    int32_t reduction, uint32_t abs, litmus_str_t worker, double* out) noexcept {
  return Guarded(ctx, "tensor_reduction", [&]() -> litmus_status_t {
    if (out == nullptr) return NullOutput(ctx, "tensor_reduction");
    std::optional<TensorArgs> args = GetTensorArgs(ctx, trial, name, mode, worker, "tensor_reduction");
    if (!args) return LITMUS_INVALID_ARGUMENT;
    // LITMUS_REDUCTION_* values are the positions in kAllReductions (min, max, mean, std, ...).
    static_assert(layout::kAllReductions[LITMUS_REDUCTION_MIN] == layout::Reduction::kMin &&
                  layout::kAllReductions[LITMUS_REDUCTION_VARIANCE] == layout::Reduction::kVariance &&
                  layout::kAllReductions[LITMUS_REDUCTION_L2] == layout::Reduction::kL2);
    if (reduction < 0 || reduction >= static_cast<int32_t>(std::size(layout::kAllReductions))) {
      return Fail(
          ctx, LITMUS_INVALID_ARGUMENT,
          "tensor_reduction: invalid reduction " + std::to_string(reduction) + " (expected LITMUS_REDUCTION_*)");
    }
    const layout::Reduction r = layout::kAllReductions[reduction];
    if (const litmus::CallValues* values = CallValuesFor(ctx, *args)) {
      if (const std::optional<double> found = values->Reduction(trial, args->name, step, r, abs != 0)) {
        *out = *found;
        return LITMUS_OK;
      }
    }
    StatusOr<double> value = args->trial->Reduction(args->name, step, r, abs != 0, args->mode, args->worker);
    if (!value.ok()) {
      return TrialFailure(ctx, *args->trial, value.status(), std::string(args->name), step, args->mode, args->worker, false);
    }
    *out = *value;
    return LITMUS_OK;
  });
}

litmus_status_t HostTensorShape(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, int64_t step, int32_t mode,
                                litmus_str_t worker, const int64_t** shape, uint32_t* rank) noexcept {
  return Guarded(ctx, "tensor_shape", [&]() -> litmus_status_t {
    if (shape == nullptr || rank == nullptr) return NullOutput(ctx, "tensor_shape");
    std::optional<TensorArgs> args = GetTensorArgs(ctx, trial, name, mode, worker, "tensor_shape");
    if (!args) return LITMUS_INVALID_ARGUMENT;
    StatusOr<std::vector<int64_t>> value = args->trial->Shape(args->name, step, args->mode, args->worker);
    if (!value.ok()) {
      return TrialFailure(ctx, *args->trial, value.status(), std::string(args->name), step, args->mode, args->worker, false);
    }
    size_t count = 0;
    Borrow(ctx, std::move(value).value(), shape, &count);
    *rank = static_cast<uint32_t>(count);
    return LITMUS_OK;
  });
}

// require_tensor and require_tensor_ex (since 1.2): `function` names the one called.
litmus_status_t RequireTensor(const char* function, litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name,
                              const int64_t* steps, size_t step_count, uint32_t flags) noexcept {
  return Guarded(ctx, function, [&]() -> litmus_status_t {
    const bool should_match_regex = (flags & LITMUS_REQUIRE_REGEX) != 0;
    const bool reductions_only = (flags & LITMUS_REQUIRE_REDUCTIONS_ONLY) != 0;
    if ((flags & ~(LITMUS_REQUIRE_REGEX | LITMUS_REQUIRE_REDUCTIONS_ONLY)) != 0) {
      return Fail(ctx, LITMUS_INVALID_ARGUMENT, std::string(function) + ": unknown flags " + std::to_string(flags));
    }
    if (ctx->phase != PluginCallPhase::kSetRequiredTensors || ctx->requirements == nullptr) {
      return Fail(ctx, LITMUS_INVALID_ARGUMENT, std::string(function) + " is only valid inside set_required_tensors");
    }
    if (steps == nullptr && step_count > 0) {
      return Fail(ctx, LITMUS_INVALID_ARGUMENT,
                  std::string(function) + ": steps is NULL but step_count is " + std::to_string(step_count));
    }
    const Trial* t = GetTrial(ctx, trial, function);
    if (t == nullptr) return LITMUS_INVALID_ARGUMENT;
    std::optional<std::string_view> n = ToView(ctx, name, function, "name");
    if (!n) return LITMUS_INVALID_ARGUMENT;
    if (should_match_regex) {
      // smdebug's RequiredTensors.add(should_match_regex=True): every match now, none is fine.
      StatusOr<std::vector<std::string>> matching = t->TensorNamesMatching(std::string(*n));
      if (!matching.ok()) return Fail(ctx, LITMUS_INVALID_ARGUMENT, std::string(function) + ": " + matching.status().message());
      for (const std::string& match : *matching) {
        if (const std::optional<std::string_view> saved = t->SavedTensorName(match)) {
          RecordRequirement(ctx, trial, *saved, steps, step_count, reductions_only);
        }
      }
      return LITMUS_OK;
    }
    const std::optional<std::string_view> saved = t->SavedTensorName(*n);
    if (!saved) return Fail(ctx, LITMUS_TENSOR_UNAVAILABLE, "Tensor " + std::string(*n) + " was not saved.");
    RecordRequirement(ctx, trial, *saved, steps, step_count, reductions_only);
    return LITMUS_OK;
  });
}

litmus_status_t HostRequireTensor(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, const int64_t* steps,
                                  size_t step_count, uint32_t should_match_regex) noexcept {
  return RequireTensor("require_tensor", ctx, trial, name, steps, step_count,
                       should_match_regex != 0 ? LITMUS_REQUIRE_REGEX : 0u);
}

litmus_status_t HostRequireTensorEx(litmus_ctx_t* ctx, uint32_t trial, litmus_str_t name, const int64_t* steps,
                                    size_t step_count, uint32_t flags) noexcept {
  return RequireTensor("require_tensor_ex", ctx, trial, name, steps, step_count, flags);
}

// report_* outside invoke_at_step / on_poll is a plugin bug that must not fail the rule: logged,
// ignored.
bool CheckReportPhase(litmus_ctx_t* ctx, const char* function) {
  if ((ctx->phase == PluginCallPhase::kInvoke || ctx->phase == PluginCallPhase::kPoll) && ctx->report != nullptr) {
    return true;
  }
  spdlog::warn("{}: {} called outside invoke_at_step and on_poll (ignored; plugin bug)", ctx->log_tag, function);
  return false;
}

void HostReportViolations(litmus_ctx_t* ctx, int64_t count) noexcept {
  if (ctx == nullptr) return;
  try {
    if (!CheckReportPhase(ctx, "report_violations")) return;
    if (count < 0) {
      spdlog::warn("{}: report_violations({}) with a negative count (ignored; plugin bug)", ctx->log_tag, count);
      return;
    }
    ctx->report->violations += count;
  } catch (...) {
    // Reporting never fails a rule.
  }
}

void HostReportDetail(litmus_ctx_t* ctx, litmus_str_t key, litmus_str_t json_value) noexcept {
  if (ctx == nullptr) return;
  try {
    if (!CheckReportPhase(ctx, "report_detail")) return;
    const std::optional<std::string_view> k = ToView(ctx, key, "report_detail", "key");
    const std::optional<std::string_view> v = ToView(ctx, json_value, "report_detail", "json_value");
    if (!k || !v || k->empty()) {
      spdlog::warn("{}: report_detail with an empty or NULL key or value (ignored; plugin bug)", ctx->log_tag);
      return;
    }
    ctx->report->details.Set(*k, *v);  // (made canonical JSON when the report is written)
  } catch (...) {
    // Reporting never fails a rule.
  }
}

// ctx->series_mode: the LITMUS_MODE_* of `step` (looked up once per step, not per point).
void UpdateSeriesMode(litmus_ctx_t* ctx, int64_t step) {
  if (step == ctx->series_mode_step) return;
  ctx->series_mode = 0;
  if (!ctx->trials.empty() && ctx->trials[0] != nullptr) {
    if (const auto found = ctx->trials[0]->ModeOfGlobalStep(step)) {
      ctx->series_mode = static_cast<int32_t>(found->first);
    }
  }
  ctx->series_mode_step = step;
}

// ABI 1.3: what the rule watched. Like report_detail, misuse is logged and ignored (a bad
// series never fails a rule).
void HostReportSeries(litmus_ctx_t* ctx, litmus_str_t series, litmus_str_t tensor, int64_t step,
                      double value) noexcept {
  if (ctx == nullptr) return;
  try {
    if (!CheckReportPhase(ctx, "report_series")) return;
    if (series.size == 0 || series.data == nullptr || (tensor.data == nullptr && tensor.size != 0)) {
      spdlog::warn("{}: report_series with an empty or NULL series name or a NULL tensor name (ignored; plugin bug)",
                   ctx->log_tag);
      return;
    }
    UpdateSeriesMode(ctx, step);
    ctx->report->series.Add(std::string_view(series.data, series.size),
                            tensor.size == 0 ? std::string_view() : std::string_view(tensor.data, tensor.size), step,
                            ctx->series_mode, value);
  } catch (...) {
    // Reporting never fails a rule.
  }
}

// report_threshold and report_recommendation: also in create (a threshold is a parameter).
bool CheckSetupOrReportPhase(litmus_ctx_t* ctx, const char* function) {
  if (ctx->phase == PluginCallPhase::kCreate && ctx->report != nullptr) return true;
  return CheckReportPhase(ctx, function);
}

void HostReportThreshold(litmus_ctx_t* ctx, litmus_str_t series, double value, int32_t fires_when) noexcept {
  if (ctx == nullptr) return;
  try {
    if (!CheckSetupOrReportPhase(ctx, "report_threshold")) return;
    if (series.size == 0 || series.data == nullptr) {
      spdlog::warn("{}: report_threshold with an empty or NULL series name (ignored; plugin bug)", ctx->log_tag);
      return;
    }
    if (fires_when != LITMUS_FIRES_ABOVE && fires_when != LITMUS_FIRES_BELOW) {
      spdlog::debug("{}: report_threshold with fires_when {} (unknown; ignored)", ctx->log_tag, fires_when);
      return;
    }
    ctx->report->series.SetThreshold(std::string_view(series.data, series.size), value, fires_when);
  } catch (...) {
  }
}

void HostReportRecommendation(litmus_ctx_t* ctx, litmus_str_t text) noexcept {
  if (ctx == nullptr) return;
  try {
    if (!CheckSetupOrReportPhase(ctx, "report_recommendation")) return;
    if (text.size == 0 || text.data == nullptr) {
      spdlog::warn("{}: report_recommendation with empty or NULL text (ignored; plugin bug)", ctx->log_tag);
      return;
    }
    ctx->report->series.AddRecommendation(std::string_view(text.data, text.size));
  } catch (...) {
  }
}

// ABI 1.1. Checks only the JSON shape (an object, or a list of objects); what each action means
// is decided where the rule's actions run (see RuleInstance::extra_action_json).
litmus_status_t HostAddAction(litmus_ctx_t* ctx, litmus_str_t action_json) noexcept {
  return Guarded(ctx, "add_action", [&]() -> litmus_status_t {
    if (ctx->phase != PluginCallPhase::kCreate) {
      return Fail(ctx, LITMUS_INVALID_ARGUMENT, "add_action is only valid inside create");
    }
    std::optional<std::string> text = ToString(ctx, action_json, "add_action", "action_json");
    if (!text) return LITMUS_INVALID_ARGUMENT;
    const nlohmann::json parsed = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    const auto is_object = [](const nlohmann::json& action) { return action.is_object(); };
    const bool objects = parsed.is_object() ||
                         (parsed.is_array() && !parsed.empty() && std::all_of(parsed.begin(), parsed.end(), is_object));
    if (!objects) {
      return Fail(ctx, LITMUS_INVALID_ARGUMENT,
                  "add_action: expected a JSON object such as {\"name\": \"stoptraining\", "
                  "\"training_job_prefix\": \"...\"} or a list of them, got '" + *text + "'");
    }
    ctx->added_actions.push_back(std::move(*text));
    return LITMUS_OK;
  });
}

constexpr litmus_host_api_t kHostApi = {
    .struct_size = sizeof(litmus_host_api_t),
    .abi_major = LITMUS_ABI_MAJOR,
    .abi_minor = LITMUS_ABI_MINOR,
    .reserved0 = 0,
    .set_error = HostSetError,
    .log = HostLog,
    .alloc = HostAlloc,
    .free = HostFree,
    .trial_count = HostTrialCount,
    .steps = HostSteps,
    .step_mode = HostStepMode,
    .global_step = HostGlobalStep,
    .workers = HostWorkers,
    .tensor_names = HostTensorNames,
    .tensor_steps = HostTensorSteps,
    .tensor_value = HostTensorValue,
    .tensor_reduction = HostTensorReduction,
    .tensor_shape = HostTensorShape,
    .require_tensor = HostRequireTensor,
    .report_violations = HostReportViolations,
    .report_detail = HostReportDetail,
    .add_action = HostAddAction,
    .require_tensor_ex = HostRequireTensorEx,
    .report_series = HostReportSeries,
    .report_threshold = HostReportThreshold,
    .report_recommendation = HostReportRecommendation,
};

}  // namespace

const litmus_host_api_t* HostApi() { return &kHostApi; }

void ReportSeriesAt(litmus_ctx* ctx, std::string_view series, std::string_view tensor, uint32_t* index,
                    int64_t step, double value) noexcept {
  if (ctx == nullptr || *index == SeriesStore::kDropped) return;  // (dropped: counted at its first point)
  const bool valid_phase = ctx->phase == PluginCallPhase::kInvoke || ctx->phase == PluginCallPhase::kPoll;
  if (*index == SeriesStore::kNotFound || ctx->report == nullptr || !valid_phase) {
    // The first point of the series, or one the table's function refuses or logs: all its checks.
    HostReportSeries(ctx, {series.data(), series.size()}, {tensor.data(), tensor.size()}, step, value);
    if (ctx->report != nullptr) {
      *index = ctx->report->series.Find(series, tensor);
      // A store full without it never keeps it: its later points need no lookup (a rule that
      // publishes one series per tensor of a 10k-tensor model looked up 10k names a step).
      if (*index == SeriesStore::kNotFound && valid_phase && ctx->report->series.full()) *index = SeriesStore::kDropped;
    }
    return;
  }
  try {
    UpdateSeriesMode(ctx, step);
    ctx->report->series.AddAt(*index, step, ctx->series_mode, value);
  } catch (...) {
    // Reporting never fails a rule.
  }
}

void RecordRequirement(litmus_ctx* ctx, uint32_t trial, std::string_view name, const int64_t* steps,
                       size_t step_count, bool reductions_only) {
  const auto next = static_cast<uint32_t>(ctx->requirements->size());
  uint32_t at = ctx->requirement_index.FindOrInsert(trial, name.data(), next);
  if (at == RequirementIndex::kAbsent) {
    ctx->requirements->push_back({trial, name, {}, reductions_only});
    at = next;
  }
  TensorRequirement& requirement = (*ctx->requirements)[at];
  requirement.reductions_only = requirement.reductions_only && reductions_only;
  RequiredSteps& out = requirement.steps;
  out.Append(steps, step_count);
  if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());
  out.Truncate(static_cast<size_t>(std::unique(out.begin(), out.end()) - out.begin()));
}

namespace {
std::atomic<const litmus_host_api_t*> g_plugin_host_api{&kHostApi};
}  // namespace

const litmus_host_api_t* PluginHostApi() { return g_plugin_host_api.load(); }
void SetPluginHostApi(const litmus_host_api_t* host) { g_plugin_host_api.store(host); }

bool IsKnownLitmusStatus(litmus_status_t status) { return status >= LITMUS_OK && status <= LITMUS_INVALID_WORKER; }

bool SkipsTheStep(litmus_status_t status) {
  return status == LITMUS_TENSOR_UNAVAILABLE_FOR_STEP || status == LITMUS_TENSOR_UNAVAILABLE ||
         status == LITMUS_STEP_UNAVAILABLE || status == LITMUS_INVALID_WORKER;
}

std::string LitmusStatusName(litmus_status_t status) {
  switch (status) {
    case LITMUS_OK:
      return "LITMUS_OK";
    case LITMUS_CONDITION_MET:
      return "LITMUS_CONDITION_MET";
    case LITMUS_TENSOR_UNAVAILABLE_FOR_STEP:
      return "LITMUS_TENSOR_UNAVAILABLE_FOR_STEP";
    case LITMUS_TENSOR_UNAVAILABLE:
      return "LITMUS_TENSOR_UNAVAILABLE";
    case LITMUS_STEP_UNAVAILABLE:
      return "LITMUS_STEP_UNAVAILABLE";
    case LITMUS_NOT_YET_AVAILABLE:
      return "LITMUS_NOT_YET_AVAILABLE";
    case LITMUS_NO_MORE_DATA:
      return "LITMUS_NO_MORE_DATA";
    case LITMUS_INVALID_CONFIG:
      return "LITMUS_INVALID_CONFIG";
    case LITMUS_INTERNAL:
      return "LITMUS_INTERNAL";
    case LITMUS_INVALID_ARGUMENT:
      return "LITMUS_INVALID_ARGUMENT";
    case LITMUS_INVALID_WORKER:
      return "LITMUS_INVALID_WORKER";
  }
  return "status " + std::to_string(status);
}

}  // namespace litmus
