// `litmus inspect TRIAL [--json] [--no-values]`: describes a trial as it is now.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace litmus::cli {

struct InspectOptions {
  std::string trial;
  bool json = false;
  bool no_values = false;
};

// Registers the subcommand; the returned options are filled when it is parsed.
InspectOptions& AddInspectCommand(CLI::App& app);
// Runs it. Returns the process exit code: 0 success, 2 bad input (missing folder, not a trial,
// corrupt file), with one line on stderr for failures.
int RunInspect(const InspectOptions& options);

}  // namespace litmus::cli
