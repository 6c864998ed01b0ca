// ActionClient: the AWS calls actions make (SageMaker ListTrainingJobs/StopTrainingJob, SNS
// CreateTopic/ListSubscriptions/Subscribe/Publish), as one interface so tests can fake them.
// NewAwsActionClient (aws_action_client.h) is the real one. Errors are Status values whose
// messages never contain credentials; they may quote an AWS answer (callers mask endpoints).
// Thread-safety: implementations must allow concurrent calls.
#pragma once

#include <string>
#include <vector>

#include "litmus/status.h"

namespace litmus::actions {

struct TrainingJobSummary {
  std::string name;
  std::string status;  // TrainingJobStatus
};

struct TrainingJobPage {
  std::vector<TrainingJobSummary> jobs;
  std::string next_token;  // "" on the last page
};

struct SnsSubscription {
  std::string protocol;  // "email", "sms", ...
  std::string endpoint;
  std::string topic_arn;
};

struct SnsSubscriptionPage {
  std::vector<SnsSubscription> subscriptions;
  std::string next_token;  // "" on the last page
};

class ActionClient {
 public:
  virtual ~ActionClient();

  // sagemaker:ListTrainingJobs(NameContains=name_contains, StatusEquals=InProgress,
  // SortBy=CreationTime, SortOrder=Descending[, NextToken=next_token]): one page.
  virtual StatusOr<TrainingJobPage> ListInProgressTrainingJobs(const std::string& name_contains,
                                                               const std::string& next_token) = 0;
  // sagemaker:StopTrainingJob(TrainingJobName=name).
  virtual Status StopTrainingJob(const std::string& name) = 0;
  // sns:CreateTopic(Name=name) (idempotent): the topic's ARN.
  virtual StatusOr<std::string> CreateTopic(const std::string& name) = 0;
  // sns:ListSubscriptions([NextToken=next_token]): one page.
  virtual StatusOr<SnsSubscriptionPage> ListSubscriptions(const std::string& next_token) = 0;
  // sns:Subscribe(TopicArn, Protocol, Endpoint, Attributes={FilterPolicy: filter_policy_json},
  // ReturnSubscriptionArn=false).
  virtual Status Subscribe(const std::string& topic_arn, const std::string& protocol, const std::string& endpoint,
                           const std::string& filter_policy_json) = 0;
  // sns:Publish(TopicArn, Subject, Message, MessageAttributes={attribute_name: String
  // attribute_value}): the MessageId.
  virtual StatusOr<std::string> Publish(const std::string& topic_arn, const std::string& subject,
                                        const std::string& message, const std::string& attribute_name,
                                        const std::string& attribute_value) = 0;
};

}  // namespace litmus::actions
