// `litmus inspect TRIAL [--tensor REGEX]... [--collection NAME]... [--mode MODE] [--step N|A:B]
// [--values | --no-values] [--json]`: describes a trial as it is now, or the selected part of it.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace litmus::cli {

struct InspectOptions {
  std::string trial;
  std::vector<std::string> tensor_regex;
  std::vector<std::string> collections;
  std::string mode;  // empty: every mode
  std::string step;  // empty: every step
  bool values = false;
  bool json = false;
  bool no_values = false;
};

// Registers the subcommand; the returned options are filled when it is parsed.
InspectOptions& AddInspectCommand(CLI::App& app);
// Runs it. Returns the process exit code: 0 success, 2 bad input (missing folder, not a trial,
// corrupt file, a bad filter), with one line on stderr for failures.
int RunInspect(const InspectOptions& options);

}  // namespace litmus::cli
