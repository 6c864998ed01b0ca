// The EventBridge sink: PutEvents of up to 10 entries, partial failures retried alone.
#include <nlohmann/json.hpp>

#include "litmus/events/event_publisher.h"
#include "litmus/events/event_sink.h"

namespace litmus::events {
namespace {

using Json = nlohmann::json;

// PutEvents entry error codes worth another try (EventBridge's API reference: throttling and
// internal failures; everything else, e.g. MalformedDetail or an unknown bus, will not heal).
bool IsRetryableEntryError(const std::string& code) {
  return code == "ThrottlingException" || code == "InternalFailure" || code == "InternalException" ||
         code == "ServiceUnavailable";
}

class EventBridgeSink final : public EventSink {
 public:
  EventBridgeSink(aws::AwsClient* client, std::string bus)
      : client_(client), bus_(std::move(bus)), description_("EventBridge bus " + bus_) {}

  const std::string& description() const override { return description_; }
  size_t max_batch() const override { return 10; }  // PutEvents' limit

  AttemptResult Send(const std::vector<EventItem>& batch) override {
    Json entries = Json::array();
    for (const EventItem& item : batch) {
      entries.push_back({{"Source", kSource},
                         {"DetailType", item.detail_type},
                         {"Detail", item.json},
                         {"EventBusName", bus_}});
    }
    const Json body = {{"Entries", std::move(entries)}};
    auto response = client_->Send({.method = "POST",
                                   .url = client_->endpoint() + "/",
                                   .headers = {{"Content-Type", "application/x-amz-json-1.1"},
                                               {"X-Amz-Target", "AWSEvents.PutEvents"}},
                                   .body = body.dump(-1, ' ', false, Json::error_handler_t::replace)});
    if (!response.ok()) {
      // No answer (Unavailable) may heal; so may credentials that could not be fetched yet.
      return {.outcome = AttemptOutcome::kRetry, .retry = {}, .dropped = 0,
              .error = "events:PutEvents: " + std::string(response.status().message())};
    }
    if (response->status < 200 || response->status >= 300) {
      const std::string error = "events:PutEvents: " + aws::DescribeAwsError(*response);
      if (aws::IsRetryableResponse(*response)) return {.outcome = AttemptOutcome::kRetry, .retry = {}, .dropped = 0, .error = error};
      return {.outcome = AttemptOutcome::kDrop, .retry = {}, .dropped = 0, .error = error};
    }
    const Json answer = Json::parse(response->body, nullptr, /*allow_exceptions=*/false);
    if (!answer.is_object() || answer.value("FailedEntryCount", 0) == 0) return {};
    // Entries answer in request order; a failed one has ErrorCode (and ErrorMessage).
    AttemptResult result{.outcome = AttemptOutcome::kDelivered, .retry = {}, .dropped = 0, .error = ""};
    const Json& results = answer.contains("Entries") && answer["Entries"].is_array() ? answer["Entries"] : Json::array();
    for (size_t i = 0; i < batch.size() && i < results.size(); ++i) {
      if (!results[i].is_object() || !results[i].contains("ErrorCode")) continue;
      const std::string code = results[i].value("ErrorCode", "");
      result.error = "events:PutEvents: entry " + code + ": " + results[i].value("ErrorMessage", "");
      if (IsRetryableEntryError(code)) {
        result.retry.push_back(i);
      } else {
        ++result.dropped;
      }
    }
    if (!result.retry.empty()) result.outcome = AttemptOutcome::kRetry;
    return result;
  }

 private:
  aws::AwsClient* client_;
  std::string bus_;
  std::string description_;
};

}  // namespace

std::unique_ptr<EventSink> NewEventBridgeSink(aws::AwsClient* client, std::string bus) {
  return std::make_unique<EventBridgeSink>(client, std::move(bus));
}

}  // namespace litmus::events
