// Helpers shared by the `litmus run` end-to-end tests split by concern (run_defaults_test,
// run_verdict_test, run_trial_paths_test): reading the job's files, a command line writing
// everything into one folder, and the plugins under test. Header-only; not thread-safe.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/job_files.h"
#include "support/run_process.h"

namespace litmus::testing {

using Json = nlohmann::json;

// smdebug's final refresh delay off: a finished trial ends the job at once.
inline const std::vector<std::pair<std::string, std::string>> kFastEnd = {
    {"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}};

// `litmus run --output-dir out --poll-interval-ms 20 extra...` (message and failure files are
// then out/message and out/failure outside a SageMaker container).
inline std::vector<std::string> RunArgsInto(const std::filesystem::path& out, std::vector<std::string> extra) {
  std::vector<std::string> args = {LitmusBinary(), "run", "--output-dir", out.string(), "--poll-interval-ms", "20"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// The lines of `text` that start with `prefix`.
inline std::vector<std::string> LinesStartingWith(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

inline size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace litmus::testing
