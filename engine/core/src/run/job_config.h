// JobConfig: everything `litmus run` needs, merged from the command line, the environment and a
// YAML file with precedence command line > environment > YAML, key by key (docs/run.md).
// Parameters are SageMaker's RuleParameters: string -> string maps whose runner keys
// (rule_to_invoke, start_step, end_step, other_trial_<i>, other_trials, other-trials-paths,
// logging-level, action_json, source_s3_uri) are consumed here and do not reach rules, except
// start_step/end_step, which also reach a rule that declares a parameter of that name. A rule with
// a source_s3_uri is written in Python and runs in python_rule_host.so (RuleJobConfig::plugin_rule).
// Pure data and functions; thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "litmus/events/event_destinations.h"
#include "litmus/status.h"
#include "run/output_layout.h"

namespace litmus {

using ParameterMap = std::map<std::string, std::string>;

// One rule of the job.
struct RuleJobConfig {
  std::string configuration_name;  // RuleConfigurationName; empty = the rule's class name
  std::string rule;                // rule_to_invoke: class name, matched case-insensitively
  std::string plugin;              // explicit plugin file, or empty to search
  // The plugin's rule to create when it is not `rule`: "PythonRule" of python_rule_host.so for a
  // rule written in Python (source_s3_uri), whose `rule` stays the Python class name. Its
  // parameters are then source_s3_uri, rule_to_invoke and rule_parameters (the rule's own, as a
  // JSON object of strings: the Python constructor's keyword arguments).
  std::string plugin_rule;
  ParameterMap parameters;         // the rule's own parameters (runner keys removed)
  int64_t start_step = 0;          // first global step (inclusive)
  std::optional<int64_t> end_step; // exclusive
  std::vector<std::string> other_trials;
  std::string action_json;         // raw, as given (actions are handled by a later issue)
};

struct JobConfig {
  std::string trial;
  std::vector<RuleJobConfig> rules;
  // Output paths: explicit ones as given, the others from the layout (output_layout.h).
  OutputLayout output_layout = OutputLayout::kLocal;
  std::string output_dir = "litmus-output";
  std::string message_file = "litmus-output/message";
  std::string failure_file = "litmus-output/failure";
  std::string temp_dir;  // temp files of atomic writes; empty: beside each target
  std::string logging_level;  // empty: keep the process's level (`litmus --logging-level`, info)
  int64_t poll_interval_ms = 1000;
  // Decoded tensors kept (the trial cache). Modest on purpose: a budget much larger than a few
  // steps of data only keeps dead tensors around, and fresh memory costs page faults.
  uint64_t prefetch_memory_bytes = 256ull << 20;
  bool keep_going = false;
  std::vector<std::string> plugin_files;
  std::vector<std::string> plugin_dirs;
  // SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE: name of a file in the trial whose content is a Unix time;
  // the job stops once now > that time + grace (rule_stop_grace_time_secs, default 60 s).
  std::optional<std::string> stop_signal_file;
  double stop_grace_s = 60;
  // How often the waits for a trial and the progress are logged (LITMUS_PROGRESS_INTERVAL_S).
  double progress_interval_s = 30;
  // A step whose required record is damaged (truncated, missing, corrupt) is skipped with a
  // warning instead of ending the rule with a ClientError (docs/run.md, "Damaged data").
  bool skip_damaged = false;
  // Start over even when the output folder holds an interrupted run of this job (docs/run.md,
  // "Resume"); otherwise such a run is resumed.
  bool fresh = false;
  // --allow-unknown-params: a parameter key the rule does not declare is a warning, not exit 2.
  bool allow_unknown_params = false;
  // false with --no-series: what rules publish (ABI 1.3 series, thresholds, recommendations) is
  // dropped: no rule-reports/<rule>.series.json, no series in TensorBoard or the report.
  bool keep_series = true;
  // Warnings about the configuration (a key given twice, set by two sources), recorded in
  // status.json and the rule reports besides being logged.
  std::vector<std::string> warnings;
  // Rule isolation (docs/run.md "Isolation and limits"): each rule in a worker process of its
  // own (--isolation process, the default) or in this one (none); per-call time limit and
  // memory limit (RLIMIT_DATA, 0 = unlimited) of each worker.
  bool isolate_rules = true;
  double rule_timeout_s = 300;
  uint64_t rule_memory_bytes = uint64_t{4} << 30;
  // --rule-batch-steps: at most this many steps per call of an isolated rule (1: a call per step;
  // docs/run.md "Isolation and limits").
  int64_t rule_batch_steps = 16;
  // --events-url, --eventbridge-bus, ...: where status events are also published (docs/events.md).
  events::EventDestinations events;
};

// What the command line said; unset fields do not override.
struct RunCommandLine {
  std::optional<std::string> trial;
  std::optional<std::string> rule;
  std::optional<std::string> plugin;
  std::optional<std::string> python_rule;  // --python-rule FILE: source_s3_uri
  std::vector<std::string> params;  // "key=value"
  std::optional<int64_t> start_step;
  std::optional<int64_t> end_step;
  std::vector<std::string> other_trials;
  std::optional<std::string> output_dir;
  std::optional<std::string> message_file;
  std::optional<std::string> failure_file;
  std::optional<std::string> logging_level;
  std::optional<int64_t> poll_interval_ms;
  std::optional<int64_t> rule_batch_steps;
  std::optional<std::string> prefetch_memory;  // "512M", "2G", bytes
  std::optional<std::string> config_file;
  std::vector<std::string> plugin_files;
  std::vector<std::string> plugin_dirs;
  bool keep_going = false;
  bool skip_damaged = false;
  bool fresh = false;
  bool allow_unknown_params = false;
  bool no_series = false;
  std::optional<std::string> isolation;    // "process" or "none"
  std::optional<std::string> rule_timeout; // seconds
  std::optional<std::string> rule_memory;  // "512M", "4G", "unlimited"
  events::EventDestinations events;  // as given; completed and checked by BuildJobConfig
};

// Reads an environment variable; injectable for tests.
using GetEnvFn = std::function<std::optional<std::string>(const std::string&)>;
GetEnvFn ProcessEnvironment();

// Builds the job. InvalidArgument (one line naming the key, file or variable) for: an unreadable
// or malformed YAML file, LITMUS_RULE_PARAMETERS that is not a JSON object of strings, a
// parameter that is not key=value, more than 100 parameters or a key/value over 256 characters,
// a non-integer step, no trial, no rule, --rule with a config of several rules, two rules of the
// same name, a LITMUS_OUTPUT_LAYOUT other than sagemaker or local. A key given twice on the command line, or set with different values by two sources,
// keeps the higher-precedence (or later) value and appends one note naming the key and both
// values to *notes (may be null; the caller logs them as warnings).
StatusOr<JobConfig> BuildJobConfig(const RunCommandLine& cli, const GetEnvFn& getenv,
                                   std::vector<std::string>* notes = nullptr);

// After BuildJobConfig failed: what is needed to report that failure like any other client error
// (JobRunner::ReportConfigurationError). Best effort, never fails: output_dir, message_file and
// failure_file from the command line, else from the --config file when it can be read, else the
// defaults of the detected layout (local if LITMUS_OUTPUT_LAYOUT is invalid); its plugins; and the rules as far as they are known (--rule or rule_to_invoke of
// LITMUS_RULE_PARAMETERS, else the config file's rules), names as typed, without parameters.
JobConfig FallbackJobConfig(const RunCommandLine& cli, const GetEnvFn& getenv);

// A number of seconds > 0, finite and at most 10^7 (about four months: larger values are not
// durations a clock can add), as text -> the number. InvalidArgument "what: expected ..." else.
StatusOr<double> ParsePositiveSeconds(const std::string& text, const std::string& what);

// "512M", "2G", "1048576" -> bytes.
StatusOr<uint64_t> ParseByteSize(const std::string& text);

}  // namespace litmus
