// The host side of the plugin ABI (plugin-sdk/include/litmus/rule_abi.h): the static host table
// every plugin receives, and `struct litmus_ctx`, the per-instance state behind the opaque
// litmus_ctx_t (phase of the current call, its error text, borrowed results, report, recorded
// tensor requirements). Thread-safety: the host functions keep no global state; one litmus_ctx
// is used by one thread at a time, different ones concurrently over the same (un-refreshed) Trials.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "litmus/engine/tensor.h"
#include "litmus/format/trial_layout.h"
#include "litmus/rule_abi.h"
#include "plugin/report_details.h"
#include "plugin/requirement_index.h"
#include "plugin/required_steps.h"
#include "plugin/series_store.h"

namespace litmus {

class Trial;

// One tensor a rule declared in set_required_tensors: `name` of the rule's trial `trial`
// (0 = base trial, 1.. = other trials, in the order given to RuleInstance::Create) at global
// `steps` (sorted, unique). A regex requirement is already expanded to the matching names.
// `name` views the trial's own copy (Trial::SavedTensorName): valid as long as the Trial, and the
// same view wherever the same name of the same trial is required (rules require hundreds of
// names at every step; copying them showed in profiles).
struct TensorRequirement {
  uint32_t trial = 0;
  std::string_view name;
  RequiredSteps steps;  // sorted, unique
  // ABI 1.2 LITMUS_REQUIRE_REDUCTIONS_ONLY: the rule reads only reductions, so a step where the
  // tensor has saved reductions but no raw value is evaluated (otherwise it is skipped, as
  // smdebug's RequiredTensors.fetch does).
  bool reductions_only = false;
};

// What a rule reported through report_violations / report_detail, accumulated over its calls.
// details: key -> the JSON text given (ReportDetails::Json makes it canonical; a plugin's invalid
// JSON becomes a JSON string). series: what it watched (ABI 1.3 report_series /
// report_threshold / report_recommendation).
struct RuleReport {
  int64_t violations = 0;
  ReportDetails details;
  SeriesStore series = {};
};

// Which plugin function is running; it decides which host services are allowed (add_action only
// in create, require_tensor only in set_required_tensors, report_* only in invoke_at_step and
// on_poll, but report_threshold and report_recommendation also in create).
enum class PluginCallPhase { kIdle, kEntry, kCreate, kSetRequiredTensors, kInvoke, kPoll };

// What require_tensor(_ex) records in the current call's requirements: `name` (a copy that
// outlives the call, such as Trial::SavedTensorName's) of `trial` at `steps`, kept sorted and
// unique. A name required both with and without reductions_only needs its raw value. Shared by
// the host table and a rule worker's (isolation/worker_host_api.h).
// REQUIRES: ctx->requirements (inside set_required_tensors).
void RecordRequirement(litmus_ctx* ctx, uint32_t trial, std::string_view name, const int64_t* steps,
                       size_t step_count, bool reductions_only);

// report_series of a series the caller publishes again and again (an isolated worker's interned
// names): as the host table's report_series, but once `*index` holds the series' position in
// ctx->report->series (SeriesStore::Find; set here after the first point that created it) no
// name is compared or hashed. `*index` starts as SeriesStore::kNotFound and belongs to the
// caller (one per series name, for this ctx and its report); it becomes SeriesStore::kDropped
// when the store is full without the series (counted once in dropped_series; later points of it
// are skipped).
void ReportSeriesAt(litmus_ctx* ctx, std::string_view series, std::string_view tensor, uint32_t* index,
                    int64_t step, double value) noexcept;

// Values a rule's in-process call reads before asking its trial (isolation/in_process_rule.h):
// those the runner already read for the call. tensor_value asks here first for the default
// worker's value at a global step: a lookup in the call's own table rather than in the trial's
// catalog and cache, which every rule's thread shares. Read-only during the call.
class CallValues {
 public:
  virtual ~CallValues() = default;
  // The raw value of `name` (as the rule wrote it) of the rule's trial `trial` at global `step`,
  // or null when the runner did not read it for the call or kept only its summary. A value
  // found counts as read by the rule (Trial::Value's rule_read).
  virtual TensorPtr Find(uint32_t trial, std::string_view name, int64_t step) const = 0;
  // The reduction `r` (of |x| with `abs`) of that tensor, as Trial::Reduction gives it, from the
  // value or the summary the runner read for the call (its memo, or computed from a raw value
  // and kept as one); nullopt when it has neither, when the entry holds stored reductions (which
  // Trial::Reduction prefers) or when a summary lacks it: the caller asks the trial.
  virtual std::optional<double> Reduction(uint32_t trial, std::string_view name, int64_t step, layout::Reduction r,
                                          bool abs) const = 0;
};

// The host table (ABI LITMUS_ABI_MAJOR.LITMUS_ABI_MINOR); static, valid for the process's life.
const litmus_host_api_t* HostApi();
// The table the plugin loader hands to plugin entries (plugins keep it for every later call):
// HostApi(), unless a rule worker process (isolation/) installed its own, once, before loading
// any plugin.
const litmus_host_api_t* PluginHostApi();
void SetPluginHostApi(const litmus_host_api_t* host);

// "LITMUS_TENSOR_UNAVAILABLE", ...; "status 42" for a value the ABI does not define.
std::string LitmusStatusName(litmus_status_t status);
// True for the values rule_abi.h defines (LITMUS_OK .. LITMUS_INVALID_WORKER).
bool IsKnownLitmusStatus(litmus_status_t status);
// True for the statuses that say a tensor, step or worker a call needed is not there (smdebug's
// TensorUnavailableForStep, TensorUnavailable, StepUnavailable, InvalidWorker): the step is
// skipped, neither evaluated nor an error.
bool SkipsTheStep(litmus_status_t status);

}  // namespace litmus

// The definition behind the ABI's opaque litmus_ctx_t (global namespace: the C header declares
// `struct litmus_ctx`). One per rule instance (and one per plugin entry call), reused across its
// calls: BeginCall() before each plugin function, EndCall() after it.
struct litmus_ctx {
  // `log_tag` prefixes the plugin's log lines (the rule configuration name); `trials` are the
  // rule's trials (not owned; must outlive the context); `report` (not owned, may be null) receives
  // report_* calls.
  litmus_ctx(std::string log_tag, std::vector<litmus::Trial*> trials, litmus::RuleReport* report);
  litmus_ctx(const litmus_ctx&) = delete;
  litmus_ctx& operator=(const litmus_ctx&) = delete;

  // Starts a call: clears the error text and borrowed results. `requirements` receives
  // require_tensor records (kSetRequiredTensors only).
  void BeginCall(litmus::PluginCallPhase call_phase, std::vector<litmus::TensorRequirement>* requirements = nullptr);
  // Ends it: releases borrowed results (the plugin may no longer use them).
  void EndCall();

  // Fixed for the context's life.
  const std::string log_tag;
  const std::vector<litmus::Trial*> trials;
  litmus::RuleReport* const report;

  // Accumulated over the context's life: the add_action texts of create (ABI 1.1), in call order,
  // each a JSON object or list of objects in action_json's form.
  std::vector<std::string> added_actions;

  // The current call.
  litmus::PluginCallPhase phase = litmus::PluginCallPhase::kIdle;
  bool has_error = false;  // set_error (or a failed host call) recorded text
  std::string error;
  // The first host call of this call that failed on damaged data (a truncated, missing or
  // corrupt record): its message, whatever the plugin then did. Kept after EndCall, until the
  // next BeginCall: the runner judges the call's result by it.
  std::string data_loss;
  std::vector<litmus::TensorRequirement>* requirements = nullptr;
  // (trial, tensor name) -> position in *requirements.
  litmus::RequirementIndex requirement_index;

  // Borrowed results handed to the plugin during the current call (stable addresses: deque
  // elements never move, and each vector is complete before its data pointer is handed out).
  std::deque<std::vector<int64_t>> int64_arrays;
  std::deque<std::vector<std::string>> string_arrays;
  std::deque<std::vector<litmus_str_t>> str_arrays;
  std::vector<litmus::TensorPtr> tensors;
  // Set by the in-process handle around its calls (CallValues), or null.
  const litmus::CallValues* call_values = nullptr;

  // report_series: the mode of the last step published in this call (a rule publishes many
  // points per step; one catalog lookup per step, not per point).
  int64_t series_mode_step = INT64_MIN;
  int32_t series_mode = 0;
};
