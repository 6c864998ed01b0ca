// InProcessRule: the RuleHandle of `--isolation none`, a RuleInstance called in the runner's own
// process. Calls of several steps (--rule-batch-steps) work as an isolated rule's do: the runner
// reads the values of a call's later steps for the lists RequirementPredictor guesses, and
// InvokeSteps, on the rule's own thread, declares each of those steps right before invoking it
// and stops before one whose list differs (the runner declares it again, answered from that
// declaration). After a call's last step it declares the next available one, which the runner's
// RequiredTensors of it then returns while the trials stay as they were: the rules' declarations
// run in their parallel calls instead of one after another on the runner's thread.
// During a call, the rule's tensor_value and tensor_reduction find the values (or summaries) the
// runner read for it in the call's table (CallValues, plugin/host_api.h), as an isolated rule's
// worker does in the shared memory's, instead of going through the trial's catalog and cache,
// whose lock every rule's thread takes.
#pragma once

#include <memory>
#include <vector>

#include "isolation/rule_handle.h"

namespace litmus {

// REQUIRES: `trials` (base trial first) are the instance's and outlive the handle.
std::unique_ptr<RuleHandle> NewInProcessRule(std::unique_ptr<RuleInstance> instance, std::vector<Trial*> trials);

}  // namespace litmus
