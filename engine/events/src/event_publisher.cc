// EventPublisher: destinations -> one EventQueue each; events.jsonl objects -> queue items.
#include "litmus/events/event_publisher.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "sagemaker_shape.h"

namespace litmus::events {
namespace {

aws::RetryPolicy OneAttempt() {
  aws::RetryPolicy policy;
  policy.max_attempts = 1;
  return policy;
}

}  // namespace

std::unique_ptr<EventPublisher> EventPublisher::Create(const EventDestinations& destinations,
                                                       PublisherOverrides overrides) {
  if (!destinations.any()) return nullptr;
  std::unique_ptr<EventPublisher> p(new EventPublisher());
  p->destinations_ = destinations;
  aws::HttpTransport* transport = overrides.transport;
  if (!transport) {
    // Short limits: one stuck request delays the job's end by at most request_timeout past the
    // flush deadline.
    p->owned_transport_ = aws::NewCurlTransport({.connect_timeout = std::chrono::milliseconds(3000),
                                                 .request_timeout = std::chrono::milliseconds(5000),
                                                 .low_speed_time = std::chrono::seconds(5)});
    transport = p->owned_transport_.get();
  }
  if (!destinations.webhook_url.empty()) {
    p->queues_.push_back(
        std::make_unique<EventQueue>(NewWebhookSink(transport, destinations.webhook_url), overrides.queue));
    p->webhook_ = p->queues_.back().get();
  }
  if (!destinations.eventbridge_bus.empty()) {
    aws::CredentialsProvider* credentials = overrides.credentials;
    if (!credentials) {
      p->owned_credentials_ = aws::DefaultCredentialsChain();
      credentials = p->owned_credentials_.get();
    }
    const std::string region = overrides.region.empty() ? aws::ResolveRegion() : overrides.region;
    const std::string endpoint = overrides.eventbridge_endpoint.empty()
                                     ? aws::ResolveEndpoint("EVENTBRIDGE", "events.{region}.amazonaws.com", region)
                                     : overrides.eventbridge_endpoint;
    // One attempt per call: the queue retries, with a backoff that the job's end can cut short.
    p->eventbridge_client_ = std::make_unique<aws::AwsClient>(transport, credentials, region, "events", endpoint,
                                                              OneAttempt());
    p->queues_.push_back(std::make_unique<EventQueue>(
        NewEventBridgeSink(p->eventbridge_client_.get(), destinations.eventbridge_bus), overrides.queue));
    p->eventbridge_ = p->queues_.back().get();
    if (destinations.sagemaker_shape) p->shaper_ = std::make_unique<SageMakerShaper>(destinations.training_job_name);
  }
  return p;
}

EventPublisher::~EventPublisher() { Close(); }

void EventPublisher::Publish(const std::string& event_json) {
  const nlohmann::json event = nlohmann::json::parse(event_json, nullptr, /*allow_exceptions=*/false);
  std::string name = event.is_object() ? event.value("event", "") : "";
  if (webhook_) webhook_->Push({.detail_type = kRuleStatusDetailType, .json = event_json, .name = name});
  if (eventbridge_) {
    eventbridge_->Push({.detail_type = kRuleStatusDetailType, .json = event_json, .name = name});
    if (shaper_) {
      if (auto detail = shaper_->Observe(event)) {
        eventbridge_->Push({.detail_type = kSageMakerDetailType, .json = std::move(*detail), .name = name});
      }
    }
  }
}

void EventPublisher::Close() {
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(destinations_.flush_timeout_s));
  // Each queue's sender has been draining all along; wait for all of them against one deadline.
  for (auto& queue : queues_) queue->Close(deadline);
}

}  // namespace litmus::events
