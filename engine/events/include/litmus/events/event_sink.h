// EventSink: one receiver of rule status events (a webhook, an EventBridge bus), driven by an
// EventQueue's sender thread. A sink makes one delivery attempt per call and says whether the
// batch, or which of its events, should be tried again; retries, backoff and deadlines are the
// queue's. Thread-safety: Send is called from one thread at a time.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "litmus/aws/aws_client.h"
#include "litmus/aws/http.h"

namespace litmus::events {

struct EventItem {
  std::string detail_type;  // EventBridge DetailType ("Rule Evaluation Status Change", ...)
  std::string json;         // the event: one JSON object
  std::string name;         // for logs: the event's name ("StatusChanged")
};

enum class AttemptOutcome { kDelivered, kRetry, kDrop };

struct AttemptResult {
  AttemptOutcome outcome = AttemptOutcome::kDelivered;
  // kRetry: indices (into the batch) of the events to send again; empty means all of them.
  std::vector<size_t> retry;
  // Events of the batch dropped for good although others were delivered or retried (an entry
  // EventBridge refused); with kDrop the whole batch is dropped.
  size_t dropped = 0;
  std::string error;  // why not delivered (one line, no secrets)
};

class EventSink {
 public:
  virtual ~EventSink();
  // What logs call it: "webhook http://host:8080", "EventBridge bus ops".
  virtual const std::string& description() const = 0;
  virtual size_t max_batch() const = 0;
  virtual AttemptResult Send(const std::vector<EventItem>& batch) = 0;
};

// POSTs each event as its own request (Content-Type: application/json) to `url`. 2xx delivered;
// no answer, 408, 429 or 5xx retried; any other status dropped. `transport` is borrowed.
std::unique_ptr<EventSink> NewWebhookSink(aws::HttpTransport* transport, std::string url);

// PutEvents (JSON 1.1, X-Amz-Target: AWSEvents.PutEvents) of up to 10 entries per call, source
// "litmus", on bus `bus`, through `client` (borrowed; signing name "events"; give it a RetryPolicy
// of one attempt, the queue retries). A 5xx, 429 or throttling answer, or no answer, retries the
// batch; entries that EventBridge answers with ThrottlingException or InternalFailure (in a
// FailedEntryCount answer) are retried alone; other failed entries and other errors are dropped.
std::unique_ptr<EventSink> NewEventBridgeSink(aws::AwsClient* client, std::string bus);

}  // namespace litmus::events
