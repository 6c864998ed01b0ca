// RuleActions: builds one Action per spec and runs them in order, logging each result.
#include "litmus/actions/rule_actions.h"

#include <spdlog/spdlog.h>

#include "action.h"

namespace litmus::actions {
namespace {

void Log(std::string_view phase, const ActionResult& r) {
  if (r.outcome == ActionOutcome::kFailed) {
    spdlog::warn("action {} ({}) {}: failed: {}", r.action, r.target, phase, r.error);
  } else {
    spdlog::info("action {} ({}) {}: {}", r.action, r.target, phase, r.detail);
  }
}

}  // namespace

Action::~Action() = default;

std::string_view ActionOutcomeName(ActionOutcome outcome) {
  switch (outcome) {
    case ActionOutcome::kOk: return "ok";
    case ActionOutcome::kSkipped: return "skipped";
    case ActionOutcome::kFailed: return "failed";
  }
  return "failed";
}

RuleActions::RuleActions(const std::vector<ActionSpec>& specs, ActionClient* client) {
  for (const ActionSpec& spec : specs) {
    actions_.push_back(spec.kind == ActionKind::kStopTraining ? NewStopTrainingAction(spec, client)
                                                               : NewNotifyAction(spec, client));
  }
}

RuleActions::~RuleActions() = default;

std::vector<ActionResult> RuleActions::Prepare() {
  std::vector<ActionResult> results;
  for (auto& action : actions_) {
    results.push_back(action->Prepare());
    Log("at rule start", results.back());
  }
  return results;
}

std::vector<ActionResult> RuleActions::Fire(const std::string& rule_name, const std::string& message) {
  std::vector<ActionResult> results;
  for (auto& action : actions_) {
    results.push_back(action->Fire(rule_name, message));
    Log("on firing", results.back());
  }
  return results;
}

}  // namespace litmus::actions
