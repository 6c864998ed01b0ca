// The rule worker (`litmus-rule-worker __rule-worker PARENT_PID BUILD`, or the hidden mode of
// `litmus` with the same arguments: worker_process.h): one rule instance in a process of its own.
// It reads kInit from fd 3, sets its memory limit, maps the shared tensor memory (fd 4)
// read-only, loads the plugin with the usual loader and checks, creates the instance with the
// usual parameter handling (RuleInstance), then serves requests until kDestroy or the runner
// goes away (protocol.h). Serves requests on one thread; threads a plugin starts against the ABI
// contract are not waited for: the worker ends with _exit.
#pragma once

namespace litmus::isolation {

// The worker's whole life; returns the process exit code (0 after kDestroy).
int RunRuleWorker(int argc, char** argv);

// True if argv asks for the worker mode (checked first thing in main()).
bool IsRuleWorkerCommand(int argc, char** argv);

}  // namespace litmus::isolation
