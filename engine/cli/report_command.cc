// `litmus report`: ReportGenerator once over a job's output folder.
#include "report_command.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "exit_codes.h"
#include "litmus/aws/trial_env.h"
#include "report_generator.h"

namespace litmus::cli {

ReportCommandOptions& AddReportCommand(CLI::App& app) {
  static ReportCommandOptions options;
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write the HTML report of a job from its output folder (finished or still running): one self-contained "
      "file with the job and trial, the rules summary, a chart of what each rule watched with its thresholds "
      "and firings, the loss curves and the watched tensors' statistics (docs/report.md). Prints the file's "
      "path. Exit code: 0 written, 2 not a job's output folder or a file that cannot be read or written");
  cmd->add_option("OUTPUT_DIR", options.output_dir, "The job's output folder (litmus run --output-dir)")
      ->required()
      ->type_name("DIR");
  cmd->add_option("--output,-o", options.file, "Where to write the report (default OUTPUT_DIR/report.html)")
      ->type_name("FILE");
  cmd->add_option("--trial", options.trial,
                  "The trial to read loss curves and tensor statistics from (default: the trial the job read, as "
                  "its checkpoint.json names it; a relative path is relative to the current folder)")
      ->type_name("PATH");
  return options;
}

int RunReport(const ReportCommandOptions& options) {
  aws::TrialEnv trial_env;
  const std::string trial = options.trial;
  if (!trial.empty()) trial_env.AddTrial(trial);
  report::ReportGenerator generator(
      {.output_dir = options.output_dir, .file = options.file, .trial = trial, .refresh_seconds = 0}, Env::Default(),
      &trial_env);
  if (Status written = generator.Write(); !written.ok()) return Fail(kExitBadInput, written.message());
  std::cout << generator.path() << std::endl;
  return kExitOk;
}

}  // namespace litmus::cli
