// JobRunner: setup (reporter, plugins, trials, rule instances), the invoke loop, prefetching and
// the end-of-job bookkeeping.
#include "run/job_runner.h"

#include <spdlog/spdlog.h>
#include <tbb/parallel_for_each.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <compare>
#include <iterator>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>

#include "litmus/actions/action_spec.h"
#include "litmus/actions/aws_action_client.h"
#include "litmus/actions/rule_actions.h"
#include "isolation/query_answer_cache.h"
#include "isolation/rule_handle.h"
#include "isolation/stop_watchdog.h"
#include "litmus/engine/trial.h"
#include "plugin/host_api.h"
#include "plugin/plugin_loader.h"
#include "plugin/rule_instance.h"
#include "run/condition_met_line.h"
#include "run/end_marker_watch.h"
#include "run/checkpoint.h"
#include "run/job_report.h"
#include "run/read_key.h"
#include "run/rule_source.h"
#include "run/progress_reporter.h"
#include "run/series_files.h"
#include "run/step_range.h"
#include "run/stop_signal.h"
#include "run/trial_wait.h"

namespace litmus {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitConditionMet = 1;
constexpr int kExitClientError = 2;
constexpr int kExitInternal = 3;
constexpr int kExitStopped = 143;

// How one rule's evaluation at one step turned out.
enum class StepOutcome {
  kNotMet,
  kMet,
  kSkipped,     // tensor/step unavailable: nothing observable, next step
  kNoMoreData,  // the rule is done
  kClientError,
  kInternalError,
  // The job is stopping and the call did not finish: the step was not evaluated (it stays the
  // rule's next step, for a resumed job).
  kInterrupted,
};

// The last two (trial, step) pairs found available. Rules require many tensors at the same step,
// often two steps in turn (this one and the one before), and an available step stays available
// until the trial is refreshed: asking the catalog once per tensor and step was ~8 % of the
// runner's instructions with 20 rules on small tensors.
class AvailableSteps {
 public:
  bool Has(uint32_t trial, int64_t step) const { return seen_[0] == Key(trial, step) || seen_[1] == Key(trial, step); }
  void Add(uint32_t trial, int64_t step) {
    seen_[1] = seen_[0];
    seen_[0] = Key(trial, step);
  }

 private:
  using Key = std::pair<uint32_t, int64_t>;
  Key seen_[2] = {{UINT32_MAX, INT64_MIN}, {UINT32_MAX, INT64_MIN}};
};

}  // namespace

// How the job's rules run (docs/run.md "Isolation and limits").
static IsolationOptions IsolationOptionsOf(const JobConfig& config) {
  IsolationOptions options;
  options.mode = config.isolate_rules ? IsolationMode::kProcess : IsolationMode::kNone;
  options.rule_timeout_s = config.rule_timeout_s;
  options.rule_memory_bytes = config.rule_memory_bytes;
  options.batch_steps = static_cast<size_t>(config.rule_batch_steps);
  options.log_dir = config.output_dir + "/rule-logs";
  // Decoded tensors live here while cached or handed to a rule (sparse: unused pages cost nothing).
  options.arena_bytes = 2 * config.prefetch_memory_bytes + (uint64_t{256} << 20);
  options.prestart = config.rules.size();
  options.allow_unknown_params = config.allow_unknown_params;
  options.keep_series = config.keep_series;
  return options;
}

struct JobRunner::Impl {
  struct RuleState {
    RuleJobConfig config;
    std::unique_ptr<RuleHandle> instance;  // in this process or in a worker (isolation/)
    std::vector<uint32_t> trial_indices;  // this rule's trials in `trials` (base first)
    int64_t cursor = 0;                   // next global step to consider
    bool done = false;
    RuleStatus status = RuleStatus::kInProgress;
    std::string details;
    int exit_code = kExitOk;
    std::vector<int64_t> fired_steps;
    int64_t datapoints = 0;
    int64_t last_step = -1;
    double seconds = 0;                 // in the rule's own calls (the verdict's time)
    double last_call_seconds = 0;       // of its last invoke call (the longest go first)
    std::vector<std::string> warnings;  // recorded in status.json and the rule report
    int64_t damaged_skipped = 0;        // steps skipped for damaged records (--skip-damaged)
    // A resumed job: the firings an earlier run of it already reported (no event, no action again).
    std::set<int64_t> reported_firings;
    // Requirements already declared for a step (set_required_tensors is called once per step).
    std::map<int64_t, std::pair<PluginCallResult, std::vector<TensorRequirement>>> declared;
    // action_json plus the rule's own add_action registrations (ConfigureActions), and their
    // state once prepared at rule start (PrepareActions).
    std::vector<actions::ActionSpec> action_specs;
    std::unique_ptr<actions::RuleActions> actions;
  };

  JobConfig config;
  Env* env;
  // `env` as the trials see it: a local trial folder that does not exist yet opens as empty.
  std::unique_ptr<PendingFolderEnv> trial_env;
  std::unique_ptr<JobReporter> reporter;
  std::unique_ptr<ProgressReporter> progress;
  int64_t steps_evaluated = 0;  // distinct steps the loop evaluated (progress)
  std::optional<int64_t> last_evaluated_step;
  std::vector<VerdictRow> verdict;  // filled when the job ends
  // Resume (run/checkpoint.h): restarts of this job so far, and when the checkpoint was written.
  int64_t restarts = 0;
  std::chrono::steady_clock::time_point last_checkpoint{};
  // While set, EndRule leaves its forced checkpoint to CheckpointEndedRules (end_checkpoint_due).
  bool defer_end_checkpoints = false;
  bool end_checkpoint_due = false;
  PluginRegistry registry;
  // Local copies of s3:// Python rule sources; declared before `isolation`, so they outlive the
  // rule workers that load them.
  RuleSourceCopies rule_sources;
  std::vector<std::string> trial_paths;          // unique paths, base trial first
  std::vector<std::unique_ptr<Trial>> trials;
  std::unique_ptr<actions::ActionClient> action_client;  // created when a rule has actions
  std::vector<std::unique_ptr<RuleState>> rules;
  std::unique_ptr<StopSignal> stop;
  // Ends idle waits when a local trial's end marker appears (the poll interval bounds the rest).
  EndMarkerWatch end_marker_watch;
  std::unique_ptr<RuleIsolation> isolation;  // created by Setup, before any trial opens
  tbb::task_group prefetch_group;
  bool prefetch_running = false;
  // What the last background prefetch read (sorted): the next fetch reads only the rest.
  std::vector<ReadKey> prefetched;
  // What the last step read and the next one does not need, handed to the next prefetch task
  // to release (only this thread touches it).
  std::vector<ReadKey> stale;
  // The keys the prefetch started by the evaluation of step `upcoming_for` reads: declared ahead,
  // at the end of the evaluation before it (see EvaluateStep).
  std::vector<ReadKey> upcoming;
  std::optional<int64_t> upcoming_for;
  // Of `prefetched`, what the background prefetch decoded without error (sorted; written by that
  // task, read after JoinPrefetch), and the count of refreshes when it started.
  std::vector<ReadValue> prefetched_readable;
  uint64_t prefetched_at_refresh = 0;
  // Keys of the step being evaluated that are decoded without error (sorted): the fetch checks
  // need not read them again, and isolated rules take the values from here. Emptied by every
  // refresh, which can change what a key resolves to.
  std::vector<ReadValue> readable;
  // Of `readable`, built once its reads are in (a stale index is only slower: ReadValueIndex).
  ReadValueIndex readable_index;
  // The shared table of the step being invoked (RuleIsolation::ShareStep), and `trials` as pointers.
  std::shared_ptr<const isolation::StepTable> step_table;
  std::vector<Trial*> trial_pointers;
  // --rule-batch-steps: the values of a call of several steps stay about this size, by the bytes
  // per step of the last step or call evaluated (unknown before the first: one step). Calls of
  // several steps pay where a step's work is small (a round trip costs more than the rule's work
  // on a few small tensors); on larger steps, reading a step while the rules work on the one
  // before (EvaluateStep's prefetch) pays more: CustomGradientRule on 200 tensors of 4 KiB a step
  // took 1.43 s in calls of 16 steps against 1.01 s one step a call (best of 3).
  static constexpr uint64_t kBatchBytes = uint64_t{1} << 20;
  std::optional<uint64_t> last_step_bytes;
  bool evaluated_any = false;  // EvaluateStep has run (see its first step's read of the next)
  // The bytes of a step's values, a summary's (Trial::Prefetch) counted as its whole value: the
  // next steps' may be read whole (a rule that read one, or another rule requiring them raw),
  // and a call of many such steps would hold more than the shared memory.
  static uint64_t BytesOf(const std::vector<ReadValue>& values) {
    uint64_t bytes = 0;
    for (const ReadValue& v : values) {
      if (v.value == nullptr) continue;
      bytes += v.value->is_summary() ? static_cast<uint64_t>(v.value->num_elements()) * DTypeSize(v.value->dtype())
                                     : v.value->bytes().size();
    }
    return bytes;
  }
  uint64_t refreshes = 0;
  std::chrono::steady_clock::time_point last_report_write{};
  // What the rules watched (ABI 1.3), and who else wants to know (run/job_observer.h).
  SeriesFiles series_files;
  std::vector<JobObserver*> observers;

  Impl(JobConfig c, Env* e)
      : config(std::move(c)), env(e), trial_env(e ? std::make_unique<PendingFolderEnv>(e) : nullptr) {}

  std::chrono::milliseconds ProgressInterval() const {
    return std::chrono::milliseconds(static_cast<int64_t>(config.progress_interval_s * 1000));
  }

  // Runs `call` and adds its duration to the rule's time.
  template <class Call>
  auto Timed(RuleState& r, Call&& call) {
    const auto started = std::chrono::steady_clock::now();
    auto result = call();
    r.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
  }

  Trial& base() { return *trials[0]; }

  // Every refresh of a trial goes through here (see `readable`).
  Status RefreshTrial(Trial& trial) {
    ++refreshes;
    readable.clear();
    Status refreshed = trial.Refresh();
    ReleaseEndMarkerWatchOnceEnded();
    return refreshed;
  }

  // Once every trial has loaded all its steps (its end marker seen and listed after), no wait
  // can end early any more: the watch is released (its closing is not waited for).
  void ReleaseEndMarkerWatchOnceEnded() {
    if (std::all_of(trials.begin(), trials.end(), [](const auto& t) { return t->loaded_all_steps(); })) {
      end_marker_watch.Release();
    }
  }

  void JoinPrefetch() {
    if (!prefetch_running) return;
    prefetch_group.wait();
    prefetch_running = false;
  }

  // ---- setup ----------------------------------------------------------------------------------

  StatusOr<uint32_t> OpenTrial(const std::string& path) {
    for (uint32_t i = 0; i < trial_paths.size(); ++i) {
      if (trial_paths[i] == path) return i;
    }
    TrialOptions options = TrialOptions::FromEnvironment();
    options.cache_bytes = config.prefetch_memory_bytes;
    if (isolation) options.record_buffers = isolation->record_buffers();
    // Training may not have created the folder yet: waited for (WaitForCollections), not an error.
    if (IsMissingLocalFolder(path)) trial_env->AddPendingFolder(path);
    end_marker_watch.Watch(path);  // before the first look for the marker, so none is missed
    auto trial = Trial::Open(trial_env.get(), path, options);
    if (!trial.ok()) return trial.status().WithContext("trial " + path);
    trial_paths.push_back(path);
    trials.push_back(std::move(trial).value());
    trial_pointers.push_back(trials.back().get());
    return static_cast<uint32_t>(trials.size() - 1);
  }

  // smdebug's create_trial waits for the collections files; the end marker without them is
  // MissingCollectionFiles. What is waited for is logged at once and then at every progress
  // interval (a missing folder, an empty one, no collections file yet); a folder that holds
  // trials but is not one is an error naming them. Rules with on_poll are polled meanwhile (a
  // job that never writes anything must still be able to stall); returns early once every rule
  // has ended.
  Status WaitForCollections(Trial& trial) {
    WaitNotice notice(ProgressInterval());
    while (true) {
      const std::optional<std::string> waiting = TrialWaitState(trial);
      if (!waiting) return OkStatus();
      // (The end marker alone is not enough: a worker's collections file may still be on its way.)
      if (trial.loaded_all_steps()) {
        return FailedPreconditionError(
            "No debugging data was saved by the training job. Check that the debugger hook was configured correctly "
            "before starting the training job. Exception: Training job has ended. All the collection files could not "
            "be loaded (trial " + trial.root() + ")");
      }
      if (const NestedTrials nested = FindNestedTrials(trial.root()); !nested.names.empty()) {
        return InvalidArgumentError(NestedTrialsMessage(trial.root(), nested));
      }
      if (notice.Due()) {
        if (const int64_t waited = notice.WaitedSeconds(); waited > 0) {
          spdlog::warn("{} (waiting for {} s)", *waiting, waited);
        } else {
          spdlog::warn("{}", *waiting);
        }
      }
      if (PollIdleRules() && AllRulesDone()) return OkStatus();
      if (end_marker_watch.SleepFor(*stop, std::chrono::milliseconds(config.poll_interval_ms))) return OkStatus();
      LITMUS_RETURN_IF_ERROR(RefreshTrial(trial));
    }
  }

  // Waits for every trial's collections files (after RuleStarted, so that a rule's on_poll can
  // fire meanwhile). A failure ends every rule still running with that ClientError.
  void WaitForTrials() {
    for (auto& trial : trials) {
      if (Status s = WaitForCollections(*trial); !s.ok()) {
        for (auto& r : rules) {
          if (r->done) continue;
          r->exit_code = kExitClientError;
          EndRule(*r, RuleStatus::kError, "ClientError: " + s.message());
        }
        return;
      }
      if (stop->ShouldStop() || AllRulesDone()) return;  // Loop() handles both
    }
  }

  bool AllRulesDone() const {
    return std::all_of(rules.begin(), rules.end(), [](const auto& r) { return r->done; });
  }

  // ABI 1.1: calls on_poll of every running rule that has one, when no step is ready to evaluate.
  // A condition met is reported at the rule's last evaluated step (0 before any). Returns true if
  // a rule ended.
  bool PollIdleRules() {
    bool ended = false;
    for (auto& r : rules) {
      if (r->done || !r->instance->polls()) continue;
      std::string message;
      const PluginCallResult polled = Timed(*r, [&] { return r->instance->Poll(r->last_step); });
      switch (Classify(*r, polled, &message)) {
        case StepOutcome::kNotMet:
        case StepOutcome::kSkipped:
        case StepOutcome::kInterrupted:
          break;
        case StepOutcome::kMet:
          Fired(*r, std::max<int64_t>(r->last_step, 0));
          break;
        case StepOutcome::kNoMoreData:
          EndRule(*r, RuleStatus::kNoIssuesFound, "no more data");
          break;
        case StepOutcome::kClientError:
          r->exit_code = kExitClientError;
          EndRule(*r, RuleStatus::kError, "ClientError: " + message);
          break;
        case StepOutcome::kInternalError:
          r->exit_code = kExitInternal;
          EndRule(*r, RuleStatus::kError, "InternalServerError: " + message);
          break;
      }
      ended |= r->done;
    }
    return ended;
  }

  Status LoadAllPlugins() {
    std::vector<std::string> files = config.plugin_files;
    for (const auto& rule : config.rules) {
      if (!rule.plugin.empty()) files.push_back(rule.plugin);
    }
    LITMUS_RETURN_IF_ERROR(LoadPlugins(registry, files, config.plugin_dirs));
    for (const auto& w : registry.warnings()) spdlog::warn("{}", w);
    return OkStatus();
  }

  // Returns an exit code (0 = ready).
  int Setup(std::string* error_line) {
    auto client_error = [&](const Status& s) {
      *error_line = "ClientError: " + s.message();
      return kExitClientError;
    };
    // Rule workers start first: they load while plugins and trials are read here.
    auto created_isolation = RuleIsolation::Create(IsolationOptionsOf(config));
    if (!created_isolation.ok()) {
      *error_line = "InternalServerError: " + created_isolation.status().message();
      return kExitInternal;
    }
    isolation = std::move(created_isolation).value();
    if (Status s = LoadAllPlugins(); !s.ok()) return client_error(s);
    auto base_index = OpenTrial(config.trial);
    if (!base_index.ok()) return client_error(base_index.status());
    for (JobObserver* o : observers) o->TrialOpened(base());

    for (const RuleJobConfig& rc : config.rules) {
      auto state = std::make_unique<RuleState>();
      state->config = rc;
      state->cursor = rc.start_step;
      state->trial_indices.push_back(0);
      for (const auto& other : rc.other_trials) {
        auto index = OpenTrial(other);
        if (!index.ok()) return client_error(index.status());
        state->trial_indices.push_back(*index);
      }
      rules.push_back(std::move(state));
    }
    std::set<std::string> names;
    for (auto& state : rules) {
      auto found = registry.FindRule(state->config.plugin_rule.empty() ? state->config.rule : state->config.plugin_rule);
      if (!found.ok()) return client_error(found.status());
      const LoadedRule& rule = **found;
      // From here on (create's failures included) the rule is shown by its class name, never by
      // the alias the user typed ("tree_depth" -> TreeDepth).
      UseClassName(state->config);
      if (!names.insert(state->config.configuration_name).second) {
        return client_error(InvalidArgumentError("two rules are named " + state->config.configuration_name +
                                                 ": give each a distinct name (RuleConfigurationName)"));
      }
      // start_step/end_step reach a rule only if it declares them (Overfit does).
      ParameterMap params = state->config.parameters;
      for (const char* runner_key : {"start_step", "end_step"}) {
        const bool declared = std::any_of(rule.params.begin(), rule.params.end(),
                                          [&](const LoadedRule::Param& p) { return p.name == runner_key; });
        if (!declared) params.erase(runner_key);
      }
      // A Python rule from S3: the host (in this process or a worker) loads a local copy, fetched
      // once at job start; source_s3_uri keeps the URI for messages and the rule report.
      if (auto source = params.find("source_s3_uri");
          !state->config.plugin_rule.empty() && source != params.end() && source->second.starts_with("s3://")) {
        auto local = rule_sources.Fetch(env, source->second);
        if (!local.ok()) return client_error(local.status());
        params["source_file"] = *local;
      }
      std::vector<Trial*> rule_trials;
      for (uint32_t i : state->trial_indices) rule_trials.push_back(trials[i].get());
      std::vector<std::string> warnings;
      auto instance = Timed(*state, [&] {
        return isolation->CreateRule(rule, state->config.configuration_name, rule_trials, params, &warnings);
      });
      for (const auto& w : warnings) spdlog::warn("{}", w);
      state->warnings = warnings;
      if (!instance.ok()) {
        if (instance.status().code() == StatusCode::kInvalidArgument) return client_error(instance.status());
        *error_line = "InternalServerError: " + instance.status().message();
        return kExitInternal;
      }
      state->instance = std::move(instance).value();
      // action_json plus the actions the rule registered itself in create (add_action, ABI 1.1).
      if (Status s = ConfigureActions(*state, state->instance->extra_action_json()); !s.ok()) {
        return client_error(s);
      }
    }
    // The trials' collections files are waited for later (WaitForTrials; training may not have
    // saved its first step yet): configuration errors are reported at once, not after training
    // starts.
    return kExitOk;
  }

  // Replaces the rule name as typed (any case, snake_case) by the class name of the rule it finds
  // in the registry, if any, and defaults the configuration name to it.
  void UseClassName(RuleJobConfig& rc) const {
    // (A Python rule keeps its Python class name: its plugin rule is the host's PythonRule.)
    if (auto found = registry.FindRule(rc.rule); found.ok() && rc.plugin_rule.empty()) rc.rule = (*found)->name;
    if (rc.configuration_name.empty()) rc.configuration_name = rc.rule;
  }

  // A job that ends before any rule started (a configuration or setup error): every rule of the
  // configuration Error with `line`, status.json with `code`, and the message/failure files.
  // Rules are named as UseClassName does. Logs nothing (the caller prints the one error line).
  int FailBeforeStart(int code, const std::string& line) { return EndBeforeStart(code, RuleStatus::kError, line); }

  // A job stopped during its setup: every rule of the configuration Stopped, exit code 143.
  int StopBeforeStart() { return EndBeforeStart(kExitStopped, RuleStatus::kStopped, "Stopped: " + stop->Reason()); }

  int EndBeforeStart(int code, RuleStatus status, const std::string& line) {
    for (RuleJobConfig rc : config.rules) {
      UseClassName(rc);
      reporter->AddRule(rc.configuration_name, rc.rule);
      reporter->SetRuleStatus(rc.configuration_name, status, line, std::nullopt);
    }
    reporter->Finish(code, line);
    verdict = ErrorVerdict();
    for (VerdictRow& row : verdict) row.status = RuleStatusName(status);
    return code;
  }

  // The verdict of a job that ended before its rules started: every rule of the configuration Error.
  std::vector<VerdictRow> ErrorVerdict() const {
    std::vector<VerdictRow> rows;
    for (RuleJobConfig rc : config.rules) {
      UseClassName(rc);
      VerdictRow row;
      row.rule = rc.configuration_name;
      row.status = RuleStatusName(RuleStatus::kError);
      rows.push_back(std::move(row));
    }
    return rows;
  }

  // ---- actions (docs/job-contract.md §8, docs/actions.md) ---------------------------------------

  // Parses the rule's action_json and `extra_action_jsons` (actions the rule registered itself
  // through add_action, same JSON form). InvalidArgument (exit 2) for malformed JSON or an invalid
  // prefix/endpoint; skipped and unknown actions are warnings.
  Status ConfigureActions(RuleState& r, const std::vector<std::string>& extra_action_jsons) {
    std::vector<std::string> notes;
    auto specs = actions::ParseRuleActions(r.config.action_json, extra_action_jsons, &notes);
    for (const auto& note : notes) spdlog::warn("rule {}: {}", r.config.configuration_name, note);
    if (!specs.ok()) return specs.status().WithContext("rule " + r.config.configuration_name);
    r.action_specs = std::move(specs).value();
    return OkStatus();
  }

  // At rule start: the actions' AWS calls (ListTrainingJobs, CreateTopic, ...), one
  // ActionPrepared event each (none once a stop was requested). A failure is an event, never
  // the rule's outcome.
  void PrepareActions(RuleState& r) {
    if (r.action_specs.empty() || stop->ShouldStop()) return;
    if (!action_client) action_client = actions::NewAwsActionClient();
    r.actions = std::make_unique<actions::RuleActions>(r.action_specs, action_client.get());
    for (const auto& result : r.actions->Prepare()) ActionEvent("ActionPrepared", r, r.cursor, result);
  }

  // One firing: every action of the rule once, one ActionInvoked event each.
  void InvokeActions(RuleState& r, int64_t step, const std::string& message) {
    if (!r.actions) return;
    for (const auto& result : r.actions->Fire(r.config.rule, message)) ActionEvent("ActionInvoked", r, step, result);
  }

  void ActionEvent(const char* event, const RuleState& r, int64_t step, const actions::ActionResult& result) {
    const bool failed = result.outcome == actions::ActionOutcome::kFailed;
    reporter->Event({.event = event,
                     .rule = r.config.configuration_name,
                     .rule_class = r.config.rule,
                     .step = step,
                     .mode = std::nullopt,
                     .mode_step = std::nullopt,
                     .message = failed ? result.error : result.detail,
                     .status = std::nullopt},
                    {{"action", result.action},
                     {"target", result.target},
                     {"outcome", std::string(actions::ActionOutcomeName(result.outcome))},
                     {"error", result.error}});
  }

  // ---- the loop -------------------------------------------------------------------------------

  // The next step a rule can be evaluated at, after skipping unavailable ones; nullopt if the
  // rule must wait for more data. Ends the rule when its data is exhausted.
  std::optional<int64_t> NextReadyStep(RuleState& r) {
    const std::optional<int64_t> end = r.config.end_step;
    while (!r.done) {
      if (end && r.cursor >= *end) {
        EndRuleAtEndOfRange(r, "end_step " + std::to_string(*end) + " reached");
        return std::nullopt;
      }
      const std::optional<int64_t> next = base().FirstStepAtOrAfter(r.cursor);
      if (!next) {
        if (base().loaded_all_steps()) EndRuleAtEndOfRange(r, "no more data: training has ended");
        return std::nullopt;
      }
      const int64_t step = *next;
      if (end && step >= *end) {
        // A later step exists past end_step: nothing below end_step will come.
        if (base().IsStepComplete(step) || base().loaded_all_steps()) {
          EndRuleAtEndOfRange(r, "end_step " + std::to_string(*end) + " reached");
        }
        return std::nullopt;
      }
      switch (base().StepAvailability(step)) {
        case StepState::kAvailable:
          return step;
        case StepState::kNotYetAvailable:
          return std::nullopt;
        case StepState::kUnavailable:
        case StepState::kNoMoreData:
          spdlog::debug("rule {}: step {} is not available as it was not saved", r.config.configuration_name, step);
          r.cursor = step + 1;
          break;
      }
    }
    return std::nullopt;
  }

  // A rule whose steps are exhausted ends NoIssuesFound with `details`, unless its step range
  // selected no saved step of the trial at all: then it says so (a warning, and StatusDetails).
  void EndRuleAtEndOfRange(RuleState& r, std::string details) {
    if (r.datapoints == 0 && r.fired_steps.empty() && r.last_step < 0) {
      if (auto note = EmptyStepRangeNote(base().Steps(Mode::kGlobal, /*include_incomplete=*/true),
                                         r.config.start_step, r.config.end_step)) {
        spdlog::warn("rule {}: {}", r.config.configuration_name, *note);
        r.warnings.push_back(*note);
        reporter->SetRuleWarnings(r.config.configuration_name, r.warnings);
        details = *note;
      }
    }
    EndRule(r, RuleStatus::kNoIssuesFound, details);
  }

  const std::pair<PluginCallResult, std::vector<TensorRequirement>>& Declare(RuleState& r, int64_t step) {
    auto it = r.declared.find(step);
    if (it == r.declared.end()) {
      std::vector<TensorRequirement> reqs;
      PluginCallResult result = Timed(r, [&] { return r.instance->RequiredTensors(step, &reqs); });
      // Translate the rule's trial numbers to job-wide trial indices.
      for (auto& req : reqs) req.trial = req.trial < r.trial_indices.size() ? r.trial_indices[req.trial] : UINT32_MAX;
      it = r.declared.emplace(step, std::make_pair(std::move(result), std::move(reqs))).first;
    }
    return it->second;
  }

  // Per trial, the (name, step) pairs of `keys` (keys of unknown trials dropped), and with
  // `positions` where each pair is in `keys`.
  // With `reductions_only` each pair's ReadKey::reductions_only (Trial::Prefetch's flags).
  std::vector<std::vector<Trial::StepTensor>> ByTrial(const std::vector<ReadKey>& keys,
                                                      std::vector<std::vector<size_t>>* positions = nullptr,
                                                      std::vector<std::vector<uint8_t>>* reductions_only = nullptr) const {
    std::vector<std::vector<Trial::StepTensor>> out(trials.size());
    if (positions != nullptr) positions->assign(trials.size(), {});
    if (reductions_only != nullptr) reductions_only->assign(trials.size(), {});
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i].trial >= trials.size()) continue;
      out[keys[i].trial].emplace_back(keys[i].name, keys[i].step);
      if (positions != nullptr) (*positions)[keys[i].trial].push_back(i);
      if (reductions_only != nullptr) (*reductions_only)[keys[i].trial].push_back(keys[i].reductions_only ? 1 : 0);
    }
    return out;
  }

  // Reads (into the trial caches) every key, in parallel and with adjacent records of an event
  // file batched into one read; used for the fetch and the background prefetch. Appends the keys
  // that decoded without error, with their values, to *readable_values, in the order of `keys`.
  // (Nothing to read, or one trial, calls no parallel algorithm here: waiting inside one, the
  // rules' thread could pick up the background prefetch's reads and keep the rules waiting.)
  void ReadAll(const std::vector<ReadKey>& keys, std::vector<ReadValue>* readable_values) {
    if (keys.empty()) return;
    std::vector<std::vector<size_t>> positions;
    std::vector<std::vector<uint8_t>> reductions_only;
    const auto by_trial = ByTrial(keys, &positions, &reductions_only);
    std::vector<std::vector<Trial::Prefetched>> decoded(trials.size());
    // (Rules take the decoded values from `readable`: isolated ones through the step table,
    // in-process ones through their handle's CallValues; what else they read, from the cache.)
    const bool with_values = isolation != nullptr;
    const auto read = [&](size_t t) {
      if (!by_trial[t].empty()) trials[t]->Prefetch(by_trial[t], &decoded[t], with_values, reductions_only[t]);
    };
    if (trials.size() == 1) {
      read(0);
    } else {
      tbb::parallel_for(size_t{0}, trials.size(), read);
    }
    const size_t first = readable_values->size();
    for (size_t t = 0; t < trials.size(); ++t) {
      for (size_t j = 0; j < decoded[t].size(); ++j) {
        Trial::Prefetched& p = decoded[t][j];
        if (p.decoded) readable_values->push_back({keys[positions[t][j]], std::move(p.value), p.stored_reductions});
      }
    }
    if (trials.size() > 1) std::sort(readable_values->begin() + static_cast<std::ptrdiff_t>(first), readable_values->end());
  }

  // Drops `keys` from the trial caches, so that they hold the next step's tensors rather than
  // stale ones (a rule that reads an old step again just reads it from storage).
  void ReleaseAll(const std::vector<ReadKey>& keys) {
    const auto by_trial = ByTrial(keys);
    for (size_t t = 0; t < trials.size(); ++t) {
      if (!by_trial[t].empty()) trials[t]->Release(by_trial[t]);
    }
  }

  // Appends the keys of `reqs` (a call gathers ~20 rules x 16 steps of them: no list each).
  static void AppendKeys(const std::vector<TensorRequirement>& reqs, std::vector<ReadKey>& keys) {
    for (const auto& req : reqs) {
      for (int64_t s : req.steps) keys.push_back({req.trial, req.reductions_only, req.name, s});
    }
  }

  // Whether the first worker's entry of `name` at `step` holds stored reductions but no raw value
  // (a reduction_config without save_raw_tensor). smdebug's fetch reads every required value, so
  // such a step is skipped (TensorUnavailableForStep), unless the rule required the tensor with
  // LITMUS_REQUIRE_REDUCTIONS_ONLY (ABI 1.2): then it reads the stored reductions
  // (docs/compatibility.md).
  static bool SavedOnlyAsReductions(const Trial& trial, const std::string& name, int64_t step) {
    const std::vector<TensorEntry> entries = trial.Entries(name, step);
    return !entries.empty() && !entries.front().location && !entries.front().stored_reductions.empty();
  }

  // smdebug's RequiredTensors.fetch for one rule: waits for the required steps of every trial,
  // then checks each value. Returns kNotMet when everything is there. With `damage`, a step
  // skipped for a damaged record (--skip-damaged) is not recorded but its record's error is
  // stored there (EvaluateSteps records it if it applies the skip).
  StepOutcome Fetch(RuleState& r, const std::vector<TensorRequirement>& reqs, std::string* message,
                    std::optional<Status>* damage = nullptr) {
    AvailableSteps available;
    for (const auto& req : reqs) {
      if (req.trial >= trials.size()) {
        *message = "rule " + r.config.configuration_name + " required a tensor of an unknown trial";
        return StepOutcome::kInternalError;
      }
      Trial& trial = *trials[req.trial];
      for (int64_t s : req.steps) {
        while (!available.Has(req.trial, s)) {
          const StepState state = trial.StepAvailability(s);
          if (state == StepState::kAvailable) {
            available.Add(req.trial, s);
            break;
          }
          if (state == StepState::kNoMoreData) return StepOutcome::kNoMoreData;
          if (state == StepState::kUnavailable) return StepOutcome::kSkipped;
          if (end_marker_watch.SleepFor(*stop, std::chrono::milliseconds(config.poll_interval_ms))) return StepOutcome::kInterrupted;
          JoinPrefetch();
          if (Status st = RefreshTrial(trial); !st.ok()) {
            *message = st.message();
            return StepOutcome::kClientError;
          }
        }
        if (readable_index.Find(readable, ReadKey{.trial = req.trial, .name = req.name, .step = s}) != nullptr) continue;
        auto value = trial.Value(req.name, s);
        // A record the index names that its event file does not hold yet (an upload on its way):
        // wait for it, as for the step; the trial turns it into DataLoss after its retry budget.
        while (!value.ok() && GetTrialError(value.status()) == TrialError::kStepNotYetAvailable) {
          if (end_marker_watch.SleepFor(*stop, std::chrono::milliseconds(config.poll_interval_ms))) return StepOutcome::kInterrupted;
          JoinPrefetch();
          if (Status st = RefreshTrial(trial); !st.ok()) {
            *message = st.message();
            return StepOutcome::kClientError;
          }
          value = trial.Value(req.name, s);
        }
        if (!value.ok()) {
          const auto error = GetTrialError(value.status());
          if (error == TrialError::kNoMoreData) return StepOutcome::kNoMoreData;
          if (error == TrialError::kTensorUnavailableForStep && req.reductions_only &&
              SavedOnlyAsReductions(trial, std::string(req.name), s)) {
            continue;
          }
          if (error) return StepOutcome::kSkipped;  // smdebug's fetch raises; invoke_rule moves on
          // Damaged data (a truncated, missing or corrupt record): an error, never "not saved",
          // unless the user chose to skip such steps (--skip-damaged), which is then recorded.
          if (config.skip_damaged && value.status().code() == StatusCode::kDataLoss) {
            if (damage != nullptr) {
              *damage = value.status();
            } else {
              SkippedDamaged(r, s, value.status());
            }
            return StepOutcome::kSkipped;
          }
          *message = value.status().message();
          return StepOutcome::kClientError;
        }
      }
    }
    return StepOutcome::kNotMet;
  }

  // --skip-damaged: a step skipped for a damaged record is a warning, counted in the rule's
  // report and listed (the first few) in status.json.
  void SkippedDamaged(RuleState& r, int64_t step, const Status& damage) {
    constexpr size_t kListed = 10;
    ++r.damaged_skipped;
    spdlog::warn("rule {}: step {} skipped (--skip-damaged): {}", r.config.configuration_name, step, damage.message());
    if (r.damaged_skipped <= static_cast<int64_t>(kListed)) {
      r.warnings.push_back("step " + std::to_string(step) + " skipped (--skip-damaged): " + damage.message());
      reporter->SetRuleWarnings(r.config.configuration_name, r.warnings);
    }
  }

  // Applies what a rule's call returned for `step`. --skip-damaged covers a damaged record the
  // rule read itself too.
  void ApplyInvokeResult(RuleState& r, int64_t step, const PluginCallResult& result) {
    std::string message;
    StepOutcome outcome = Classify(r, result, &message);
    if (outcome == StepOutcome::kClientError && !result.data_loss.empty() && config.skip_damaged) {
      SkippedDamaged(r, step, DataLossError(result.data_loss));
      outcome = StepOutcome::kSkipped;
    }
    Apply(r, step, outcome, message);
  }

  // Reads `keys` (sorted; what the prefetch did not read) and merges their values into `readable`.
  void ReadInto(const std::vector<ReadKey>& keys) {
    std::vector<ReadValue> read_now;
    ReadAll(keys, &read_now);
    if (read_now.empty()) return;
    const size_t middle = readable.size();
    readable.insert(readable.end(), std::make_move_iterator(read_now.begin()), std::make_move_iterator(read_now.end()));
    std::inplace_merge(readable.begin(), readable.begin() + static_cast<std::ptrdiff_t>(middle), readable.end());
  }

  StepOutcome Classify(const RuleState& r, const PluginCallResult& result, std::string* message) {
    // (An isolated rule's worker killed by the stop: its call has no outcome.)
    if (r.instance->stopped()) return StepOutcome::kInterrupted;
    if (result.status == LITMUS_OK) return StepOutcome::kNotMet;  // (the usual outcome: no text built)
    const std::string who = "rule " + r.config.rule + " (" + r.config.configuration_name + ", plugin " +
                            r.instance->rule().plugin_path + ")";
    if (SkipsTheStep(result.status)) {
      spdlog::debug("{}: {}", who, result.message);
      return StepOutcome::kSkipped;
    }
    switch (result.status) {
      case LITMUS_CONDITION_MET: return StepOutcome::kMet;
      case LITMUS_NO_MORE_DATA: return StepOutcome::kNoMoreData;
      case LITMUS_NOT_YET_AVAILABLE:
        *message = who + " read data that is not available yet (a future step?): " + result.message;
        return StepOutcome::kInternalError;
      case LITMUS_INVALID_CONFIG:
        *message = who + ": " + result.message;
        return StepOutcome::kClientError;
      default:
        // A rule that failed reading a damaged record itself (outside its required tensors, which
        // the fetch checks): the data's fault, as in the fetch, not the rule's.
        if (!result.data_loss.empty()) {
          *message = who + " read damaged data: " + result.data_loss;
          return StepOutcome::kClientError;
        }
        *message = who + " failed with " + LitmusStatusName(result.status) + ": " + result.message;
        return StepOutcome::kInternalError;
    }
  }

  void EndRule(RuleState& r, RuleStatus status, const std::string& details) {
    if (r.done) return;
    r.done = true;
    r.status = status;
    r.details = details;
    switch (status) {
      case RuleStatus::kIssuesFound: r.exit_code = kExitConditionMet; break;
      case RuleStatus::kStopped:
      case RuleStatus::kStopping: r.exit_code = kExitStopped; break;
      case RuleStatus::kError:
        if (r.exit_code == kExitOk) r.exit_code = kExitInternal;
        break;
      case RuleStatus::kNoIssuesFound:
        // --keep-going keeps evaluating after a firing; the verdict is still IssuesFound.
        if (!r.fired_steps.empty()) {
          r.status = RuleStatus::kIssuesFound;
          r.exit_code = kExitConditionMet;
          r.details = "RuleEvaluationConditionMet: " + ConditionMetText(r.config.rule, r.fired_steps.front());
        }
        break;
      case RuleStatus::kInProgress: break;
    }
    spdlog::info("Ended execution of rule {} at end_step {}", r.config.rule, r.cursor);
    reporter->SetRuleProgress(r.config.configuration_name, r.datapoints,
                              r.last_step >= 0 ? std::optional<int64_t>(r.last_step) : std::nullopt);
    // The step a status refers to: the first firing, else the last step evaluated.
    std::optional<int64_t> status_step;
    if (!r.fired_steps.empty()) {
      status_step = r.fired_steps.front();
    } else if (r.last_step >= 0) {
      status_step = r.last_step;
    }
    reporter->SetRuleStatus(r.config.configuration_name, r.status, r.details, status_step);
    reporter->Event({.event = "RuleEnded",
                     .rule = r.config.configuration_name,
                     .rule_class = r.config.rule,
                     .step = r.last_step >= 0 ? std::optional<int64_t>(r.last_step) : std::nullopt,
                     .mode = std::nullopt,
                     .mode_step = std::nullopt,
                     .message = r.details,
                     .status = std::string(RuleStatusName(r.status))});
    WriteReport(r);
    // A rule's end is checkpointed at once: a resumed job restores its numbers as they ended.
    // (Rules ending together share one checkpoint: see CheckpointEndedRules.)
    if (defer_end_checkpoints) {
      end_checkpoint_due = true;
    } else {
      MaybeCheckpoint(/*force=*/true);
    }
  }

  // Rules that end together (their steps exhausted at the trial's end, a stop) share one forced
  // checkpoint, written as soon as the last of them has ended, instead of one each: a checkpoint
  // is a fsync of the file and one of the folder, and 20 rules ending at once paid 40 of them.
  void CheckpointEndedRules() {
    defer_end_checkpoints = false;
    if (std::exchange(end_checkpoint_due, false)) MaybeCheckpoint(/*force=*/true);
  }

  void WriteReport(RuleState& r) {
    RuleReportData data;
    data.rule_triggered = static_cast<int64_t>(r.fired_steps.size());
    data.datapoints = r.datapoints;
    data.warnings = r.warnings;
    data.damaged_skipped = r.damaged_skipped;
    data.seconds = r.seconds;
    if (r.instance) {
      data.description = r.instance->rule().description;
      data.violations = r.instance->report().violations;
      data.details_json = r.instance->report().details.Json();
      for (const auto& p : r.instance->rule().params) {
        // The Python host's source_file is the runner's own (the local copy of an s3:// source,
        // a temporary path): the report names the source by its source_s3_uri.
        if (!r.config.plugin_rule.empty() && p.name == "source_file") continue;
        auto it = r.config.parameters.find(p.name);
        data.rule_parameters += p.name + ":" + (it != r.config.parameters.end() ? it->second : p.default_value) + "\n";
      }
    }
    reporter->WriteRuleReport(r.config.configuration_name, data);
    if (r.instance) {
      series_files.Write(*reporter, r.config.configuration_name, r.config.rule, r.instance->report().series, r.done);
    }
  }

  // An evaluated step, for the observers (with the series points the rule published since).
  void NotifyEvaluated(RuleState& r, int64_t step, bool met) {
    if (observers.empty() || !r.instance) return;
    SeriesStore& series = r.instance->mutable_report().series;
    const std::vector<SeriesStore::NewPoint> points = series.TakeNewPoints();
    for (JobObserver* o : observers) o->StepEvaluated(r.config.configuration_name, step, met, series, points);
  }

  void Fired(RuleState& r, int64_t step) {
    // Sorted and unique (a resumed rule starts with the firings reported before, in order).
    const auto at = std::lower_bound(r.fired_steps.begin(), r.fired_steps.end(), step);
    if (at == r.fired_steps.end() || *at != step) r.fired_steps.insert(at, step);
    if (r.instance) r.instance->mutable_report().series.MarkFiring(step);
    const auto mode = base().ModeOfGlobalStep(step);
    const std::string message = ConditionMetText(r.config.rule, step);
    if (r.reported_firings.contains(step)) {
      // Reported, with its actions, by the run this job resumes: the same firing, found again.
      spdlog::debug("{}: {} (reported before the restart)", r.config.configuration_name, message);
      if (!config.keep_going) EndRule(r, RuleStatus::kIssuesFound, "RuleEvaluationConditionMet: " + message);
      return;
    }
    spdlog::info("{}: {}", r.config.configuration_name, message);
    reporter->Event({.event = "RuleEvaluationConditionMet",
                     .rule = r.config.configuration_name,
                     .rule_class = r.config.rule,
                     .step = step,
                     .mode = mode ? std::optional<Mode>(mode->first) : std::nullopt,
                     .mode_step = mode ? std::optional<int64_t>(mode->second) : std::nullopt,
                     .message = message,
                     .status = std::nullopt});
    for (JobObserver* o : observers) o->RuleFired(r.config.configuration_name, step, message);
    InvokeActions(r, step, message);
    if (!config.keep_going) EndRule(r, RuleStatus::kIssuesFound, "RuleEvaluationConditionMet: " + message);
  }

  void Apply(RuleState& r, int64_t step, StepOutcome outcome, const std::string& message) {
    if (outcome == StepOutcome::kInterrupted) return;  // not evaluated: the loop ends the rule Stopped
    r.last_step = step;
    r.cursor = std::max(r.cursor, step + 1);
    switch (outcome) {
      case StepOutcome::kNotMet:
        ++r.datapoints;
        NotifyEvaluated(r, step, false);
        break;
      case StepOutcome::kMet:
        ++r.datapoints;
        NotifyEvaluated(r, step, true);
        Fired(r, step);
        break;
      case StepOutcome::kSkipped:
      case StepOutcome::kInterrupted:
        break;
      case StepOutcome::kNoMoreData:
        EndRule(r, RuleStatus::kNoIssuesFound, "no more data");
        break;
      case StepOutcome::kClientError:
        r.exit_code = kExitClientError;
        EndRule(r, RuleStatus::kError, "ClientError: " + message);
        break;
      case StepOutcome::kInternalError:
        r.exit_code = kExitInternal;
        EndRule(r, RuleStatus::kError, "InternalServerError: " + message);
        break;
    }
    r.declared.erase(r.declared.begin(), r.declared.upper_bound(step));
  }

  // Evaluates `step` for every rule in `ready`.
  void EvaluateStep(int64_t step, const std::vector<RuleState*>& ready) {
    // 1. Requirements (declared once per step; maybe already during the previous step). The union
    //    of every rule's requirements is read in parallel (what the prefetch already read is a
    //    cache hit), then each rule's fetch checks its own.
    std::vector<ReadKey> keys;
    for (RuleState* r : ready) {
      const auto& [result, reqs] = Declare(*r, step);
      if (result.status != LITMUS_OK) continue;
      AppendKeys(reqs, keys);
    }
    SortUniqueKeys(keys);
    JoinPrefetch();
    // What the prefetch read is in the caches already (unless evicted since: then the rule's own
    // read fetches it again), and looking every key up again costs as much as a small tensor.
    std::vector<ReadKey> unread;
    std::set_difference(keys.begin(), keys.end(), prefetched.begin(), prefetched.end(), std::back_inserter(unread));
    // What it decoded fine needs no fetch check (unless a refresh came since).
    readable.clear();
    if (prefetched_at_refresh == refreshes) readable.swap(prefetched_readable);
    prefetched_readable.clear();
    // 2. Read the next step's requirements in the background during all of this step's work:
    //    fetch checks, invocations, release. They were declared at the end of the previous step
    //    (set_required_tensors is side-effect free by contract), so the read starts right away;
    //    at a first step, or if the rules moved elsewhere since, they are declared now. A rule
    //    that ends at this step had its next step read for nothing: a read, no result changed.
    std::vector<ReadKey> next_keys;
    if (upcoming_for == step) {
      next_keys = std::move(upcoming);
    } else {
      for (RuleState* r : ready) {
        if (Declare(*r, step).first.status == LITMUS_OK) AddNextKeys(*r, step, next_keys);
      }
      SortUniqueKeys(next_keys);
    }
    upcoming.clear();
    upcoming_for.reset();
    // The previous step's stale keys are dropped by the same background task, first.
    prefetched = next_keys;
    const auto read_next = [this] {
      if (prefetched.empty() && stale.empty()) return;
      prefetch_running = true;
      prefetched_at_refresh = refreshes;
      prefetch_group.run([this, release = std::exchange(stale, {})] {
        ReleaseAll(release);
        ReadAll(prefetched, &prefetched_readable);
      });
    };
    // At the job's first step the next step is read once the rules' calls have returned: they
    // teach the reader what the rules ask of each tensor (which reductions; its raw value or
    // not), which decides how the next steps are read (Trial::Prefetch's summaries). Read
    // during those calls, the next step would be read as little of that is known.
    const bool first = !evaluated_any;
    evaluated_any = true;
    if (!first) read_next();
    ReadInto(unread);
    readable_index.Build(readable);
    if (isolation != nullptr && isolation->options().batch_steps > 1) last_step_bytes = BytesOf(readable);
    std::vector<RuleState*> to_invoke;
    for (RuleState* r : ready) {
      const auto& [result, reqs] = Declare(*r, step);
      std::string message;
      StepOutcome outcome = Classify(*r, result, &message);
      if (outcome == StepOutcome::kNotMet) outcome = Fetch(*r, reqs, &message);
      if (outcome == StepOutcome::kNotMet) {
        to_invoke.push_back(r);
      } else {
        Apply(*r, step, outcome, message);
      }
    }
    // 3. Invoke (instances in parallel; each on one thread). A single instance runs right here:
    //    inside a parallel_for this thread could pick up the background prefetch and keep the
    //    rule waiting for it.
    // Isolated rules start at once, reading the step's values from the shared memory through one
    // table (kept until the next step's: every Invoke of this step has returned by then).
    if (!to_invoke.empty() && isolation != nullptr) step_table = isolation->ShareStep(readable, trial_pointers);
    isolation::QueryAnswerCache answers;  // (the trials do not change while the calls are sent)
    for (RuleState* r : to_invoke) {
      r->instance->StartInvoke(step, InvokeInput{.values = &readable,
                                                 .index = &readable_index,
                                                 .trial_indices = r->trial_indices,
                                                 .table = step_table.get(),
                                                 .past_firings = false,
                                                 .skip = {},
                                                 .answers = &answers});
    }
    std::vector<PluginCallResult> results(to_invoke.size());
    const auto invoke = [&](size_t i) {
      results[i] = Timed(*to_invoke[i], [&] { return to_invoke[i]->instance->Invoke(step); });
    };
    if (to_invoke.size() == 1) {
      invoke(0);
    } else {
      tbb::parallel_for(size_t{0}, to_invoke.size(), invoke);
    }
    for (size_t i = 0; i < to_invoke.size(); ++i) ApplyInvokeResult(*to_invoke[i], step, results[i]);
    if (first) read_next();
    // 4. Declare what the prefetch that the next step starts will read: for each rule still
    //    running, the step after its next one (while this thread declares, the prefetch of the
    //    next step is still reading).
    for (RuleState* r : to_invoke) {
      if (r->done) continue;
      const std::optional<int64_t> next = PeekNextAvailable(*r, step + 1);
      if (!next) continue;
      upcoming_for = upcoming_for ? std::min(*upcoming_for, *next) : *next;
      if (Declare(*r, *next).first.status == LITMUS_OK) AddNextKeys(*r, *next, upcoming);
    }
    SortUniqueKeys(upcoming);
    // What this step read and the next two do not need is dropped with the next prefetch (by the
    // background task: this thread has the rules' work).
    std::vector<ReadKey> unneeded;
    std::set_difference(keys.begin(), keys.end(), next_keys.begin(), next_keys.end(), std::back_inserter(unneeded));
    std::set_difference(unneeded.begin(), unneeded.end(), upcoming.begin(), upcoming.end(), std::back_inserter(stale));
  }

  // The steps of a call from `step`: available, before `before`, inside every rule's range, at
  // most batch_steps and about kBatchBytes of values.
  std::vector<int64_t> WindowFrom(int64_t step, const std::vector<RuleState*>& ready, int64_t before) {
    std::vector<int64_t> window{step};
    const size_t limit = std::min<size_t>(isolation != nullptr ? isolation->options().batch_steps : 1,
                                          !last_step_bytes ? 1 : std::max<uint64_t>(1, kBatchBytes / std::max<uint64_t>(1, *last_step_bytes)));
    while (window.size() < limit) {
      const std::optional<int64_t> next = base().FirstStepAtOrAfter(window.back() + 1);
      if (!next || base().StepAvailability(*next) != StepState::kAvailable || *next >= before) break;
      const bool inside = std::none_of(ready.begin(), ready.end(), [&](const RuleState* r) {
        return r->config.end_step && *next >= *r->config.end_step;
      });
      if (!inside) break;
      window.push_back(*next);
    }
    return window;
  }

  // While the rules run a call of several steps that ends at `after`: reads the next call's
  // predicted tensors in the background (as EvaluateStep's prefetch; a wrong guess is only a read
  // for nothing, the fetch reads the rest).
  void ReadAheadOfNextCall(const std::vector<RuleState*>& ready, int64_t after) {
    std::vector<RuleState*> going;
    for (RuleState* r : ready) {
      if (!r->done) going.push_back(r);
    }
    const std::optional<int64_t> first = base().FirstStepAtOrAfter(after + 1);
    if (going.empty() || !first || base().StepAvailability(*first) != StepState::kAvailable) return;
    std::vector<ReadKey> next;
    AvailableSteps available;
    std::vector<TensorRequirement> reqs;
    for (const int64_t s : WindowFrom(*first, going, INT64_MAX)) {
      for (RuleState* r : going) {
        if (!r->instance->PeekRequirements(s, &reqs)) continue;
        for (auto& req : reqs) req.trial = req.trial < r->trial_indices.size() ? r->trial_indices[req.trial] : UINT32_MAX;
        AppendAvailableKeys(reqs, next, available);
      }
    }
    SortUniqueKeys(next);
    prefetched = std::move(next);
    if (prefetched.empty()) return;
    prefetch_running = true;
    prefetched_at_refresh = refreshes;
    prefetch_group.run([this] { ReadAll(prefetched, &prefetched_readable); });
  }

  // --rule-batch-steps: `step` and the available steps after it (WindowFrom) for the rules of
  // `ready`, each isolated rule in one call (RuleHandle::InvokeSteps). A rule's lists after the
  // first step are declared already or predicted (PredictRequirements; its worker checks them).
  // The rules take the same steps: up to the first step where one rule's list cannot be predicted
  // or its fetch check fails otherwise than with a missing tensor (a skipped step, applied once
  // the worker confirmed its list). A rule whose worker ran fewer steps evaluates the rest later,
  // catching up with the others (`before`: the next step another rule is at). A rule whose list
  // for the first step cannot be declared (a tensor the trial lacks: TreeDepth without trees)
  // takes the outcomes of its declarations instead, as EvaluateStep applies them (nothing to
  // read or invoke), at the steps of the call up to one it can declare: it must neither cut the
  // others' calls to one step each nor fall behind them. When the first step cannot be taken
  // that way otherwise, it is evaluated as EvaluateStep does. Returns the steps evaluated, in
  // order.
  std::vector<int64_t> EvaluateSteps(int64_t step, const std::vector<RuleState*>& rules_at_step, int64_t before) {
    std::vector<int64_t> window = WindowFrom(step, rules_at_step, before);
    if (window.size() < 2) {
      EvaluateStep(step, rules_at_step);
      return {step};
    }
    // 0. Rules that cannot declare: the first step's outcome now, later steps' with the others'.
    std::vector<RuleState*> ready, undeclared;
    for (RuleState* r : rules_at_step) (Declare(*r, step).first.status == LITMUS_OK ? ready : undeclared).push_back(r);
    const auto apply_undeclared = [&](size_t k) {  // at window[k]; a rule that can declare leaves
      for (auto it = undeclared.begin(); it != undeclared.end();) {
        RuleState& r = **it;
        if (r.done || Declare(r, window[k]).first.status == LITMUS_OK) {
          it = undeclared.erase(it);
          continue;
        }
        std::string message;
        const StepOutcome outcome = Classify(r, r.declared.at(window[k]).first, &message);
        Apply(r, window[k], outcome, message);
        ++it;
      }
    };
    apply_undeclared(0);
    // (Its worker declares the call's other steps, and the next call's first, in one round
    // trip, not one each.)
    for (RuleState* r : undeclared) {
      if (r->done) continue;
      std::vector<int64_t> later(window.begin() + 1, window.end());
      if (const std::optional<int64_t> next = PeekNextAvailable(*r, window.back() + 1)) later.push_back(*next);
      r->instance->DeclareSteps(later);
    }
    if (ready.empty()) {  // (no call: the steps the rules could not declare)
      size_t evaluated = 1;
      for (size_t k = 1; k < window.size(); ++k) {
        apply_undeclared(k);
        if (undeclared.empty()) break;  // (a rule left in it took an outcome at window[k])
        evaluated = k + 1;
      }
      window.resize(evaluated);
      return window;
    }
    const auto one_step = [&] {
      EvaluateStep(step, ready);
      return std::vector<int64_t>{step};
    };
    // 1. Requirements: the first step's declared, the later ones' declared already or predicted.
    std::vector<size_t> count(ready.size(), 1);
    std::vector<std::vector<int64_t>> predicted(ready.size());
    const auto forget = [&](size_t i, size_t from) {  // predictions of ready[i] from window[from]
      for (const int64_t s : predicted[i]) {
        if (from >= window.size() || s >= window[from]) ready[i]->declared.erase(s);
      }
    };
    for (size_t i = 0; i < ready.size(); ++i) {
      RuleState& r = *ready[i];  // (its first step's list is declared: above)
      for (; count[i] < window.size(); ++count[i]) {
        const int64_t s = window[count[i]];
        if (const auto it = r.declared.find(s); it != r.declared.end()) {
          if (it->second.first.status != LITMUS_OK) break;
          continue;
        }
        std::vector<TensorRequirement> reqs;
        if (!r.instance->PredictRequirements(s, &reqs)) break;
        for (auto& req : reqs) req.trial = req.trial < r.trial_indices.size() ? r.trial_indices[req.trial] : UINT32_MAX;
        r.declared.emplace(s, std::make_pair(PluginCallResult{LITMUS_OK, ""}, std::move(reqs)));
        predicted[i].push_back(s);
      }
    }
    // 2. Read every step's values, then each rule takes its steps up to a fetch check that fails.
    std::vector<ReadKey> keys;
    for (size_t i = 0; i < ready.size(); ++i) {
      for (size_t k = 0; k < count[i]; ++k) {
        AppendKeys(ready[i]->declared.at(window[k]).second, keys);
      }
    }
    SortUniqueKeys(keys);
    JoinPrefetch();
    std::vector<ReadKey> release;
    std::set_difference(stale.begin(), stale.end(), keys.begin(), keys.end(), std::back_inserter(release));
    stale.clear();
    ReleaseAll(release);
    std::vector<ReadKey> unread;
    std::set_difference(keys.begin(), keys.end(), prefetched.begin(), prefetched.end(), std::back_inserter(unread));
    readable.clear();
    if (prefetched_at_refresh == refreshes) {
      std::set_intersection(std::make_move_iterator(prefetched_readable.begin()),
                            std::make_move_iterator(prefetched_readable.end()), keys.begin(), keys.end(),
                            std::back_inserter(readable));
    }
    prefetched_readable.clear();
    prefetched.clear();
    upcoming.clear();
    upcoming_for.reset();
    ReadInto(unread);
    readable_index.Build(readable);
    // A step whose fetch check finds a tensor missing is skipped, as EvaluateStep skips it, once
    // the rule's worker confirmed the list (a wrong guess must not skip a step).
    std::vector<std::vector<uint8_t>> skip(ready.size(), std::vector<uint8_t>(window.size(), 0));
    std::vector<std::vector<std::string>> skip_messages(ready.size(), std::vector<std::string>(window.size()));
    std::vector<std::vector<std::optional<Status>>> skip_damage(ready.size(),
                                                                std::vector<std::optional<Status>>(window.size()));
    // Every key of the call read, at steps all available: each rule's fetch check, which asks
    // that of each of its keys (all among them), would pass, so none is made (20 rules repeat
    // each other's keys: the checks were ~4 % of such a job, serial).
    const bool all_fetched = readable.size() == keys.size() && AllStepsAvailable(keys);
    for (size_t i = 0; i < ready.size() && !all_fetched; ++i) {
      for (size_t k = 0; k < count[i]; ++k) {
        RuleState& r = *ready[i];
        std::string message;
        const StepOutcome outcome = Fetch(r, r.declared.at(window[k]).second, &message, &skip_damage[i][k]);
        if (outcome == StepOutcome::kNotMet) continue;
        if (outcome == StepOutcome::kSkipped) {
          skip[i][k] = 1;
          skip_messages[i][k] = std::move(message);
          continue;
        }
        if (k == 0) {
          for (size_t j = 0; j < ready.size(); ++j) {
            forget(j, 1);
            ready[j]->instance->ForgetPredictions();
          }
          return one_step();
        }
        count[i] = k;
        break;
      }
    }
    // The rules stay in step: what one rule reads without declaring it (Overfit reads the losses
    // LossNotDecreasing declares) is in the shared table because the rules of a step share one.
    const size_t steps = *std::min_element(count.begin(), count.end());
    for (size_t i = 0; i < ready.size(); ++i) {
      count[i] = steps;
      forget(i, steps);
    }
    window.resize(steps);
    // 3. Invoke: each rule's steps in one call, the rules at once (as EvaluateStep).
    last_step_bytes = BytesOf(readable) / window.size();
    step_table = isolation->ShareStep(readable, trial_pointers);
    // (A rule with one step to skip, declared, has nothing to ask its worker.)
    const auto call = [&](size_t i) { return count[i] > 1 || skip[i][0] == 0; };
    isolation::QueryAnswerCache answers;  // (the trials do not change while the calls are sent)
    for (size_t i = 0; i < ready.size(); ++i) {
      if (!call(i)) continue;
      ready[i]->instance->StartInvokeSteps(std::span<const int64_t>(window.data(), count[i]),
                                           InvokeInput{.values = &readable,
                                                       .index = &readable_index,
                                                       .trial_indices = ready[i]->trial_indices,
                                                       .table = step_table.get(),
                                                       .past_firings = config.keep_going,
                                                       .skip = skip[i],
                                                       .answers = &answers});
    }
    // While the workers run their calls, this thread predicts the next call's lists and starts
    // reading them in the background (done after the calls, the same work left both the workers
    // and a core idle: ~7 % of a 20-rule job's time). (A rule that stops early makes the guess a
    // read for nothing; the next call reads what it lacks.)
    ReadAheadOfNextCall(ready, window.back());
    std::vector<std::vector<PluginCallResult>> results(ready.size());
    const auto invoke = [&](size_t i) {
      RuleState& r = *ready[i];
      if (!call(i)) {
        results[i] = {PluginCallResult{LITMUS_OK, ""}};
        return;
      }
      const double before = r.seconds;
      results[i] = Timed(r, [&] { return r.instance->InvokeSteps(std::span<const int64_t>(window.data(), count[i])); });
      r.last_call_seconds = r.seconds - before;
    };
    if (ready.size() == 1) {
      invoke(0);
    } else {
      // The longest calls first, each thread taking the next rule once it finished one: the
      // calls' lengths differ ~10x (20 built-in rules on small tensors), and ranges of rules
      // split in halves left a thread idle while the other ran a long one at the end.
      std::vector<size_t> order(ready.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return ready[a]->last_call_seconds > ready[b]->last_call_seconds;
      });
      std::atomic<size_t> next{0};
      const auto take = [&](int) {
        for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < order.size();) invoke(order[k]);
      };
      // Isolated: a thread waiting for its rule's worker never takes the background read and
      // leaves the worker's queries unanswered meanwhile.
      tbb::this_task_arena::isolate([&] {
        tbb::parallel_for(0, tbb::this_task_arena::max_concurrency(), take, tbb::simple_partitioner());
      });
    }
    // 4. The outcomes, step by step (events in step order), then the predictions not used.
    size_t evaluated = 0;
    for (size_t k = 0; k < window.size(); ++k) {
      for (size_t i = 0; i < ready.size(); ++i) {
        if (k >= results[i].size() || ready[i]->done) continue;
        RuleState& r = *ready[i];
        if (skip[i][k] != 0) {
          if (skip_damage[i][k]) SkippedDamaged(r, window[k], *skip_damage[i][k]);
          Apply(r, window[k], StepOutcome::kSkipped, skip_messages[i][k]);
          evaluated = std::max(evaluated, k + 1);
          continue;
        }
        ApplyInvokeResult(r, window[k], results[i][k]);
        evaluated = std::max(evaluated, k + 1);
      }
      // (Steps after the last one a rule was evaluated at stay for the next call.)
      if (k > 0 && evaluated == k + 1) apply_undeclared(k);
    }
    for (size_t i = 0; i < ready.size(); ++i) forget(i, std::min(results[i].size(), count[i]));
    stale = std::move(keys);
    window.resize(std::max<size_t>(evaluated, 1));
    return window;
  }

  // Appends the available required keys of the first available step of `r` after `after` (none
  // if that step is not known yet).
  void AddNextKeys(RuleState& r, int64_t after, std::vector<ReadKey>& out) {
    const std::optional<int64_t> next = PeekNextAvailable(r, after + 1);
    if (!next) return;
    const auto& [result, reqs] = Declare(r, *next);
    if (result.status != LITMUS_OK) return;
    AvailableSteps available;
    AppendAvailableKeys(reqs, out, available);
  }

  // Appends the keys of `reqs` whose steps are available (remembered in `available`).
  void AppendAvailableKeys(const std::vector<TensorRequirement>& reqs, std::vector<ReadKey>& keys,
                           AvailableSteps& available) const {
    for (const auto& req : reqs) {
      for (const int64_t s : req.steps) {
        if (const ReadKey key{req.trial, req.reductions_only, req.name, s}; IsAvailable(key, available)) keys.push_back(key);
      }
    }
  }

  // Whether the step of every key is available in its trial (each (trial, step) asked once).
  bool AllStepsAvailable(const std::vector<ReadKey>& keys) const {
    std::vector<std::vector<int64_t>> known(trials.size());  // per trial, steps found available (sorted)
    for (const ReadKey& key : keys) {
      if (key.trial >= trials.size()) return false;
      std::vector<int64_t>& steps = known[key.trial];
      const auto at = std::lower_bound(steps.begin(), steps.end(), key.step);
      if (at != steps.end() && *at == key.step) continue;
      if (trials[key.trial]->StepAvailability(key.step) != StepState::kAvailable) return false;
      steps.insert(at, key.step);
    }
    return true;
  }

  // Whether the step of `key` is available in its trial (remembered in `available`).
  bool IsAvailable(const ReadKey& key, AvailableSteps& available) const {
    if (key.trial >= trials.size()) return false;
    if (available.Has(key.trial, key.step)) return true;
    if (trials[key.trial]->StepAvailability(key.step) != StepState::kAvailable) return false;
    available.Add(key.trial, key.step);
    return true;
  }

  // The first already-available step >= from, without side effects on the rule.
  std::optional<int64_t> PeekNextAvailable(const RuleState& r, int64_t from) {
    for (auto step = base().FirstStepAtOrAfter(from); step; step = base().FirstStepAtOrAfter(*step + 1)) {
      if (r.config.end_step && *step >= *r.config.end_step) return std::nullopt;
      const StepState state = base().StepAvailability(*step);
      if (state == StepState::kAvailable) return step;
      if (state == StepState::kNotYetAvailable) return std::nullopt;
    }
    return std::nullopt;
  }

  // Rule reports and the progress in status.json, at most once per poll interval (unless `force`).
  void MaybeWriteReports(bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_report_write < std::chrono::milliseconds(config.poll_interval_ms)) return;
    last_report_write = now;
    for (auto& r : rules) {
      if (r->done) continue;
      WriteReport(*r);
      reporter->SetRuleProgress(r->config.configuration_name, r->datapoints,
                                r->last_step >= 0 ? std::optional<int64_t>(r->last_step) : std::nullopt);
    }
    reporter->SetJobProgress(steps_evaluated, last_evaluated_step);
    reporter->WriteStatus();
    for (JobObserver* o : observers) o->FilesWritten(false);
  }

  int Loop() {
    while (true) {
      // (Rules that all ended before a stop arrived have their verdict: the stop changes nothing.)
      if (AllRulesDone()) break;
      if (stop->ShouldStop()) {
        JoinPrefetch();
        defer_end_checkpoints = true;
        for (auto& r : rules) {
          if (!r->done) EndRule(*r, RuleStatus::kStopped, "Stopped: " + stop->Reason());
        }
        CheckpointEndedRules();
        return kExitStopped;
      }
      std::map<int64_t, std::vector<RuleState*>> ready;
      bool any_active = false;
      defer_end_checkpoints = true;  // (NextReadyStep ends the rules whose steps are exhausted)
      for (auto& r : rules) {
        if (r->done) continue;
        if (auto step = NextReadyStep(*r)) ready[*step].push_back(r.get());
        any_active |= !r->done;
      }
      CheckpointEndedRules();
      if (!any_active) break;
      if (!ready.empty()) {
        // (Rules behind the others catch up to them, then go on in step with them; the steps
        // they catch up on were counted when the first rule took them.)
        const int64_t before = ready.size() > 1 ? std::next(ready.begin())->first : INT64_MAX;
        for (const int64_t step : EvaluateSteps(ready.begin()->first, ready.begin()->second, before)) {
          if (last_evaluated_step && step <= *last_evaluated_step) continue;
          ++steps_evaluated;
          last_evaluated_step = step;
          progress->StepEvaluated(steps_evaluated, step);
        }
        MaybeWriteReports(false);
        MaybeCheckpoint(false);
        continue;
      }
      // Nothing to evaluate: time-based rules get their on_poll, then wait and look for new files.
      if (PollIdleRules()) continue;
      progress->Waiting();
      MaybeWriteReports(false);
      MaybeCheckpoint(false);
      if (end_marker_watch.SleepFor(*stop, std::chrono::milliseconds(config.poll_interval_ms))) continue;
      JoinPrefetch();
      for (auto& trial : trials) {
        if (Status s = RefreshTrial(*trial); !s.ok()) {
          for (auto& r : rules) {
            if (r->done) continue;
            r->exit_code = kExitClientError;
            EndRule(*r, RuleStatus::kError, "ClientError: " + s.message());
          }
          break;
        }
      }
    }
    JoinPrefetch();
    return kExitOk;
  }

  // ---- resume (run/checkpoint.h, docs/run.md "Resume") ------------------------------------------

  std::string Fingerprint(const RuleState& r) const {
    return JobFingerprint(config.trial, r.config.rule, r.instance ? r.instance->rule().plugin_path : r.config.plugin,
                          r.config.parameters, r.config.start_step, r.config.end_step, r.config.other_trials,
                          config.keep_going, config.skip_damaged);
  }

  StatusOr<ResumePlan> PlanJobResume() const {
    std::vector<std::pair<std::string, std::string>> fingerprints;
    for (const auto& r : rules) fingerprints.emplace_back(r->config.configuration_name, Fingerprint(*r));
    return PlanResume(config.output_dir, config.fresh, config.trial, fingerprints);
  }

  // Takes over what the interrupted run reported for `r`. Returns true if the rule had ended
  // then (its status is restored, without events). Otherwise the rule goes on: a stateless one
  // (ABI 1.2) where the checkpoint left it, any other from its start step again, replaying the
  // steps before with the firings already reported suppressed (Fired), which rebuilds its state.
  bool Resume(RuleState& r, const RuleResume& plan, std::string* how) {
    r.reported_firings = plan.reported_firings;
    const auto restore_progress = [&](const RuleCheckpoint& cp) {
      r.cursor = std::max(r.cursor, cp.cursor);
      r.last_step = cp.last_step;
      r.datapoints = cp.datapoints;
      r.fired_steps = cp.fired_steps;
      RuleReport report;
      report.violations = cp.violations;
      report.details.Restore(cp.details_json);
      r.instance->RestoreReport(std::move(report));
    };
    if (plan.ended) {
      if (plan.checkpoint) restore_progress(*plan.checkpoint);
      r.fired_steps.assign(plan.reported_firings.begin(), plan.reported_firings.end());
      r.done = true;
      r.status = RuleStatusFromName(plan.ended_status).value_or(RuleStatus::kError);
      r.details = plan.ended_details;
      r.exit_code = r.status == RuleStatus::kIssuesFound ? kExitConditionMet
                    : r.status != RuleStatus::kError ? kExitOk
                    : r.details.starts_with("ClientError") ? kExitClientError : kExitInternal;
      if (plan.ended_step) r.last_step = std::max(r.last_step, *plan.ended_step);
      std::optional<int64_t> status_step;
      if (!r.fired_steps.empty()) {
        status_step = r.fired_steps.front();
      } else if (r.last_step >= 0) {
        status_step = r.last_step;
      }
      reporter->RestoreRuleStatus(r.config.configuration_name, r.status, r.details, status_step);
      return true;
    }
    // The firings already reported count whatever the rule does now (one from on_poll cannot be
    // found again), and without --keep-going the first one ended the rule: its RuleEnded event
    // is what the interruption cut off.
    const auto with_reported = [&] {
      std::set<int64_t> all(r.fired_steps.begin(), r.fired_steps.end());
      all.insert(plan.reported_firings.begin(), plan.reported_firings.end());
      r.fired_steps.assign(all.begin(), all.end());
    };
    if (!config.keep_going && !plan.reported_firings.empty()) {
      if (plan.checkpoint) restore_progress(*plan.checkpoint);
      with_reported();
      EndRule(r, RuleStatus::kIssuesFound,
              "RuleEvaluationConditionMet: " + ConditionMetText(r.config.rule, r.fired_steps.front()));
      return true;
    }
    if (r.instance->rule().stateless && plan.checkpoint) {
      restore_progress(*plan.checkpoint);
      with_reported();
      *how = "continuing where the checkpoint left it";
    } else {
      with_reported();
      const int64_t reported = plan.reported_firings.empty() ? -1 : *plan.reported_firings.rbegin();
      const int64_t through = std::max(plan.checkpoint ? plan.checkpoint->last_step : -1, reported);
      *how = through >= r.cursor ? "replaying steps " + std::to_string(r.cursor) + ".." + std::to_string(through) +
                                       " to rebuild its state, their firings not reported again"
                                 : "from its start step";
    }
    return false;
  }

  JobCheckpoint MakeCheckpoint(bool finished) const {
    JobCheckpoint cp;
    cp.trial = config.trial;
    cp.restarts = restarts;
    cp.finished = finished;
    for (const auto& r : rules) {
      RuleCheckpoint rc;
      rc.name = r->config.configuration_name;
      rc.fingerprint = Fingerprint(*r);
      rc.cursor = r->cursor;
      rc.last_step = r->last_step;
      rc.datapoints = r->datapoints;
      rc.fired_steps = r->fired_steps;
      rc.done = r->done;
      rc.status = std::string(RuleStatusName(r->status));
      rc.details = r->details;
      rc.exit_code = r->exit_code;
      if (r->instance) {
        rc.violations = r->instance->report().violations;
        rc.details_json = r->instance->report().details.Json();
      }
      cp.rules.push_back(std::move(rc));
    }
    return cp;
  }

  // Writes the checkpoint at most once a second (unless `force`), after making events.jsonl
  // durable: a checkpoint never covers events that could still be lost.
  void MaybeCheckpoint(bool force, bool finished = false) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_checkpoint < std::chrono::seconds(1)) return;
    last_checkpoint = now;
    if (Status synced = reporter->SyncEvents(); !synced.ok()) {
      reporter->RecordWriteFailure(synced.message());
      return;
    }
    if (Status written = WriteCheckpoint(config.output_dir, MakeCheckpoint(finished)); !written.ok()) {
      reporter->RecordWriteFailure(written.message());
    }
  }

  int Finish() {
    int code = kExitOk;
    std::string line;
    bool stopped = false;
    std::vector<RuleFiring> firings;  // the message line names every rule that fired
    int error = 0;
    for (auto& r : rules) {
      if (r->exit_code == kExitInternal || r->exit_code == kExitClientError) {
        if (r->exit_code > error) {
          error = r->exit_code;
          line = r->details;
        }
      }
      stopped |= r->exit_code == kExitStopped;
      if (r->exit_code == kExitConditionMet && !r->fired_steps.empty()) {
        firings.push_back({r->config.rule, r->fired_steps.front()});
      }
    }
    if (error) {
      code = error;
    } else if (stopped) {
      code = kExitStopped;
      line = "Stopped: " + stop->Reason();
    } else if (!firings.empty()) {
      code = kExitConditionMet;
      line = ConditionMetLine(std::move(firings));
    }
    progress->Clear();
    for (auto& r : rules) WriteReport(*r);  // (the series files in the background)
    reporter->SetJobProgress(steps_evaluated, last_evaluated_step);
    reporter->Finish(code, line);
    // The by-products (the HTML report) are made while the series files are written: both only
    // read the rules' series stores, and a large job's take tens of milliseconds each.
    for (JobObserver* o : observers) o->FilesWritten(true);
    series_files.Wait();
    if (series_files.writes() > 0) spdlog::debug("series files written {} times", series_files.writes());
    for (size_t t = 0; t < trials.size(); ++t) {
      if (const uint64_t n = trials[t]->values_summarized(); n > 0) {
        spdlog::debug("trial {}: {} values read only for their reductions (not kept)", trial_paths[t], n);
      }
    }
    // A stopped job (SIGTERM: a pod evicted, a spot instance reclaimed) resumes when restarted.
    MaybeCheckpoint(/*force=*/true, /*finished=*/code != kExitStopped);
    // A verdict that could not be written is not a verdict: the job fails (docs/run.md), and the
    // by-products say so too.
    if (const std::optional<std::string> failure = reporter->write_failure()) {
      code = kExitInternal;
      line = "InternalServerError: cannot write the job's files: " + *failure;
      reporter->Finish(code, line);
      for (JobObserver* o : observers) o->FilesWritten(true);
    }
    if (code == kExitClientError || code == kExitInternal) spdlog::error("{}", line);
    for (auto& r : rules) {
      verdict.push_back({.rule = r->config.configuration_name,
                         .status = std::string(RuleStatusName(r->status)),
                         .first_firing = r->fired_steps.empty() ? std::nullopt : std::optional(r->fired_steps.front()),
                         .firings = static_cast<int64_t>(r->fired_steps.size()),
                         .datapoints = r->datapoints,
                         .seconds = r->seconds});
    }
    return code;
  }
};

JobRunner::JobRunner(JobConfig config, Env* env) : impl_(std::make_unique<Impl>(std::move(config), env)) {}
JobRunner::~JobRunner() = default;

int JobRunner::Run() {
  Impl& s = *impl_;
  auto reporter = JobReporter::Create(
      {s.config.output_dir, s.config.message_file, s.config.failure_file, s.config.temp_dir, s.config.events});
  if (!reporter.ok()) {
    // No verdict can be written (a full disk, a read-only folder): never a green job.
    spdlog::error("cannot write the job's files: {}", reporter.status().message());
    s.verdict = s.ErrorVerdict();
    return kExitInternal;
  }
  s.reporter = std::move(reporter).value();
  s.reporter->SetJobWarnings(s.config.warnings);
  s.stop = std::make_unique<StopSignal>(s.env, s.config.trial, s.config.stop_signal_file, s.config.stop_grace_s);
  s.progress = std::make_unique<ProgressReporter>(isatty(STDERR_FILENO) == 1, s.ProgressInterval());
  // A stop ends the job within ~2 s whatever a rule does, setup included (isolation/stop_watchdog.h).
  StopWatchdog watchdog(s.stop.get(), s.reporter.get());

  std::string error_line;
  const int setup = s.Setup(&error_line);
  if (setup != kExitOk) {
    // (A create that a stop cut short is the stop, not the rule's failure.)
    if (StopRequested()) return s.StopBeforeStart();
    spdlog::error("{}", error_line);
    return s.FailBeforeStart(setup, error_line);
  }
  // An interrupted run of this job in the output folder is resumed (docs/run.md, "Resume").
  // Refused (another job's checkpoint): that job's files stay as they are.
  StatusOr<ResumePlan> plan = s.PlanJobResume();
  if (!plan.ok()) {
    spdlog::error("ClientError: {}", plan.status().message());
    s.verdict = s.ErrorVerdict();
    return kExitClientError;
  }
  s.reporter->RemovePreviousVerdict();
  if (plan->resume) {
    s.restarts = plan->restarts + 1;
    spdlog::info("resuming the interrupted job in {} (restart {}; --fresh starts over)", s.config.output_dir,
                 s.restarts);
  } else {
    s.reporter->StartOver();
  }
  for (auto& r : s.rules) {
    s.reporter->AddRule(r->config.configuration_name, r->config.rule);
    s.reporter->SetRuleWarnings(r->config.configuration_name, r->warnings);
  }
  for (auto& r : s.rules) {
    std::string how;
    if (plan->resume && s.Resume(*r, plan->rules.at(r->config.configuration_name), &how)) continue;
    const bool resumed = plan->resume;
    const std::string message = (resumed ? "Resumed execution of rule " : "Started execution of rule ") +
                                r->config.rule + " at step " + std::to_string(r->cursor) +
                                (resumed ? " (" + how + ")" : "");
    spdlog::info("{}", message);
    s.reporter->Event({.event = resumed ? "RuleResumed" : "RuleStarted",
                       .rule = r->config.configuration_name,
                       .rule_class = r->config.rule,
                       .step = r->cursor,
                       .mode = std::nullopt,
                       .mode_step = std::nullopt,
                       .message = message,
                       .status = std::nullopt});
    s.PrepareActions(*r);
  }
  if (!s.observers.empty()) {
    for (auto& r : s.rules) r->instance->mutable_report().series.set_keep_new_points(true);
  }
  s.MaybeCheckpoint(/*force=*/true);
  s.WaitForTrials();
  s.ReleaseEndMarkerWatchOnceEnded();
  s.Loop();
  // Every rule has its verdict now: a stop arriving from here on changes nothing.
  watchdog.Disarm();
  return s.Finish();
}

const std::vector<VerdictRow>& JobRunner::Verdict() const { return impl_->verdict; }

void JobRunner::AddObserver(JobObserver* observer) { impl_->observers.push_back(observer); }

int JobRunner::ReportConfigurationError(JobConfig config, const std::string& message,
                                        std::vector<VerdictRow>* verdict) {
  Impl s(std::move(config), nullptr);
  // Best effort: the plugins only serve to show rules by their class names.
  if (Status loaded = s.LoadAllPlugins(); !loaded.ok()) spdlog::debug("{}", loaded.message());
  if (verdict != nullptr) *verdict = s.ErrorVerdict();
  auto reporter = JobReporter::Create(
      {s.config.output_dir, s.config.message_file, s.config.failure_file, s.config.temp_dir, s.config.events});
  if (!reporter.ok()) {
    spdlog::warn("{} (status.json and the failure file are not written)", reporter.status().message());
    return kExitClientError;
  }
  s.reporter = std::move(reporter).value();
  s.reporter->SetJobWarnings(s.config.warnings);
  return s.FailBeforeStart(kExitClientError, "ClientError: " + message);
}

}  // namespace litmus
