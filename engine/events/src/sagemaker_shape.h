// SageMakerShaper: turns the job's status changes into the detail of SageMaker's "SageMaker
// Training Job State Change" event (docs/job-contract.md §7), the DescribeTrainingJob shape that
// existing Lambda functions read: TrainingJobName, TrainingJobStatus and
// DebugRuleEvaluationStatuses, the latter tracked from the events seen so far (RuleStarted:
// InProgress; StatusChanged, RuleEnded: their status). Thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace litmus::events {

class SageMakerShaper {
 public:
  explicit SageMakerShaper(std::string training_job_name);
  // Records `event` (an events.jsonl object); returns the SageMaker detail (JSON text) when the
  // event is a StatusChanged, nullopt otherwise.
  std::optional<std::string> Observe(const nlohmann::json& event);

 private:
  struct RuleStatus {
    std::string name;  // RuleConfigurationName
    std::string status;
    std::string details;
    std::string modified;
  };
  RuleStatus& Rule(const std::string& name);

  std::string training_job_name_;
  std::vector<RuleStatus> rules_;  // in order of first appearance
};

}  // namespace litmus::events
