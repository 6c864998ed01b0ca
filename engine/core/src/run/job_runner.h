// JobRunner: `litmus run` — evaluates one or more rules on a trial that may still be growing,
// with smdebug's invoke-loop semantics (docs/job-contract.md §5), and reports by exit code and
// files (§6.4, JobReporter).
//
// The loop walks *discovered* global steps (not every integer): for each rule a cursor; the
// smallest step any rule is waiting for is evaluated for all rules waiting on it. For that step
// every rule declares its RequiredTensors (set_required_tensors), the union is read and decoded
// in parallel (oneTBB) into the trial's shared cache, then the rules are invoked in parallel
// (one instance never on two threads at once). While they run, the next step's requirements are
// already being read. Refresh (listing new files) only runs when no read is in flight.
// Run() is called once, from one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "litmus/format/env.h"
#include "run/job_config.h"
#include "run/job_observer.h"
#include "run/verdict_table.h"

namespace litmus {

class JobRunner {
 public:
  JobRunner(JobConfig config, Env* env);
  ~JobRunner();
  // Runs the job to its end and returns the process exit code: 0 no issues, 1 a condition was
  // met, 2 client error, 3 internal error, 143 stopped (SIGTERM or stop-signal file).
  int Run();
  // Tells `observer` (not owned; outlives Run) what the job does (run/job_observer.h). Before Run.
  void AddObserver(JobObserver* observer);
  // After Run: one row per rule, for the table the command prints (verdict_table.h).
  const std::vector<VerdictRow>& Verdict() const;

  // For a job whose configuration could not be built (BuildJobConfig's error; `config` from
  // FallbackJobConfig) or was refused afterwards (an unknown logging level): reports it as Run()
  // reports an error found at setup (unknown rule, invalid parameter value): each rule of
  // `config` Error, named by its class name when the plugins load, status.json with exit_code 2,
  // a StatusChanged event per rule, and "ClientError: <message>" in the message and failure
  // files. Logs no error line (the caller prints it). Returns 2. *verdict (may be null): each
  // rule of `config` Error, as far as the configuration names them.
  static int ReportConfigurationError(JobConfig config, const std::string& message,
                                      std::vector<VerdictRow>* verdict = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace litmus
