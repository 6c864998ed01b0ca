// SageMakerShaper: the "SageMaker Training Job State Change" detail of a status change.
#include "sagemaker_shape.h"

namespace litmus::events {

using Json = nlohmann::ordered_json;

SageMakerShaper::SageMakerShaper(std::string training_job_name) : training_job_name_(std::move(training_job_name)) {}

SageMakerShaper::RuleStatus& SageMakerShaper::Rule(const std::string& name) {
  for (RuleStatus& r : rules_) {
    if (r.name == name) return r;
  }
  rules_.push_back({.name = name, .status = "InProgress", .details = "", .modified = ""});
  return rules_.back();
}

std::optional<std::string> SageMakerShaper::Observe(const nlohmann::json& event) {
  if (!event.is_object()) return std::nullopt;
  const std::string name = event.value("event", "");
  const std::string rule = event.value("rule", "");
  const std::string time = event.value("time", "");
  if (rule.empty()) return std::nullopt;
  if (name == "RuleStarted") {
    RuleStatus& r = Rule(rule);
    r.modified = time;
    return std::nullopt;
  }
  if (name != "StatusChanged" && name != "RuleEnded") return std::nullopt;
  RuleStatus& r = Rule(rule);
  const auto status = event.find("status");
  if (status != event.end() && status->is_string()) r.status = status->get<std::string>();
  r.details = event.value("message", "").substr(0, 1024);
  r.modified = time;
  if (name != "StatusChanged") return std::nullopt;

  // DescribeTrainingJob's shape, as SageMaker's events carry it. The rule job cannot see the
  // training job's own status; it is running while its rules are evaluated, which is what the
  // documented Lambda pattern (InProgress + IssuesFound -> StopTrainingJob) tests for.
  Json statuses = Json::array();
  for (const RuleStatus& s : rules_) {
    Json j;
    j["RuleConfigurationName"] = s.name;
    j["RuleEvaluationStatus"] = s.status;
    if (!s.details.empty()) j["StatusDetails"] = s.details;
    j["LastModifiedTime"] = s.modified;
    statuses.push_back(std::move(j));
  }
  Json detail;
  detail["TrainingJobName"] = training_job_name_;
  detail["TrainingJobStatus"] = "InProgress";
  detail["DebugRuleEvaluationStatuses"] = std::move(statuses);
  return detail.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace litmus::events
