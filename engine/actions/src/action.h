// Action: one configured action's rule-start and firing behaviour, as RuleActions drives it
// (StopTrainingAction, NotifyAction). Thread-compatible.
#pragma once

#include <memory>
#include <string>

#include "litmus/actions/action_client.h"
#include "litmus/actions/action_spec.h"
#include "litmus/actions/rule_actions.h"

namespace litmus::actions {

class Action {
 public:
  virtual ~Action();
  // The rule-start calls. Called once, before Fire.
  virtual ActionResult Prepare() = 0;
  // One firing; see RuleActions::Fire.
  virtual ActionResult Fire(const std::string& rule_name, const std::string& message) = 0;
};

// StopTraining: ListTrainingJobs at rule start, StopTrainingJob on firing if exactly one matched.
std::unique_ptr<Action> NewStopTrainingAction(const ActionSpec& spec, ActionClient* client);
// Email / SMS through SNS: topic and subscription at rule start, Publish on firing.
std::unique_ptr<Action> NewNotifyAction(const ActionSpec& spec, ActionClient* client);

}  // namespace litmus::actions
