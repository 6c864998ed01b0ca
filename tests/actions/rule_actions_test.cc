// RuleActions against a fake ActionClient: StopTraining's paging (stop once a match is found, at
// most 50 pages, give up after 5 errors), the exactly-one rule, case of job names; Email/SMS topic,
// subscription search over pages, filter policy, Publish subject/message/attribute; failures
// reported per action and endpoints masked in every result.
#include "litmus/actions/rule_actions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <map>

namespace litmus::actions {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Records every call; answers from scripted queues (or defaults).
class FakeClient final : public ActionClient {
 public:
  // ListTrainingJobs: answers in order; when exhausted, an empty last page.
  std::deque<StatusOr<TrainingJobPage>> job_pages;
  std::vector<std::pair<std::string, std::string>> list_calls;  // (name_contains, next_token)
  std::vector<std::string> stopped;
  Status stop_status;

  StatusOr<std::string> topic = std::string("arn:aws:sns:us-east-1:123456789012:SMDebugRules");
  std::vector<std::string> topics_created;
  // ListSubscriptions pages keyed by the token that asks for them ("" = first).
  std::map<std::string, StatusOr<SnsSubscriptionPage>> subscription_pages;
  std::vector<std::string> subscription_tokens;
  struct SubscribeCall {
    std::string topic, protocol, endpoint, filter_policy;
  };
  std::vector<SubscribeCall> subscribed;
  Status subscribe_status;
  struct PublishCall {
    std::string topic, subject, message, attribute, value;
  };
  std::vector<PublishCall> published;
  Status publish_status;

  StatusOr<TrainingJobPage> ListInProgressTrainingJobs(const std::string& name_contains,
                                                       const std::string& next_token) override {
    list_calls.emplace_back(name_contains, next_token);
    if (job_pages.empty()) return TrainingJobPage{};
    auto page = job_pages.front();
    job_pages.pop_front();
    return page;
  }
  Status StopTrainingJob(const std::string& name) override {
    stopped.push_back(name);
    return stop_status;
  }
  StatusOr<std::string> CreateTopic(const std::string& name) override {
    topics_created.push_back(name);
    return topic;
  }
  StatusOr<SnsSubscriptionPage> ListSubscriptions(const std::string& next_token) override {
    subscription_tokens.push_back(next_token);
    auto it = subscription_pages.find(next_token);
    if (it == subscription_pages.end()) return SnsSubscriptionPage{};
    return it->second;
  }
  Status Subscribe(const std::string& topic_arn, const std::string& protocol, const std::string& endpoint,
                   const std::string& filter_policy_json) override {
    subscribed.push_back({topic_arn, protocol, endpoint, filter_policy_json});
    return subscribe_status;
  }
  StatusOr<std::string> Publish(const std::string& topic_arn, const std::string& subject, const std::string& message,
                                const std::string& attribute_name, const std::string& attribute_value) override {
    published.push_back({topic_arn, subject, message, attribute_name, attribute_value});
    if (!publish_status.ok()) return publish_status;
    return std::string("msg-1");
  }
};

TrainingJobPage Page(std::vector<std::string> names, std::string next_token = "") {
  TrainingJobPage page;
  for (auto& n : names) page.jobs.push_back({std::move(n), "InProgress"});
  page.next_token = std::move(next_token);
  return page;
}

const ActionSpec kStop{ActionKind::kStopTraining, "my-job"};
const ActionSpec kEmail{ActionKind::kEmail, "jane@example.com"};
const ActionSpec kSms{ActionKind::kSms, "+14155550123"};
const std::string kTopic = "arn:aws:sns:us-east-1:123456789012:SMDebugRules";
const std::string kMessage = "Evaluation of the rule X at step 5 resulted in the condition being met";

TEST(StopTraining, ExactlyOneMatchIsStoppedOnFiring) {
  FakeClient client;
  // NameContains is a substring match: "old-my-job-2" comes back but does not start with the prefix.
  client.job_pages = {Page({"old-my-job-2", "My-Job-1"})};
  RuleActions actions({kStop}, &client);
  const auto prepared = actions.Prepare();
  ASSERT_EQ(prepared.size(), 1u);
  EXPECT_EQ(prepared[0].action, "stoptraining");
  EXPECT_EQ(prepared[0].target, "my-job");
  EXPECT_EQ(prepared[0].outcome, ActionOutcome::kOk);
  EXPECT_THAT(prepared[0].detail, HasSubstr("My-Job-1"));
  EXPECT_THAT(client.list_calls, ElementsAre(std::make_pair(std::string("my-job"), std::string(""))));
  EXPECT_THAT(client.stopped, IsEmpty());  // nothing is stopped before a firing

  const auto fired = actions.Fire("X", kMessage);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].outcome, ActionOutcome::kOk);
  EXPECT_THAT(client.stopped, ElementsAre("My-Job-1"));  // the job's real name
  EXPECT_EQ(client.list_calls.size(), 1u);                // the listing is not repeated on firing
}

TEST(StopTraining, TwoOrZeroMatchesStopNothing) {
  for (const auto& pages : {std::deque<StatusOr<TrainingJobPage>>{Page({"my-job-1", "my-job-2"})},
                            std::deque<StatusOr<TrainingJobPage>>{Page({"other-my-job"})}}) {
    FakeClient client;
    client.job_pages = pages;
    RuleActions actions({kStop}, &client);
    EXPECT_EQ(actions.Prepare()[0].outcome, ActionOutcome::kOk);
    const auto fired = actions.Fire("X", kMessage);
    EXPECT_EQ(fired[0].outcome, ActionOutcome::kSkipped);
    EXPECT_THAT(fired[0].detail, HasSubstr("exactly one"));
    EXPECT_THAT(client.stopped, IsEmpty());
  }
}

TEST(StopTraining, PagesUntilAMatchIsFoundThenStops) {
  FakeClient client;
  client.job_pages = {Page({"a-my-job"}, "t1"), Page({}, "t2"), Page({"my-job-7"}, "t3"), Page({"my-job-8"})};
  RuleActions actions({kStop}, &client);
  actions.Prepare();
  ASSERT_EQ(client.list_calls.size(), 3u);  // the page after the match is never asked for
  EXPECT_EQ(client.list_calls[1].second, "t1");
  EXPECT_EQ(client.list_calls[2].second, "t2");
  actions.Fire("X", kMessage);
  EXPECT_THAT(client.stopped, ElementsAre("my-job-7"));
}

TEST(StopTraining, AtMostFiftyPages) {
  FakeClient client;
  for (int i = 0; i < 60; ++i) client.job_pages.push_back(Page({"unrelated"}, std::to_string(i)));
  RuleActions actions({kStop}, &client);
  EXPECT_EQ(actions.Prepare()[0].outcome, ActionOutcome::kOk);
  EXPECT_EQ(client.list_calls.size(), 50u);
  EXPECT_EQ(actions.Fire("X", kMessage)[0].outcome, ActionOutcome::kSkipped);
}

TEST(StopTraining, ErrorsRetryTheSamePageAndFourAreSurvived) {
  FakeClient client;
  client.job_pages = {Page({}, "t1")};
  for (int i = 0; i < 4; ++i) client.job_pages.push_back(UnavailableError("HTTP 500 InternalFailure"));
  client.job_pages.push_back(Page({"my-job-1"}));
  RuleActions actions({kStop}, &client);
  EXPECT_EQ(actions.Prepare()[0].outcome, ActionOutcome::kOk);
  ASSERT_EQ(client.list_calls.size(), 6u);
  for (size_t i = 1; i < 6; ++i) EXPECT_EQ(client.list_calls[i].second, "t1");
  actions.Fire("X", kMessage);
  EXPECT_THAT(client.stopped, ElementsAre("my-job-1"));
}

TEST(StopTraining, GivesUpAfterFiveErrorsAndReportsItOnFiring) {
  FakeClient client;
  for (int i = 0; i < 10; ++i) client.job_pages.push_back(UnavailableError("sagemaker:ListTrainingJobs: HTTP 500"));
  RuleActions actions({kStop}, &client);
  const auto prepared = actions.Prepare();
  EXPECT_EQ(prepared[0].outcome, ActionOutcome::kFailed);
  EXPECT_THAT(prepared[0].error, HasSubstr("failed 5 times, giving up"));
  EXPECT_EQ(client.list_calls.size(), 5u);
  const auto fired = actions.Fire("X", kMessage);
  EXPECT_EQ(fired[0].outcome, ActionOutcome::kFailed);
  EXPECT_THAT(fired[0].error, HasSubstr("HTTP 500"));
  EXPECT_THAT(client.stopped, IsEmpty());
}

TEST(StopTraining, AFailedStopIsReported) {
  FakeClient client;
  client.job_pages = {Page({"my-job-1"})};
  client.stop_status = UnavailableError("sagemaker:StopTrainingJob: HTTP 400 ValidationException: not in progress");
  RuleActions actions({kStop}, &client);
  actions.Prepare();
  const auto fired = actions.Fire("X", kMessage);
  EXPECT_EQ(fired[0].outcome, ActionOutcome::kFailed);
  EXPECT_THAT(fired[0].error, HasSubstr("ValidationException"));
}

TEST(Notify, SubscribesWithAFilterPolicyAndPublishesOnFiring) {
  FakeClient client;
  RuleActions actions({kEmail, kSms}, &client);
  const auto prepared = actions.Prepare();
  ASSERT_EQ(prepared.size(), 2u);
  EXPECT_EQ(prepared[0].action, "email");
  EXPECT_EQ(prepared[0].target, "j***@e***.com");
  EXPECT_EQ(prepared[1].action, "sms");
  EXPECT_EQ(prepared[1].target, "+*********23");
  for (const auto& r : prepared) EXPECT_EQ(r.outcome, ActionOutcome::kOk) << r.error;
  EXPECT_THAT(client.topics_created, ElementsAre("SMDebugRules", "SMDebugRules"));
  ASSERT_EQ(client.subscribed.size(), 2u);
  EXPECT_EQ(client.subscribed[0].topic, kTopic);
  EXPECT_EQ(client.subscribed[0].protocol, "email");
  EXPECT_EQ(client.subscribed[0].endpoint, "jane@example.com");
  EXPECT_EQ(client.subscribed[0].filter_policy, R"({"email":["jane@example.com"]})");
  EXPECT_EQ(client.subscribed[1].protocol, "sms");
  EXPECT_EQ(client.subscribed[1].filter_policy, R"({"phone_num":["+14155550123"]})");
  EXPECT_THAT(client.published, IsEmpty());

  const auto fired = actions.Fire("VanishingGradient", kMessage);
  for (const auto& r : fired) EXPECT_EQ(r.outcome, ActionOutcome::kOk) << r.error;
  ASSERT_EQ(client.published.size(), 2u);
  EXPECT_EQ(client.published[0].topic, kTopic);
  EXPECT_EQ(client.published[0].subject, "SMDebugRule:VanishingGradient fired");
  EXPECT_EQ(client.published[0].message, "SMDebugRule:VanishingGradient fired. " + kMessage);
  EXPECT_EQ(client.published[0].attribute, "email");
  EXPECT_EQ(client.published[0].value, "jane@example.com");
  EXPECT_EQ(client.published[1].attribute, "phone_num");
  EXPECT_EQ(client.published[1].value, "+14155550123");
  // A second firing (--keep-going) publishes again.
  actions.Fire("VanishingGradient", kMessage);
  EXPECT_EQ(client.published.size(), 4u);
}

TEST(Notify, AnExistingSubscriptionOnALaterPageIsNotSubscribedAgain) {
  FakeClient client;
  client.subscription_pages.emplace("", SnsSubscriptionPage{{{"email", "jane@example.com", "arn:other-topic"},
                                                             {"sms", "jane@example.com", kTopic}},
                                                            "page2"});
  client.subscription_pages.emplace("page2", SnsSubscriptionPage{{{"email", "Jane@Example.com", kTopic}}, ""});
  RuleActions actions({kEmail}, &client);
  const auto prepared = actions.Prepare();
  EXPECT_EQ(prepared[0].outcome, ActionOutcome::kOk);
  EXPECT_THAT(prepared[0].detail, HasSubstr("already subscribed"));
  EXPECT_THAT(client.subscription_tokens, ElementsAre("", "page2"));
  EXPECT_THAT(client.subscribed, IsEmpty());
}

TEST(Notify, NoTopicMeansEveryFiringFailsWithTheReason) {
  FakeClient client;
  client.topic = UnavailableError("sns:CreateTopic: HTTP 403 AuthorizationError: not allowed");
  RuleActions actions({kSms}, &client);
  EXPECT_EQ(actions.Prepare()[0].outcome, ActionOutcome::kFailed);
  EXPECT_THAT(client.subscription_tokens, IsEmpty());
  const auto fired = actions.Fire("X", kMessage);
  EXPECT_EQ(fired[0].outcome, ActionOutcome::kFailed);
  EXPECT_THAT(fired[0].error, HasSubstr("AuthorizationError"));
  EXPECT_THAT(client.published, IsEmpty());
}

// As smdebug: a failed subscription search/subscribe keeps the topic, so firings still publish.
TEST(Notify, AFailedSubscribeStillPublishes) {
  FakeClient client;
  client.subscribe_status = UnavailableError("sns:Subscribe: HTTP 400 InvalidParameter: Endpoint jane@example.com");
  RuleActions actions({kEmail}, &client);
  const auto prepared = actions.Prepare();
  EXPECT_EQ(prepared[0].outcome, ActionOutcome::kFailed);
  EXPECT_THAT(prepared[0].error, HasSubstr("InvalidParameter"));
  EXPECT_THAT(prepared[0].error, Not(HasSubstr("jane@")));  // masked
  EXPECT_THAT(prepared[0].error, HasSubstr("j***@e***.com"));
  EXPECT_EQ(actions.Fire("X", kMessage)[0].outcome, ActionOutcome::kOk);
  EXPECT_EQ(client.published.size(), 1u);
}

TEST(Notify, AFailedPublishIsReportedMasked) {
  FakeClient client;
  client.publish_status = UnavailableError("sns:Publish: HTTP 500 (Endpoint=%2B14155550123)");
  RuleActions actions({kSms}, &client);
  actions.Prepare();
  const auto fired = actions.Fire("X", kMessage);
  EXPECT_EQ(fired[0].outcome, ActionOutcome::kFailed);
  EXPECT_THAT(fired[0].error, Not(HasSubstr("4155550123")));
}

// One action's failure does not keep the others from running.
TEST(RuleActions, ActionsAreIndependent) {
  FakeClient client;
  for (int i = 0; i < 5; ++i) client.job_pages.push_back(UnavailableError("HTTP 503"));
  RuleActions actions({kStop, kEmail}, &client);
  EXPECT_EQ(actions.size(), 2u);
  const auto prepared = actions.Prepare();
  EXPECT_EQ(prepared[0].outcome, ActionOutcome::kFailed);
  EXPECT_EQ(prepared[1].outcome, ActionOutcome::kOk);
  const auto fired = actions.Fire("X", kMessage);
  EXPECT_EQ(fired[0].outcome, ActionOutcome::kFailed);
  EXPECT_EQ(fired[1].outcome, ActionOutcome::kOk);
  EXPECT_EQ(ActionOutcomeName(ActionOutcome::kSkipped), "skipped");
}

}  // namespace
}  // namespace litmus::actions
