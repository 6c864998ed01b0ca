// `litmus run`: evaluates rules on a trial (docs/run.md). One rule from the command line or
// several from a YAML file; parameters also from LITMUS_RULE_PARAMETERS and S3_PATH.
#pragma once

namespace CLI {
class App;
}

namespace litmus::cli {

struct RunOptions;
// Registers the subcommand; the returned options are filled when it is parsed.
RunOptions& AddRunCommand(CLI::App& app);
// Runs it; returns the process exit code (0, 1, 2, 3 or 143; see docs/run.md).
int RunRun(const RunOptions& options);

}  // namespace litmus::cli
