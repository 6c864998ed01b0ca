// `litmus report OUTPUT_DIR [--output FILE] [--trial TRIAL]`: the HTML report of a finished or a
// running job from its output folder (docs/report.md "The HTML report"), the same page
// `litmus run --report` writes.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace litmus::cli {

struct ReportCommandOptions {
  std::string output_dir;
  std::string file;   // --output ("" = OUTPUT_DIR/report.html)
  std::string trial;  // --trial ("" = the trial the job's checkpoint names)
};

// Registers the subcommand; the returned options are filled when it is parsed.
ReportCommandOptions& AddReportCommand(CLI::App& app);
// Runs it. Returns the process exit code: 0 written (its path on stdout); 2 for a folder that is
// not a job's output folder, a job file that cannot be read, or a report that cannot be written
// (one line on stderr).
int RunReport(const ReportCommandOptions& options);

}  // namespace litmus::cli
