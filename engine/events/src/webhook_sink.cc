// The webhook sink: one JSON POST per event.
#include <spdlog/spdlog.h>

#include "litmus/events/event_destinations.h"
#include "litmus/events/event_sink.h"

namespace litmus::events {
namespace {

class WebhookSink final : public EventSink {
 public:
  WebhookSink(aws::HttpTransport* transport, std::string url)
      : transport_(transport), url_(std::move(url)), description_("webhook " + UrlOrigin(url_)) {}

  const std::string& description() const override { return description_; }
  size_t max_batch() const override { return 1; }

  AttemptResult Send(const std::vector<EventItem>& batch) override {
    const EventItem& item = batch.front();
    auto response = transport_->Send({.method = "POST",
                                      .url = url_,
                                      .headers = {{"Content-Type", "application/json"},
                                                  {"User-Agent", "litmus-events"},
                                                  {"X-Litmus-Event", item.name}},
                                      .body = item.json});
    if (!response.ok()) {
      return {.outcome = AttemptOutcome::kRetry, .retry = {}, .dropped = 0,
              .error = std::string(response.status().message())};
    }
    const long status = response->status;
    if (status >= 200 && status < 300) return {};
    const std::string error = "HTTP " + std::to_string(status);
    if (status == 408 || status == 429 || status >= 500) {
      return {.outcome = AttemptOutcome::kRetry, .retry = {}, .dropped = 0, .error = error};
    }
    return {.outcome = AttemptOutcome::kDrop, .retry = {}, .dropped = 0, .error = error};
  }

 private:
  aws::HttpTransport* transport_;
  std::string url_;
  std::string description_;
};

}  // namespace

std::unique_ptr<EventSink> NewWebhookSink(aws::HttpTransport* transport, std::string url) {
  return std::make_unique<WebhookSink>(transport, std::move(url));
}

}  // namespace litmus::events
