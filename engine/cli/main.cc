// Entry point of the `litmus` binary: parses the command line and dispatches to a subcommand.
// Exceptions that escape a command are bugs: reported in one line, exit code 3.
#include <spdlog/spdlog.h>

#include <malloc.h>

#if LITMUS_SCALABLE_MALLOC
// Defines the object whose constructor pulls in oneTBB's malloc replacement (engine/CMakeLists.txt).
#include <oneapi/tbb/tbbmalloc_proxy.h>
#endif

#include <oneapi/tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>

#include "exit_codes.h"
#include "inspect_command.h"
#include "isolation/rule_worker.h"
#include "new_rule_command.h"
#include "report_command.h"
#include "rules_command.h"
#include "run_command.h"
#include "stderr_logger.h"

namespace litmus::cli {

int Fail(int code, std::string_view message) {
  std::string line(message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::cerr << "litmus: error: " << line << std::endl;
  return code;
}

namespace {

int Main(int argc, char** argv) {
  CLI::App app{"litmus: evaluate SageMaker Debugger (smdebug) rules on training trials"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "litmus " LITMUS_VERSION);
  std::string logging_level = "info";
  app.add_option("--logging-level", logging_level, "trace, debug, info, warning, error, critical or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warning", "warn", "error", "critical", "off"},
                            CLI::ignore_case));

  InspectOptions& inspect = AddInspectCommand(app);
  RunOptions& run = AddRunCommand(app);
  RulesOptions& rules = AddRulesCommand(app);
  NewRuleOptions& new_rule = AddNewRuleCommand(app);
  ReportCommandOptions& report = AddReportCommand(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // The hint names the help of the subcommand being parsed, if any.
    std::string help = "litmus --help";
    for (const CLI::App* sub : app.get_subcommands()) help = "litmus " + sub->get_name() + " --help";
    return Fail(kExitBadInput, e.what() + std::string(" (see ") + help + ")");
  }

  spdlog::set_default_logger(MakeStderrLogger());
  spdlog::set_level(spdlog::level::from_str(logging_level == "warn" ? "warning" : logging_level));

  if (app.got_subcommand("inspect")) return RunInspect(inspect);
  if (app.got_subcommand("run")) return RunRun(run);
  if (app.got_subcommand("rules")) return RunRules(rules);
  if (app.got_subcommand("new-rule")) return RunNewRule(new_rule);
  if (app.got_subcommand("report")) return RunReport(report);
  return Fail(kExitBadInput, "no command given (see litmus --help)");
}

}  // namespace
}  // namespace litmus::cli

int main(int argc, char** argv) {
  // A rule's worker process (`litmus __rule-worker`, started by `litmus run`): nothing else runs.
  if (litmus::isolation::IsRuleWorkerCommand(argc, argv)) return litmus::isolation::RunRuleWorker(argc, argv);
  // Decoded tensors live in heap buffers of up to many MiB that are freed and reallocated step
  // after step. With glibc's defaults (128 KiB mmap threshold) each is a fresh mmap whose pages
  // fault in and are zeroed by the kernel; keeping them in the heap makes reuse cheap.
  // (oneTBB's allocator, when linked in, caches large blocks by itself.)
#if !LITMUS_SCALABLE_MALLOC
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
  // oneTBB's worker threads are joined before exit (tbb::finalize) so that their thread-local
  // state is released the normal way: OpenSSL keeps an error queue per thread that signed an S3
  // request, and a worker thread still alive at exit leaves it behind (LeakSanitizer reports it).
  // (Every parallel section has finished when Main returns; should finalize find otherwise, it
  // returns false without waiting.)
  tbb::task_scheduler_handle workers{tbb::attach{}};
  try {
    const int code = litmus::cli::Main(argc, argv);
    (void)tbb::finalize(workers, std::nothrow);
    return code;
  } catch (const std::exception& e) {
    return litmus::cli::Fail(litmus::cli::kExitInternal, std::string("internal error: ") + e.what());
  } catch (...) {
    return litmus::cli::Fail(litmus::cli::kExitInternal, "internal error: unknown exception");
  }
}
