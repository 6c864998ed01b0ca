// RuleHandle: one configured rule as the runner calls it, wherever it runs: in the runner's own
// process (in_process_rule.h, over a RuleInstance: `--isolation none`) or in a worker process of
// its own (IsolatedRule, the default). RuleIsolation creates them for a job and owns what
// isolation shares between rules (the tensor memory workers read, the limits). Thread-safety:
// one call at a time per handle; different handles may be called concurrently (as RuleInstance).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "litmus/engine/trial.h"
#include "litmus/status.h"
#include "plugin/host_api.h"
#include "plugin/plugin_loader.h"
#include "plugin/rule_instance.h"
#include "run/read_key.h"

namespace litmus {

namespace isolation {
class QueryAnswerCache;
class StepTable;
}

// What the runner has for a step's StartInvoke besides the step: an isolated rule's worker reads
// the values from the shared memory, most of them through the step's shared table.
struct InvokeInput {
  const std::vector<ReadValue>* values = nullptr;  // decoded for the step (sorted; job-wide trials)
  const ReadValueIndex* index = nullptr;           // of `values` (lookups without name compares), or null
  std::span<const uint32_t> trial_indices;         // the rule's trial numbers -> job-wide ones
  const isolation::StepTable* table = nullptr;     // RuleIsolation::ShareStep of the step, or null
  // StartInvokeSteps: a step that returned LITMUS_CONDITION_MET does not end the call
  // (--keep-going: a firing does not end the rule).
  bool past_firings = false;
  // StartInvokeSteps, one per step (empty: none): the runner found a tensor of the step's list
  // missing and skips the step (as smdebug's fetch does) once the rule's worker confirmed the
  // list; the step is not invoked and its result is a placeholder LITMUS_OK.
  std::span<const uint8_t> skip;
  // Answers to step queries shared by the rules the runner starts together (their calls ask
  // the same questions about the same steps), or null: every rule computes its own.
  isolation::QueryAnswerCache* answers = nullptr;
};

class RuleHandle {
 public:
  virtual ~RuleHandle() = default;
  // As RuleInstance (rule_instance.h). An isolated rule adds failures of its own, each
  // LITMUS_INTERNAL with a message naming the call, the step and the cause (worker killed by a
  // signal, exited, timed out, over its memory limit); after one, every call fails the same way.
  virtual PluginCallResult RequiredTensors(int64_t step, std::vector<TensorRequirement>* out) = 0;
  virtual PluginCallResult Invoke(int64_t step) = 0;
  // Optional first half of Invoke(step), which must follow: an isolated rule sends its request
  // here, so that the rules of a step all compute at once, each in its process, while the runner
  // collects the results. In-process: nothing.
  virtual void StartInvoke(int64_t step, const InvokeInput& input) {
    (void)step;
    (void)input;
  }
  // Several steps in one call (`--rule-batch-steps`): a call costs a round trip to an isolated
  // rule's worker, two context switches that cost more than a small rule's work on a VM.
  // PredictRequirements: the requirements at a later `step` as an earlier list of the rule moved
  // to it (its last list of a step of the same mode), when the handle can check the guess where
  // the rule runs before invoking it (an isolated rule; false otherwise). A predicted list
  // counts as declared.
  virtual bool PredictRequirements(int64_t step, std::vector<TensorRequirement>* out) {
    (void)step;
    (void)out;
    return false;
  }
  // A hint: RequiredTensors of `steps` (ascending) comes next, in order, for a rule whose list
  // could not be declared at the step before them. An isolated rule asks its worker about them
  // all in one round trip (up to the first it can declare) and answers RequiredTensors from
  // that while the trials stay as they were; it returns once the request is sent (the worker
  // declares while the caller goes on; the reply is read at the rule's next use). In-process:
  // nothing.
  virtual void DeclareSteps(std::span<const int64_t> steps) { (void)steps; }
  // Drops the predictions not sent with a StartInvokeSteps (their steps are declared again).
  virtual void ForgetPredictions() {}
  // What PredictRequirements would say now, without counting it as declared (for a read ahead).
  virtual bool PeekRequirements(int64_t step, std::vector<TensorRequirement>* out) const {
    (void)step;
    (void)out;
    return false;
  }
  // StartInvoke, then Invoke, of `steps` (the first declared, the others predicted; the values of
  // them all in `input`) in order, in one call. The results of the steps run, in order: at least
  // one, fewer when the handle sent fewer (an isolated rule keeps a call within a tenth of its
  // time limit at its recent pace), when a step did not return LITMUS_OK (its result is the
  // last; LITMUS_CONDITION_MET too unless input.past_firings) or when a step's
  // predicted list was wrong (that step and the rest did not run: declare them again). By
  // default, only the first step runs.
  virtual void StartInvokeSteps(std::span<const int64_t> steps, const InvokeInput& input) {
    StartInvoke(steps.front(), input);
  }
  virtual std::vector<PluginCallResult> InvokeSteps(std::span<const int64_t> steps) {
    return {Invoke(steps.front())};
  }
  virtual bool polls() const = 0;
  virtual PluginCallResult Poll(int64_t last_step) = 0;
  virtual const std::vector<std::string>& extra_action_json() const = 0;
  virtual const RuleReport& report() const = 0;
  // True once a stop of the job ended a call of this rule before it returned (an isolated
  // rule's worker is killed): that call evaluated nothing.
  virtual bool stopped() const { return false; }
  // The runner's own bookkeeping on the report between calls (SeriesStore::MarkFiring, taking new
  // series points); never during a call.
  virtual RuleReport& mutable_report() = 0;
  // A resumed job (run/checkpoint.h): the report as an earlier run of the job left it.
  virtual void RestoreReport(RuleReport report) = 0;
  virtual const LoadedRule& rule() const = 0;
};

// A value that changes whenever a refresh of one of `trials` found something new: a rule's
// requirement list declared ahead of its use stays valid while it does not change.
uint64_t TrialsGeneration(std::span<Trial* const> trials);
// The first available step of `base` after `step`; nullopt when there is none or the next one is
// not available yet.
std::optional<int64_t> NextAvailableStepAfter(const Trial& base, int64_t step);

enum class IsolationMode { kNone, kProcess };

struct IsolationOptions {
  IsolationMode mode = IsolationMode::kProcess;
  // Per plugin call (create included); a rule's `rule_timeout` parameter overrides it.
  double rule_timeout_s = 300;
  // RLIMIT_DATA of each worker; 0 = unlimited.
  uint64_t rule_memory_bytes = uint64_t{4} << 30;
  // Where each worker's stdout/stderr go: <log_dir>/<configuration name>.log, created on the
  // first byte, at most kRuleLogBytes (the rest is dropped).
  std::string log_dir;
  // Size of the shared tensor memory (sparse; see SharedArena).
  uint64_t arena_bytes = uint64_t{1} << 30;
  // --allow-unknown-params: a parameter key the rule does not declare is a warning, not an error.
  bool allow_unknown_params = false;
  // --no-series: what rules publish (report_series, thresholds, recommendations) is not kept.
  bool keep_series = true;
  // --rule-batch-steps: at most this many steps per call of an isolated rule (RuleHandle::
  // InvokeSteps); 1 = one call per step.
  size_t batch_steps = 16;
  // Workers started at once by Create (one per rule the job will create: their start-up then
  // overlaps the runner's own setup).
  size_t prestart = 0;
};

// The runner parameter that sets a rule's own timeout (seconds), unless the rule declares a
// parameter of that name.
inline constexpr const char* kRuleTimeoutParameter = "rule_timeout";
inline constexpr uint64_t kRuleLogBytes = uint64_t{16} << 20;

namespace isolation {
class SharedArena;
struct StartedWorker;
class TensorTable;
}

class RuleIsolation {
 public:
  static StatusOr<std::unique_ptr<RuleIsolation>> Create(IsolationOptions options);
  ~RuleIsolation();

  // For TrialOptions::record_buffers of every trial the rules read (null: the heap).
  std::shared_ptr<RecordBufferAllocator> record_buffers() const;

  // As RuleInstance::Create, in the mode of the options. `rule_timeout` is consumed here
  // (InvalidArgument for a value that is not a positive number of seconds).
  StatusOr<std::unique_ptr<RuleHandle>> CreateRule(const LoadedRule& rule, std::string configuration_name,
                                                   std::vector<Trial*> trials,
                                                   std::map<std::string, std::string> params,
                                                   std::vector<std::string>* warnings);

  const IsolationOptions& options() const { return options_; }

  // The step's table in the shared memory (step_table.h) of `values` (sorted; job-wide trial
  // numbers index `trials`), for the StartInvoke of every isolated rule of the step; keep it
  // until their Invoke returned. Null in-process, or when no value qualifies.
  std::shared_ptr<const isolation::StepTable> ShareStep(const std::vector<ReadValue>& values,
                                                        std::span<Trial* const> trials) const;

 private:
  explicit RuleIsolation(IsolationOptions options);
  IsolationOptions options_;
  std::shared_ptr<isolation::SharedArena> arena_;
  std::shared_ptr<isolation::TensorTable> table_;
  std::vector<isolation::StartedWorker> started_;  // started ahead, not yet given to a rule
};

// "killed by signal 11 (SIGSEGV)", "exited with status 7", from a waitpid status.
std::string DescribeWaitStatus(int status);

}  // namespace litmus
