// RuleActions: the actions of one rule (docs/job-contract.md §8). Prepare() makes the rule-start
// calls (StopTraining: ListTrainingJobs; Email/SMS: CreateTopic, ListSubscriptions, Subscribe);
// Fire() runs every action once for one firing (StopTrainingJob when exactly one job matched;
// Publish). Each returns one ActionResult per action, for the job's events; a failed action never
// throws and never affects the others. Targets and errors in results and logs have e-mail and
// phone endpoints masked. Thread-compatible: one thread at a time.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/actions/action_client.h"
#include "litmus/actions/action_spec.h"

namespace litmus::actions {

enum class ActionOutcome {
  kOk,       // the calls succeeded
  kSkipped,  // nothing to do (StopTraining without exactly one matching job)
  kFailed,   // a call failed (error says which and why)
};
std::string_view ActionOutcomeName(ActionOutcome outcome);  // "ok", "skipped", "failed"

struct ActionResult {
  std::string action;  // ActionKindName
  std::string target;  // DisplayTarget: prefix, or masked endpoint
  ActionOutcome outcome = ActionOutcome::kOk;
  std::string detail;  // one line: what was done, or why nothing was (ok / skipped)
  std::string error;   // one line, endpoints masked (failed only)
};

class Action;  // one action's behaviour (src/action.h)

class RuleActions {
 public:
  // `client` is borrowed and must outlive this object.
  RuleActions(const std::vector<ActionSpec>& specs, ActionClient* client);
  ~RuleActions();
  RuleActions(const RuleActions&) = delete;
  RuleActions& operator=(const RuleActions&) = delete;

  bool empty() const { return actions_.empty(); }
  size_t size() const { return actions_.size(); }

  // The rule-start calls of every action, in order. Call once, before Fire.
  std::vector<ActionResult> Prepare();
  // One firing of rule `rule_name` (its class name) with `message` (the condition-met text):
  // every action once, in order. An action whose preparation failed reports kFailed.
  std::vector<ActionResult> Fire(const std::string& rule_name, const std::string& message);

 private:
  std::vector<std::unique_ptr<Action>> actions_;
};

}  // namespace litmus::actions
