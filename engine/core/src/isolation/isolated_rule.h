// IsolatedRule: the runner's side of a rule running in a worker process (rule_worker.h). Each
// call is one request over the socket; while the worker serves it, this side answers its queries
// with the runner's own host functions over the rule's trials (so checks and messages are those
// of the in-process mode), applies its log and report notes, and hands it the required tensors of
// an Invoke as offsets into the shared tensor memory, keeping them alive until the reply. A call
// that does not come back (worker crashed, exited, closed its socket, timed out, ran out of
// memory) kills the worker and fails this call and every later one with LITMUS_INTERNAL naming
// the call, the step and the cause; a stop (StopRequested) kills it and leaves the call without
// an outcome (stopped(): the runner does not count the step as evaluated). Thread-safety: one
// call at a time (as RuleInstance).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "isolation/progress_slot.h"
#include "isolation/protocol.h"
#include "isolation/requirement_predictor.h"
#include "isolation/rule_handle.h"
#include "isolation/shared_arena.h"
#include "isolation/tensor_table.h"
#include "isolation/worker_process.h"

namespace litmus::isolation {

// A worker process started ahead of its rule, waiting for its kInit.
struct StartedWorker {
  std::unique_ptr<WorkerProcess> process;
  std::unique_ptr<Channel> channel;
  std::unique_ptr<ProgressSlot> progress;
};
// Starts one (its output goes to `log_path` unless the rule renames it).
StatusOr<StartedWorker> StartWorker(const SharedArena& arena, const std::string& log_path, uint64_t log_bytes);

struct WorkerLimits {
  double timeout_s = 300;
  uint64_t memory_bytes = 0;  // 0 = unlimited
  std::string log_path;
  uint64_t log_bytes = kRuleLogBytes;
  bool keep_series = true;  // false: the worker drops what the rule publishes (--no-series)
};

class IsolatedRule : public RuleHandle {
 public:
  // Creates the instance in `worker` (from StartWorker); errors as RuleInstance::Create (a
  // worker failure during create is Internal naming the cause).
  static StatusOr<std::unique_ptr<IsolatedRule>> Create(const LoadedRule& rule, std::string configuration_name,
                                                        std::vector<Trial*> trials,
                                                        const std::map<std::string, std::string>& params,
                                                        bool allow_unknown_params, std::vector<std::string>* warnings,
                                                        WorkerLimits limits,
                                                        std::shared_ptr<SharedArena> arena,
                                                        std::shared_ptr<TensorTable> table, StartedWorker worker);
  // kDestroy, then waits briefly for the worker to exit (killed after that).
  ~IsolatedRule() override;

  PluginCallResult RequiredTensors(int64_t step, std::vector<TensorRequirement>* out) override;
  PluginCallResult Invoke(int64_t step) override;
  void StartInvoke(int64_t step, const InvokeInput& input) override;
  bool PredictRequirements(int64_t step, std::vector<TensorRequirement>* out) override;
  void DeclareSteps(std::span<const int64_t> steps) override;
  void ForgetPredictions() override;
  bool PeekRequirements(int64_t step, std::vector<TensorRequirement>* out) const override;
  void StartInvokeSteps(std::span<const int64_t> steps, const InvokeInput& input) override;
  std::vector<PluginCallResult> InvokeSteps(std::span<const int64_t> steps) override;
  bool polls() const override { return polls_; }
  PluginCallResult Poll(int64_t last_step) override;
  const std::vector<std::string>& extra_action_json() const override { return ctx_.added_actions; }
  const RuleReport& report() const override { return report_; }
  bool stopped() const override { return stopped_; }
  RuleReport& mutable_report() override { return report_; }
  void RestoreReport(RuleReport report) override { report_ = std::move(report); }
  const LoadedRule& rule() const override { return rule_; }

 private:
  IsolatedRule(const LoadedRule& rule, std::string configuration_name, std::vector<Trial*> trials,
               WorkerLimits limits, std::shared_ptr<SharedArena> arena, std::shared_ptr<TensorTable> table);

  // One request: sends it, serves the worker until its reply (stored in *reply). On failure,
  // returns the call's result (and the worker is dead), else nullopt.
  // type kNone: only receive (the request went out already), up to a `expected` reply.
  std::optional<PluginCallResult> Call(MessageType type, const std::string& payload, PluginCallPhase phase,
                                       const std::string& what, Message* reply,
                                       MessageType expected = MessageType::kReply);
  // A call's limits: the rule's timeout from now, and a stop request.
  Channel::Limits CallLimits() const;
  // Sends the request of a call whose reply is received later (StartInvoke, StartInvokeSteps);
  // false, and the rule broken (the receiving half reports it as `what`), if it could not.
  bool SendRequest(MessageType type, const std::string& payload, const std::string& what);
  // Answers one kQuery with the runner's host functions.
  std::string Answer(std::string_view query);
  // The worker is gone or must go: kills and reaps it, and fails this and every later call.
  PluginCallResult Fail(const std::string& what, const std::string& cause);
  // Why a conversation broke off (`failure` of a Send/Receive), as the call's failure.
  PluginCallResult Broken(Channel::Failure failure, const std::string& what);
  // A stop was requested during a call: kills the worker; this and every later call is a
  // skipped step.
  PluginCallResult Stopped();
  // A value that changes whenever a trial refresh found something new (the worker caches
  // catalog answers until it changes).
  uint64_t Generation() const;
  // The step's table (if any), then the rule's required tensors at `step` that the worker can
  // read from the shared memory and does not find in that table (TensorTable).
  void AppendLocalTensors(int64_t step, const InvokeInput& input, Encoder& out);
  std::optional<PluginCallResult> ReadResult(Decoder& in, const std::string& what);
  // A kRequiredTensors reply (result, then the requirements, recorded into *out).
  // Reads the requirement list of a reply about `step` (protocol.h: in full or as a repeat).
  PluginCallResult ReadRequirements(Decoder& in, const std::string& what, int64_t step,
                                    std::vector<TensorRequirement>* out);
  // Reads the pending kAheadReply, if any (before any other request).
  void DrainAhead();
  // The step the runner will most likely declare next: the first available step of the base
  // trial after the last one it declared.
  std::optional<int64_t> NextDeclareStep() const;
  // The first available step of the base trial after `step`.
  std::optional<int64_t> NextAvailableAfter(int64_t step) const;

  const LoadedRule& rule_;
  const std::string configuration_name_;
  const std::vector<Trial*> trials_;
  const WorkerLimits limits_;
  const std::shared_ptr<SharedArena> arena_;
  const std::shared_ptr<TensorTable> table_;  // shared by the job's rules
  RuleReport report_;
  litmus_ctx ctx_;        // the runner's host functions run on it for this rule (after report_)
  litmus_ctx require_ctx_;  // require_tensor checks during set_required_tensors
  std::unique_ptr<WorkerProcess> process_;
  std::unique_ptr<Channel> channel_;
  std::unique_ptr<ProgressSlot> progress_;  // where the worker is inside a call of several steps
  bool polls_ = false;
  std::optional<PluginCallResult> failed_;  // once the worker is gone
  bool stopped_ = false;
  // What RequiredTensors returned per step (the rule's trial numbering), for Invoke's table.
  std::map<int64_t, std::vector<TensorRequirement>> declared_;
  // The requirement lists the worker sent or confirmed, as it keeps them (a kSameRequirements
  // reply repeats the last; a kInvokeSteps step names the one its prediction moved), and the
  // predictions for the next InvokeSteps.
  RequirementPredictor predictor_;
  std::optional<int64_t> last_declared_;
  // set_required_tensors run ahead (see protocol.h): asked for, and its result once read.
  struct Ahead {
    int64_t step = 0;
    uint64_t generation = 0;
    PluginCallResult result;
    std::vector<TensorRequirement> requirements;
  };
  std::optional<Ahead> ahead_pending_;  // step and generation only
  std::optional<Ahead> ahead_;
  std::deque<Ahead> declared_steps_;  // what DeclareSteps read, ascending, not asked for yet
  // A DeclareSteps request sent, its reply not read yet (FinishDeclareSteps, from DrainAhead).
  struct DeclaringSteps {
    std::vector<int64_t> steps;
    uint64_t generation = 0;
    std::string range;  // "first-last"
    std::string what;   // where, for messages
  };
  std::optional<DeclaringSteps> declaring_;
  void FinishDeclareSteps();
  // An Invoke whose request StartInvoke sent (step, generation, ahead step).
  struct Started {
    int64_t step = 0;
    uint64_t generation = 0;
    std::optional<int64_t> next;
  };
  std::optional<Started> started_;
  std::string InvokeRequest(const Started& started, const InvokeInput& input);
  // The kInvokeSteps request StartInvokeSteps sent (its first step, generation, ahead step).
  std::optional<Started> started_steps_;
  size_t sent_steps_ = 0;  // of the span StartInvokeSteps was given
  // The slowest recent time per step of an invoke call, and how many steps fit in one call.
  double step_seconds_ = 0;
  size_t StepsThatFit(size_t steps) const;
  // "in a call of steps A-B (--rule-batch-steps)" for a call of `steps`.
  static std::string AtSteps(std::span<const int64_t> steps);
  // Queries about "this step" (tensor_names with a step, step_mode): rules ask them at every
  // step, so each one seen is answered ahead with the next Invoke (templates, step zeroed).
  struct StepQuery {
    std::string args;
    size_t step_offset = 0;
    bool ahead = false;  // asked in the set_required_tensors run ahead, else in invoke_at_step
    // Set: the field at step_offset is a mode step, this far from the step's own mode step, and
    // the query is answered ahead for steps of `mode` (of `trial`) only (global_step queries).
    std::optional<int64_t> mode_step_delta;
    uint32_t trial = 0;
    int32_t mode = 0;
  };
  static constexpr size_t kMaxStepQueries = 16;
  std::vector<StepQuery> step_queries_;
  std::optional<std::pair<int64_t, bool>> query_step_;  // the step of the call being served
  // For the debug line at the end: invoke requests sent, the steps they held (a call of several
  // steps may run fewer), queries asked during invoke calls (those not answered ahead), and
  // requests for set_required_tensors alone (not run ahead after an invoke).
  int64_t invoke_calls_ = 0;
  int64_t steps_invoked_ = 0;
  int64_t queries_in_invoke_ = 0;
  int64_t declare_calls_ = 0;
  // A kInvokeSteps call is served: a query may be about any of its steps, not only the first
  // (a step query names its step; a mode-step query is not remembered then).
  bool query_in_later_steps_ = false;
  void RememberStepQuery(std::string_view query, size_t step_offset, int64_t step);
  void RememberModeStepQuery(std::string_view query, size_t step_offset, uint32_t trial, int32_t mode,
                             int64_t mode_step);
  // A mode-step query seen once, and the step it was about (remembered when seen at another).
  std::optional<std::pair<StepQuery, int64_t>> mode_step_candidate_;
  // The mode step of `step` of the rule's `trial` if the step is of `mode`.
  std::optional<int64_t> ModeStepOf(uint32_t trial, int64_t step, int32_t mode);
  // Answers to the remembered queries about "this step": those of invoke_at_step at `step`, and
  // those of set_required_tensors at each of `declare_steps`; those that depend on a trial
  // only are taken from, or added to, `shared` (if not null).
  void AppendStepQueryAnswers(int64_t step, std::span<const int64_t> declare_steps, QueryAnswerCache* shared,
                              Encoder& out);
  std::unordered_map<const char*, uint32_t> name_ids_;  // by the trial's copy of the name
  // The worker's interned series names (protocol.h "Series points"), by id, each with its
  // position in ctx_.report->series once known (ReportSeriesAt).
  struct SeriesName {
    std::string series;
    std::string tensor;
    uint32_t index = SeriesStore::kNotFound;
  };
  std::vector<SeriesName> series_names_;
  // Decodes and records a kReportSeries note; false on a malformed one.
  bool ReadSeriesNote(std::string_view payload);
  std::vector<TensorPtr> keep_alive_;  // values the worker may be reading
};

}  // namespace litmus::isolation
