// EventQueue, the webhook and EventBridge sinks and EventPublisher against a LocalHttpServer on
// 127.0.0.1: order, retries of 5xx/429/dropped connections, 4xx dropped, partial PutEvents
// failures retried alone, a blocked receiver never blocking Publish, a full queue dropping its
// oldest event, and Close giving up at its deadline instead of waiting out the backoff.
#include <condition_variable>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "litmus/events/event_publisher.h"
#include "unit/aws/local_http_server.h"

namespace litmus::events {
namespace {

using Json = nlohmann::json;
using ::testing::ElementsAre;
using testing::LocalHttpServer;
using testing::ServedRequest;
using testing::ServedResponse;

// Records request bodies; answers from a script (then 200).
class Receiver {
 public:
  explicit Receiver(std::vector<ServedResponse> script = {})
      : script_(std::move(script)), server_([this](const ServedRequest& r) { return Serve(r); }) {}

  std::string url() const { return server_.url() + "/hook?token=s3cr3t"; }
  std::vector<std::string> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  std::vector<ServedRequest> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  // Requests block until Release() while `hold` is set.
  void Hold() {
    std::lock_guard lock(mu_);
    hold_ = true;
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      hold_ = false;
    }
    cv_.notify_all();
  }
  // Waits until `n` requests arrived.
  void WaitForRequests(size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return requests_.size() >= n; });
  }

 private:
  ServedResponse Serve(const ServedRequest& request) {
    std::unique_lock lock(mu_);
    requests_.push_back(request);
    cv_.notify_all();
    cv_.wait(lock, [&] { return !hold_; });
    ServedResponse response;
    if (next_ < script_.size()) response = script_[next_++];
    if (response.status >= 200 && response.status < 300 && !response.drop_connection) bodies_.push_back(request.body);
    return response;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false;
  std::vector<ServedResponse> script_;
  size_t next_ = 0;
  std::vector<std::string> bodies_;
  std::vector<ServedRequest> requests_;
  LocalHttpServer server_;  // last: stopped before the state it uses goes away
};

ServedResponse Answer(int status, std::string body = "") {
  ServedResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

ServedResponse DropConnection() {
  ServedResponse r;
  r.drop_connection = true;
  return r;
}

QueueOptions Queue(size_t capacity, int max_attempts, std::chrono::milliseconds delay) {
  QueueOptions q;
  q.capacity = capacity;
  q.max_attempts = max_attempts;
  q.base_delay = delay;
  q.max_delay = delay;
  return q;
}

std::string Event(const std::string& name, int step) {
  return Json({{"event", name}, {"rule", "VanishingGradient"}, {"step", step}}).dump();
}

// Fast retries for tests.
QueueOptions Fast() { return Queue(100, 5, std::chrono::milliseconds(2)); }

std::unique_ptr<EventPublisher> Webhook(const std::string& url, QueueOptions queue = Fast(), double flush_s = 30) {
  EventDestinations d;
  d.webhook_url = url;
  d.flush_timeout_s = flush_s;
  PublisherOverrides o;
  o.queue = queue;
  return EventPublisher::Create(d, o);
}

TEST(EventPublisherTest, NoDestinationNoPublisher) { EXPECT_EQ(EventPublisher::Create(EventDestinations()), nullptr); }

TEST(EventPublisherTest, WebhookGetsEveryEventInOrderAsJsonPosts) {
  Receiver receiver;
  auto publisher = Webhook(receiver.url());
  const std::vector<std::string> events = {Event("RuleStarted", 0), Event("StatusChanged", 3), Event("RuleEnded", 3)};
  for (const auto& e : events) publisher->Publish(e);
  publisher->Close();
  EXPECT_EQ(receiver.bodies(), events);
  for (const ServedRequest& r : receiver.requests()) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/hook?token=s3cr3t");
    EXPECT_EQ(r.Header("content-type"), "application/json");
  }
  EXPECT_EQ(receiver.requests()[1].Header("x-litmus-event"), "StatusChanged");
  const QueueStats stats = publisher->queues().front()->stats();
  EXPECT_EQ(stats.delivered, 3u);
  EXPECT_EQ(stats.attempts, 3u);
}

TEST(EventPublisherTest, WebhookRetries5xx429AndLostConnections) {
  Receiver receiver({Answer(503), Answer(429), DropConnection(), Answer(500)});
  auto publisher = Webhook(receiver.url());
  publisher->Publish(Event("StatusChanged", 1));
  publisher->Close();
  EXPECT_THAT(receiver.bodies(), ElementsAre(Event("StatusChanged", 1)));
  EXPECT_EQ(receiver.requests().size(), 5u);
  const QueueStats stats = publisher->queues().front()->stats();
  EXPECT_GE(stats.attempts, 4u);  // curl itself may resend once on a connection closed unanswered
  EXPECT_EQ(stats.delivered, 1u);
  EXPECT_EQ(stats.dropped_failed, 0u);
}

TEST(EventPublisherTest, WebhookGivesUpAfterMaxAttemptsAndGoesOn) {
  Receiver receiver(std::vector<ServedResponse>(5, Answer(502)));
  auto publisher = Webhook(receiver.url());
  publisher->Publish(Event("StatusChanged", 1));
  publisher->Publish(Event("RuleEnded", 1));
  publisher->Close();
  EXPECT_THAT(receiver.bodies(), ElementsAre(Event("RuleEnded", 1)));
  const QueueStats stats = publisher->queues().front()->stats();
  EXPECT_EQ(stats.dropped_failed, 1u);
  EXPECT_EQ(stats.delivered, 1u);
  EXPECT_EQ(stats.attempts, 6u);
}

TEST(EventPublisherTest, WebhookClientErrorIsNotRetried) {
  Receiver receiver(std::vector<ServedResponse>{Answer(404)});
  auto publisher = Webhook(receiver.url());
  publisher->Publish(Event("StatusChanged", 1));
  publisher->Publish(Event("RuleEnded", 1));
  publisher->Close();
  EXPECT_EQ(receiver.requests().size(), 2u);
  EXPECT_EQ(publisher->queues().front()->stats().dropped_failed, 1u);
}

TEST(EventPublisherTest, PublishNeverWaitsForTheReceiver) {
  Receiver receiver;
  receiver.Hold();
  auto publisher = Webhook(receiver.url());
  // The receiver answers nothing until released: were Publish to wait for it, this test would
  // never get past the loop.
  for (int i = 0; i < 20; ++i) publisher->Publish(Event("StatusChanged", i));
  receiver.WaitForRequests(1);
  EXPECT_EQ(receiver.bodies().size(), 0u);
  receiver.Release();
  publisher->Close();
  EXPECT_EQ(receiver.bodies().size(), 20u);
}

TEST(EventPublisherTest, FullQueueDropsTheOldestEvent) {
  Receiver receiver;
  receiver.Hold();
  auto publisher = Webhook(receiver.url(), Queue(2, 1, std::chrono::milliseconds(0)));
  publisher->Publish(Event("A", 1));
  receiver.WaitForRequests(1);  // A is in flight, the queue is empty
  for (const char* name : {"B", "C", "D"}) publisher->Publish(Event(name, 1));
  receiver.Release();
  publisher->Close();
  EXPECT_THAT(receiver.bodies(), ElementsAre(Event("A", 1), Event("C", 1), Event("D", 1)));
  EXPECT_EQ(publisher->queues().front()->stats().dropped_full, 1u);
}

TEST(EventPublisherTest, CloseStopsWaitingAtItsDeadline) {
  // A receiver that always fails, and a backoff of a minute: without the deadline cutting the
  // backoff short, Close would wait for minutes (and the test would time out).
  Receiver receiver(std::vector<ServedResponse>(100, Answer(503)));
  auto publisher = Webhook(receiver.url(),
                           Queue(10, 10, std::chrono::minutes(1)),
                           /*flush_s=*/0.2);
  publisher->Publish(Event("StatusChanged", 1));
  publisher->Publish(Event("RuleEnded", 1));
  receiver.WaitForRequests(1);
  publisher->Close();
  const QueueStats stats = publisher->queues().front()->stats();
  EXPECT_EQ(stats.undelivered, 2u);
  EXPECT_EQ(stats.delivered, 0u);
  publisher->Publish(Event("Late", 1));  // after Close: ignored
  EXPECT_EQ(publisher->queues().front()->stats().undelivered, 2u);
}

TEST(EventPublisherTest, UnreachableWebhookDoesNotFailAnything) {
  int port = 0;
  {
    Receiver gone;
    port = std::stoi(gone.url().substr(gone.url().rfind(':') + 1));
  }
  auto publisher = Webhook("http://127.0.0.1:" + std::to_string(port) + "/", Fast());
  publisher->Publish(Event("StatusChanged", 1));
  publisher->Close();
  const QueueStats stats = publisher->queues().front()->stats();
  EXPECT_EQ(stats.dropped_failed, 1u);
  EXPECT_EQ(stats.attempts, 5u);
}

// EventBridge over a plain local server (signatures are checked in events_e2e_test).
class EventBridgeTest : public ::testing::Test {
 protected:
  std::unique_ptr<EventPublisher> Publisher(const std::string& endpoint, bool sagemaker = false) {
    EventDestinations d;
    d.eventbridge_bus = "ops";
    d.sagemaker_shape = sagemaker;
    d.training_job_name = "my-job";
    PublisherOverrides o;
    o.credentials = credentials_.get();
    o.region = "eu-west-1";
    o.eventbridge_endpoint = endpoint;
    o.queue = Fast();
    return EventPublisher::Create(d, o);
  }
  static std::vector<Json> Entries(const std::string& body) {
    std::vector<Json> out;
    const Json parsed = Json::parse(body);
    for (const Json& e : parsed["Entries"]) out.push_back(e);
    return out;
  }
  std::unique_ptr<aws::CredentialsProvider> credentials_ =
      aws::StaticCredentials({.access_key_id = "AK", .secret_access_key = "SK", .session_token = "", .expiration = {}});
};

TEST_F(EventBridgeTest, BatchesEntriesAndRetriesOnlyFailedEntries) {
  const std::string partial = R"({"FailedEntryCount": 2, "Entries": [{"EventId": "1"},
      {"ErrorCode": "ThrottlingException", "ErrorMessage": "slow down"},
      {"ErrorCode": "MalformedDetail", "ErrorMessage": "no"}]})";
  Receiver receiver({Answer(200, "{}"), Answer(200, partial), Answer(200, "{}")});
  receiver.Hold();
  auto publisher = Publisher(receiver.url());
  publisher->Publish(Event("RuleStarted", 0));
  receiver.WaitForRequests(1);  // the first call takes one event; the next three wait together
  publisher->Publish(Event("A", 1));
  publisher->Publish(Event("B", 2));
  publisher->Publish(Event("C", 3));
  receiver.Release();
  publisher->Close();
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].Header("x-amz-target"), "AWSEvents.PutEvents");
  EXPECT_THAT(requests[0].Header("authorization"), ::testing::HasSubstr("/eu-west-1/events/aws4_request"));
  const auto first = Entries(requests[0].body);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0], Json({{"Source", "litmus"},
                            {"DetailType", "Rule Evaluation Status Change"},
                            {"Detail", Event("RuleStarted", 0)},
                            {"EventBusName", "ops"}}));
  // A, B, C in one call; B (throttled) again alone; C (malformed) dropped.
  const auto second = Entries(requests[1].body);
  ASSERT_EQ(second.size(), 3u);
  EXPECT_EQ(second[2]["Detail"], Event("C", 3));
  const auto third = Entries(requests[2].body);
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0]["Detail"], Event("B", 2));
  const QueueStats stats = publisher->queues().front()->stats();
  EXPECT_EQ(stats.delivered, 3u);
  EXPECT_EQ(stats.dropped_failed, 1u);
}

TEST_F(EventBridgeTest, ThrottlingAnswerRetriesTheWholeBatchButAccessDeniedDropsIt) {
  Receiver receiver({Answer(400, R"({"__type": "ThrottlingException", "message": "x"})"), Answer(200, "{}"),
                     Answer(400, R"({"__type": "AccessDeniedException", "message": "no"})")});
  auto publisher = Publisher(receiver.url());
  publisher->Publish(Event("StatusChanged", 1));
  receiver.WaitForRequests(2);
  publisher->Publish(Event("RuleEnded", 1));
  publisher->Close();
  EXPECT_EQ(receiver.requests().size(), 3u);
  const QueueStats stats = publisher->queues().front()->stats();
  EXPECT_EQ(stats.delivered, 1u);
  EXPECT_EQ(stats.dropped_failed, 1u);
}

TEST_F(EventBridgeTest, SageMakerShapeAddsOneEntryPerStatusChange) {
  Receiver receiver;
  auto publisher = Publisher(receiver.url(), /*sagemaker=*/true);
  publisher->Publish(Json({{"time", "t0"}, {"event", "RuleStarted"}, {"rule", "a"}}).dump());
  publisher->Publish(Json({{"time", "t0"}, {"event", "RuleStarted"}, {"rule", "b"}}).dump());
  publisher->Publish(Json({{"time", "t1"}, {"event", "StatusChanged"}, {"rule", "b"}, {"status", "IssuesFound"},
                           {"message", "RuleEvaluationConditionMet: ..."}})
                         .dump());
  publisher->Close();
  std::vector<Json> entries;
  for (const std::string& body : receiver.bodies()) {
    for (const Json& e : Entries(body)) entries.push_back(e);
  }
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[2]["DetailType"], "Rule Evaluation Status Change");
  EXPECT_EQ(entries[3]["DetailType"], "SageMaker Training Job State Change");
  EXPECT_EQ(entries[3]["Source"], "litmus");
  EXPECT_EQ(Json::parse(entries[3]["Detail"].get<std::string>()), Json::parse(R"({
      "TrainingJobName": "my-job", "TrainingJobStatus": "InProgress",
      "DebugRuleEvaluationStatuses": [
        {"RuleConfigurationName": "a", "RuleEvaluationStatus": "InProgress", "LastModifiedTime": "t0"},
        {"RuleConfigurationName": "b", "RuleEvaluationStatus": "IssuesFound",
         "StatusDetails": "RuleEvaluationConditionMet: ...", "LastModifiedTime": "t1"}]})"));
}

}  // namespace
}  // namespace litmus::events
