// `litmus run`: command-line options -> RunCommandLine -> JobConfig (merged with the environment
// and the YAML file) -> JobRunner.
#include "run_command.h"

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "exit_codes.h"
#include "litmus/aws/trial_env.h"
#include "plugin_options.h"
#include "report_observer.h"
#include "run/job_config.h"
#include "run/job_runner.h"
#include "run/stop_signal.h"
#include "run/tensorboard_output.h"
#include "run/verdict_table.h"

namespace litmus::cli {

struct RunOptions {
  RunCommandLine line;
  PluginOptions plugins;
  std::string tensorboard_dir;  // --tensorboard-dir (empty: none)
  bool tensorboard_losses = false;
  CLI::Option* report = nullptr;  // --report [FILE]: given when count() > 0
  std::string report_file;        // its FILE ("" = <output folder>/report.html)
};

namespace {

// smdebug's level names (CRITICAL, FATAL, ERROR, WARNING, WARN, INFO, DEBUG, NOTSET) and
// spdlog's, case-insensitively.
std::optional<spdlog::level::level_enum> ParseLevel(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name == "critical" || name == "fatal") return spdlog::level::critical;
  if (name == "error") return spdlog::level::err;
  if (name == "warning" || name == "warn") return spdlog::level::warn;
  if (name == "info") return spdlog::level::info;
  if (name == "debug") return spdlog::level::debug;
  if (name == "trace" || name == "notset") return spdlog::level::trace;
  if (name == "off") return spdlog::level::off;
  return std::nullopt;
}

// The verdict table on stdout (logs are on stderr), whatever the log level.
void PrintVerdict(const std::vector<VerdictRow>& rows) {
  std::cout << FormatVerdictTable(rows) << std::flush;
}

}  // namespace

RunOptions& AddRunCommand(CLI::App& app) {
  static RunOptions options;
  RunCommandLine& l = options.line;
  CLI::App* cmd = app.add_subcommand(
      "run", "Evaluate rules on a trial, following it while training runs. Exit code: 0 no issues found, "
             "1 a rule's condition was met, 2 client error, 3 internal error, 143 stopped");
  cmd->add_option("--trial", l.trial, "Trial folder or s3://bucket/prefix (default: $S3_PATH, or trial: in --config)");
  cmd->add_option("--rule", l.rule,
                  "Rule to evaluate: its class name (VanishingGradient) or SageMaker's snake_case name "
                  "(vanishing_gradient), case-insensitive (default: rule_to_invoke in $LITMUS_RULE_PARAMETERS, or "
                  "rules: in --config). `litmus rules` lists the rules, `litmus rules NAME` shows a rule's "
                  "parameters")
      ->type_name("NAME");
  cmd->add_option("--python-rule", l.python_rule,
                  "Python file holding the rule class that --rule names: an smdebug Rule subclass, run unchanged "
                  "(SageMaker's source_s3_uri; --param values become its constructor's keyword arguments; "
                  "docs/python.md). A local path or s3://bucket/key.py, fetched once at job start with the "
                  "credentials, region and endpoint an s3:// trial uses (docs/s3.md)")
      ->type_name("FILE|S3_URI");
  AddPluginOptions(cmd, &options.plugins);
  cmd->add_option("--param", l.params,
                  "Rule parameter key=value (SageMaker RuleParameters; `litmus rules NAME` lists a rule's keys); "
                  "repeatable, a key given twice keeps its last value (with a warning). A key the rule does not "
                  "declare is an error (exit 2) unless --allow-unknown-params");
  cmd->add_flag("--allow-unknown-params", l.allow_unknown_params,
                "Accept parameter keys the rule does not declare: ignored, with a warning recorded in status.json "
                "and the rule report (SageMaker's behaviour)");
  cmd->add_option("--start-step", l.start_step, "First global step to evaluate (default 0)");
  cmd->add_option("--end-step", l.end_step, "Global step to stop before (exclusive; default: until training ends)");
  cmd->add_option("--other-trial", l.other_trials, "Another trial (folder or s3:// prefix) the rule reads (e.g. SimilarAcrossRuns); repeatable");
  cmd->add_option("--output-dir", l.output_dir,
                  "Where status.json, events.jsonl and rule-reports/ go (default ./litmus-output; inside a SageMaker "
                  "rule container /opt/ml/processing/output/rule, see docs/run.md)")
      ->type_name("DIR");
  cmd->add_option("--message-file", l.message_file,
                  "One-line outcome file, written for every non-zero exit (default <output-dir>/message; in a "
                  "SageMaker rule container /opt/ml/output/message)")
      ->type_name("FILE");
  cmd->add_option("--failure-file", l.failure_file,
                  "One-line failure file, written for exits 1, 2 and 3 (default <output-dir>/failure; in a SageMaker "
                  "rule container /opt/ml/output/failure)")
      ->type_name("FILE");
  cmd->add_option("--logging-level", l.logging_level, "critical, error, warning, info (default), debug, trace");
  cmd->add_option("--poll-interval-ms", l.poll_interval_ms, "How often to look for new steps (default 1000)");
  cmd->add_option("--prefetch-memory", l.prefetch_memory, "Memory for decoded tensors, e.g. 512M or 2G (default 256M)");
  cmd->add_option("--isolation", l.isolation,
                  "process (default): each rule runs in a worker process of its own, so a crash, exit, hang or "
                  "runaway memory of a rule ends only that rule (Error); none: rules run inside litmus (trusted "
                  "plugins; docs/run.md \"Isolation and limits\")")
      ->type_name("MODE");
  cmd->add_option("--rule-timeout", l.rule_timeout,
                  "Seconds one call of a rule may take before its worker is killed and the rule is Error (default "
                  "300; a rule's rule_timeout parameter overrides it; needs --isolation process)")
      ->type_name("SECONDS");
  cmd->add_option("--rule-memory", l.rule_memory,
                  "Memory limit of each rule's worker (RLIMIT_DATA), e.g. 512M or 4G, or unlimited (default 4G)")
      ->type_name("SIZE");
  cmd->add_option("--rule-batch-steps", l.rule_batch_steps,
                  "Evaluate up to N steps (1-64) in one call of each rule (default 16; 1: a call per step): a "
                  "call costs each isolated rule two context switches, which on a VM cost more than a small "
                  "rule's work, and in process lets the rules declare their requirements in parallel. A rule's "
                  "requirements at the later steps are predicted from its earlier ones and checked where it "
                  "runs; findings are those of one call per step (docs/run.md)")
      ->type_name("N");
  cmd->add_option("--config", l.config_file, "YAML file with the trial and several rules (docs/run.md)");
  cmd->add_flag("--skip-damaged", l.skip_damaged,
                "Skip a step whose required record is damaged (truncated, missing, corrupt), with a warning "
                "counted in status.json and the rule report; default: the rule ends in Error (exit 2)");
  cmd->add_flag("--fresh", l.fresh,
                "Start over: ignore the checkpoint of an interrupted run of this job in the output folder "
                "(default: resume it, reporting no firing twice; docs/run.md \"Resume\")");
  cmd->add_option("--events-url", l.events.webhook_url,
                  "POST each status event (the events.jsonl objects) as JSON to this http(s) URL as it happens; "
                  "retried with backoff, never delays evaluation (docs/events.md)")
      ->type_name("URL");
  cmd->add_option("--eventbridge-bus", l.events.eventbridge_bus,
                  "Publish each status event to this Amazon EventBridge bus (PutEvents, source litmus, detail-type "
                  "\"Rule Evaluation Status Change\")")
      ->type_name("NAME");
  cmd->add_flag("--eventbridge-sagemaker-shape", l.events.sagemaker_shape,
                "With --eventbridge-bus: also send each status change as SageMaker's \"SageMaker Training Job State "
                "Change\" (DebugRuleEvaluationStatuses), for existing Lambda functions");
  cmd->add_option("--training-job-name", l.events.training_job_name,
                  "TrainingJobName of SageMaker-shaped events (default: from a trial .../<job>/debug-output)")
      ->type_name("NAME");
  CLI::Option* tensorboard =
      cmd->add_option("--tensorboard-dir", options.tensorboard_dir,
                      "Also write the verdicts as a TensorBoard event file in DIR/litmus/ (view with `tensorboard "
                      "--logdir DIR`): per rule litmus/<rule>/condition_met (0/1) at each evaluated step, each series "
                      "the rule publishes, and the message of each firing as text, at the trial's global steps. A "
                      "file that cannot be written is an error of this output only: the verdict is unchanged "
                      "(docs/report.md \"TensorBoard\")")
          ->type_name("DIR");
  cmd->add_flag("--tensorboard-losses", options.tensorboard_losses,
                "With --tensorboard-dir: also the trial's losses (the `losses` collection) as losses/<tensor>")
      ->needs(tensorboard);
  options.report =
      cmd->add_option("--report", options.report_file,
                      "Also write the HTML report of the job (default FILE: <output-dir>/report.html): one "
                      "self-contained page with the rules summary, a chart of what each rule watched with its "
                      "thresholds and firings, the loss curves and the watched tensors' statistics; rewritten "
                      "atomically every few seconds while the job runs and at its end. `litmus report DIR` makes "
                      "the same page later (docs/report.md)")
          ->expected(0, 1)
          ->type_name("[FILE]");
  cmd->add_flag("--no-series", l.no_series,
                "Drop what rules publish besides their verdict (series of the values they compared, thresholds, "
                "recommendations): no rule-reports/<rule>.series.json and no series in TensorBoard or the "
                "report; for the last bit of speed (docs/report.md)");
  cmd->add_flag("--keep-going", l.keep_going,
                "Record every firing and keep evaluating (smdebug invoke_rule); default: a rule ends at its "
                "first firing, as in SageMaker");
  return options;
}

int RunRun(const RunOptions& options) {
  RunCommandLine line = options.line;
  line.plugin_files = options.plugins.files;
  line.plugin_dirs = options.plugins.dirs;
  std::vector<std::string> notes;
  auto config = BuildJobConfig(line, ProcessEnvironment(), &notes);
  // A configuration error is reported like the errors found later (unknown rule, invalid
  // parameter value): one line on stderr, exit 2, status.json and the message/failure files, and
  // the verdict of the rules it names.
  std::vector<VerdictRow> verdict;
  if (!config.ok()) {
    const std::string message(config.status().message());
    JobRunner::ReportConfigurationError(FallbackJobConfig(line, ProcessEnvironment()), message, &verdict);
    const int code = Fail(kExitBadInput, message);
    PrintVerdict(verdict);
    return code;
  }
  config->warnings = notes;
  if (!config->logging_level.empty()) {
    const auto level = ParseLevel(config->logging_level);
    if (!level) {
      const std::string message = "logging level: unknown level '" + config->logging_level + "'";
      JobRunner::ReportConfigurationError(std::move(config).value(), message, &verdict);
      const int code = Fail(kExitBadInput, message);
      PrintVerdict(verdict);
      return code;
    }
    spdlog::set_level(*level);
  }
  for (const std::string& note : notes) spdlog::warn("{}", note);
  StopSignal::InstallHandlers();
  // Local folders and s3:// prefixes alike (docs/s3.md).
  aws::TrialEnv env;
  env.AddTrial(config->trial);
  for (const RuleJobConfig& rule : config->rules) {
    for (const std::string& other : rule.other_trials) env.AddTrial(other);
  }
  std::unique_ptr<TensorBoardOutput> tensorboard;
  if (!options.tensorboard_dir.empty()) {
    tensorboard = std::make_unique<TensorBoardOutput>(
        TensorBoardOptions{.dir = options.tensorboard_dir, .losses = options.tensorboard_losses}, Env::Default());
  }
  std::unique_ptr<report::ReportObserver> html;
  if (options.report->count() > 0) {
    html = std::make_unique<report::ReportObserver>(
        report::ReportOptions{.output_dir = config->output_dir,
                              .file = options.report_file,
                              .trial = config->trial,
                              .refresh_seconds = 15},
        Env::Default(), &env);
  }
  JobRunner runner(std::move(config).value(), &env);
  if (tensorboard) runner.AddObserver(tensorboard.get());
  if (html) runner.AddObserver(html.get());
  const int code = runner.Run();
  PrintVerdict(runner.Verdict());
  return code;
}

}  // namespace litmus::cli
