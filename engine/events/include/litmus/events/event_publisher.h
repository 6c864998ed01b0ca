// EventPublisher: the rule status events of one `litmus run` job (the events.jsonl objects,
// run/job_report.h), published as they happen to the configured destinations (docs/events.md),
// each through its own EventQueue: a webhook gets every object as is; an EventBridge bus gets
// each as an entry of detail-type "Rule Evaluation Status Change", and with the SageMaker shape
// also one "SageMaker Training Job State Change" entry per status change. Thread-safety: Publish
// may be called from any thread (in order: the caller serialises); Close once, at the job's end.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "litmus/aws/credentials.h"
#include "litmus/aws/http.h"
#include "litmus/events/event_destinations.h"
#include "litmus/events/event_queue.h"

namespace litmus::events {

inline constexpr char kSource[] = "litmus";
inline constexpr char kRuleStatusDetailType[] = "Rule Evaluation Status Change";
inline constexpr char kSageMakerDetailType[] = "SageMaker Training Job State Change";

// Borrowed overrides for tests; nullptr/empty = the real thing: a curl transport with short
// timeouts, DefaultCredentialsChain(), ResolveRegion(), and ResolveEndpoint("EVENTBRIDGE", ...)
// (AWS_ENDPOINT_URL_EVENTBRIDGE, else AWS_ENDPOINT_URL, else events.<region>.amazonaws.com).
struct PublisherOverrides {
  aws::HttpTransport* transport = nullptr;
  aws::CredentialsProvider* credentials = nullptr;
  std::string region;
  std::string eventbridge_endpoint;
  QueueOptions queue;
};

class SageMakerShaper;

class EventPublisher {
 public:
  // nullptr when `destinations` names none. `destinations` must have passed
  // CheckEventDestinations.
  static std::unique_ptr<EventPublisher> Create(const EventDestinations& destinations,
                                                PublisherOverrides overrides = {});
  ~EventPublisher();  // Close() if not closed

  // `event_json`: one events.jsonl object. Never waits for a receiver.
  void Publish(const std::string& event_json);
  // Flushes every destination until destinations.flush_timeout_s from now. Idempotent.
  void Close();

  const std::vector<std::unique_ptr<EventQueue>>& queues() const { return queues_; }

 private:
  EventPublisher() = default;

  EventDestinations destinations_;
  std::unique_ptr<aws::HttpTransport> owned_transport_;
  std::unique_ptr<aws::CredentialsProvider> owned_credentials_;
  std::unique_ptr<aws::AwsClient> eventbridge_client_;
  std::unique_ptr<SageMakerShaper> shaper_;
  EventQueue* webhook_ = nullptr;      // in queues_
  EventQueue* eventbridge_ = nullptr;  // in queues_
  std::vector<std::unique_ptr<EventQueue>> queues_;  // declared last: stopped first
};

}  // namespace litmus::events
