// The AWS ActionClient against a scripted HttpTransport: the exact requests (JSON 1.1 for
// SageMaker, query protocol for SNS, signing scope per service), answer parsing (pages, tokens,
// XML), errors as one line, and retries of 5xx.
#include "litmus/actions/aws_action_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>

namespace litmus::actions {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Json = nlohmann::json;

class ScriptedTransport final : public aws::HttpTransport {
 public:
  std::deque<aws::HttpResponse> answers;  // when empty: 200 with an empty body
  std::vector<aws::HttpRequest> requests;

  StatusOr<aws::HttpResponse> Send(const aws::HttpRequest& request) override {
    std::lock_guard lock(mu_);
    requests.push_back(request);
    if (answers.empty()) return aws::HttpResponse{.status = 200, .headers = {}, .body = ""};
    aws::HttpResponse r = answers.front();
    answers.pop_front();
    return r;
  }

 private:
  std::mutex mu_;
};

std::string Header(const aws::HttpRequest& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k.size() == name.size() && std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        })) {
      return v;
    }
  }
  return "";
}

class AwsActionClientTest : public ::testing::Test {
 protected:
  AwsActionClientTest()
      : credentials_(aws::StaticCredentials({.access_key_id = "AKIDEXAMPLE",
                                             .secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                             .session_token = "",
                                             .expiration = std::nullopt})),
        client_(NewAwsActionClient({.transport = &transport_,
                                    .credentials = credentials_.get(),
                                    .region = "eu-west-1",
                                    .sagemaker_endpoint = "http://127.0.0.1:1/sm",
                                    .sns_endpoint = "http://127.0.0.1:2",
                                    .retry = {.max_attempts = 3,
                                              .base_delay = std::chrono::milliseconds(1),
                                              .max_delay = std::chrono::milliseconds(2)}})) {}

  void Answer(long status, std::string body) {
    transport_.answers.push_back({.status = status, .headers = {}, .body = std::move(body)});
  }

  ScriptedTransport transport_;
  std::unique_ptr<aws::CredentialsProvider> credentials_;
  std::unique_ptr<ActionClient> client_;
};

TEST_F(AwsActionClientTest, ListTrainingJobsIsAJson11CallSignedForSageMaker) {
  Answer(200, R"({"TrainingJobSummaries": [{"TrainingJobName": "my-job-1", "TrainingJobStatus": "InProgress",
                   "TrainingJobArn": "arn:x"}], "NextToken": "tok2"})");
  auto page = client_->ListInProgressTrainingJobs("my-job", "");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->jobs.size(), 1u);
  EXPECT_EQ(page->jobs[0].name, "my-job-1");
  EXPECT_EQ(page->jobs[0].status, "InProgress");
  EXPECT_EQ(page->next_token, "tok2");

  ASSERT_EQ(transport_.requests.size(), 1u);
  const aws::HttpRequest& r = transport_.requests[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.url, "http://127.0.0.1:1/sm/");
  EXPECT_EQ(Header(r, "X-Amz-Target"), "SageMaker.ListTrainingJobs");
  EXPECT_EQ(Header(r, "Content-Type"), "application/x-amz-json-1.1");
  EXPECT_THAT(Header(r, "Authorization"), HasSubstr("Credential=AKIDEXAMPLE/"));
  EXPECT_THAT(Header(r, "Authorization"), HasSubstr("/eu-west-1/sagemaker/aws4_request"));
  EXPECT_EQ(Json::parse(r.body), Json::parse(R"({"NameContains": "my-job", "StatusEquals": "InProgress",
                                                  "SortBy": "CreationTime", "SortOrder": "Descending"})"));

  Answer(200, R"({"TrainingJobSummaries": []})");
  page = client_->ListInProgressTrainingJobs("my-job", "tok2");
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->jobs.empty());
  EXPECT_EQ(page->next_token, "");
  EXPECT_EQ(Json::parse(transport_.requests[1].body)["NextToken"], "tok2");
}

TEST_F(AwsActionClientTest, StopTrainingJob) {
  Answer(200, "{}");
  EXPECT_TRUE(client_->StopTrainingJob("my-job-1").ok());
  const aws::HttpRequest& r = transport_.requests.at(0);
  EXPECT_EQ(Header(r, "X-Amz-Target"), "SageMaker.StopTrainingJob");
  EXPECT_EQ(Json::parse(r.body), Json::parse(R"({"TrainingJobName": "my-job-1"})"));
}

TEST_F(AwsActionClientTest, SageMakerErrorsAreOneLineAnd5xxIsRetried) {
  Answer(500, R"({"__type": "InternalFailure", "message": "boom"})");
  Answer(400, R"({"__type": "com.amazonaws.sagemaker#ValidationException", "message": "job is not in progress"})");
  const Status s = client_->StopTrainingJob("my-job-1");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(transport_.requests.size(), 2u);  // the 500 was retried, the 400 was not
  EXPECT_THAT(s.message(), StartsWith("sagemaker:StopTrainingJob: HTTP 400 ValidationException"));
  EXPECT_THAT(s.message(), HasSubstr("job is not in progress"));
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
  EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("wJalrXUtnFEMI")));

  Answer(200, "not json");
  auto page = client_->ListInProgressTrainingJobs("p", "");
  ASSERT_FALSE(page.ok());
  EXPECT_THAT(page.status().message(), HasSubstr("not a JSON object"));
}

TEST_F(AwsActionClientTest, CreateTopicIsAQueryCallSignedForSns) {
  Answer(200, R"(<CreateTopicResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><CreateTopicResult>
      <TopicArn>arn:aws:sns:eu-west-1:123456789012:SMDebugRules</TopicArn></CreateTopicResult>
      <ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></CreateTopicResponse>)");
  auto arn = client_->CreateTopic("SMDebugRules");
  ASSERT_TRUE(arn.ok()) << arn.status().ToString();
  EXPECT_EQ(*arn, "arn:aws:sns:eu-west-1:123456789012:SMDebugRules");
  const aws::HttpRequest& r = transport_.requests.at(0);
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.url, "http://127.0.0.1:2/");
  EXPECT_EQ(Header(r, "Content-Type"), "application/x-www-form-urlencoded; charset=utf-8");
  EXPECT_THAT(Header(r, "Authorization"), HasSubstr("/eu-west-1/sns/aws4_request"));
  EXPECT_EQ(r.body, "Action=CreateTopic&Version=2010-03-31&Name=SMDebugRules");
}

TEST_F(AwsActionClientTest, ListSubscriptionsPages) {
  Answer(200, R"(<ListSubscriptionsResponse><ListSubscriptionsResult><Subscriptions>
      <member><TopicArn>arn:t</TopicArn><Protocol>email</Protocol><SubscriptionArn>PendingConfirmation</SubscriptionArn>
        <Owner>1</Owner><Endpoint>jane@example.com</Endpoint></member>
      <member><TopicArn>arn:u</TopicArn><Protocol>sms</Protocol><Endpoint>+1555</Endpoint></member>
      </Subscriptions><NextToken>next&amp;1</NextToken></ListSubscriptionsResult></ListSubscriptionsResponse>)");
  auto page = client_->ListSubscriptions("");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->subscriptions.size(), 2u);
  EXPECT_EQ(page->subscriptions[0].protocol, "email");
  EXPECT_EQ(page->subscriptions[0].endpoint, "jane@example.com");
  EXPECT_EQ(page->subscriptions[0].topic_arn, "arn:t");
  EXPECT_EQ(page->subscriptions[1].endpoint, "+1555");
  EXPECT_EQ(page->next_token, "next&1");
  EXPECT_EQ(transport_.requests[0].body, "Action=ListSubscriptions&Version=2010-03-31");

  Answer(200, "<ListSubscriptionsResponse><ListSubscriptionsResult><Subscriptions/></ListSubscriptionsResult>"
              "</ListSubscriptionsResponse>");
  page = client_->ListSubscriptions("next&1");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_TRUE(page->subscriptions.empty());
  EXPECT_EQ(page->next_token, "");
  EXPECT_EQ(transport_.requests[1].body, "Action=ListSubscriptions&Version=2010-03-31&NextToken=next%261");
}

TEST_F(AwsActionClientTest, SubscribeAndPublishFormFields) {
  Answer(200, "<SubscribeResponse><SubscribeResult><SubscriptionArn>pending confirmation</SubscriptionArn>"
              "</SubscribeResult></SubscribeResponse>");
  ASSERT_TRUE(client_->Subscribe("arn:t", "email", "jane@example.com", R"({"email":["jane@example.com"]})").ok());
  EXPECT_EQ(transport_.requests[0].body,
            "Action=Subscribe&Version=2010-03-31&TopicArn=arn%3At&Protocol=email&Endpoint=jane%40example.com"
            "&Attributes.entry.1.key=FilterPolicy"
            "&Attributes.entry.1.value=%7B%22email%22%3A%5B%22jane%40example.com%22%5D%7D"
            "&ReturnSubscriptionArn=false");

  Answer(200, "<PublishResponse><PublishResult><MessageId>m-1</MessageId></PublishResult></PublishResponse>");
  auto id = client_->Publish("arn:t", "SMDebugRule:X fired", "SMDebugRule:X fired. step 5", "phone_num", "+1555");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, "m-1");
  EXPECT_EQ(transport_.requests[1].body,
            "Action=Publish&Version=2010-03-31&TopicArn=arn%3At&Message=SMDebugRule%3AX%20fired.%20step%205"
            "&Subject=SMDebugRule%3AX%20fired&MessageAttributes.entry.1.Name=phone_num"
            "&MessageAttributes.entry.1.Value.DataType=String&MessageAttributes.entry.1.Value.StringValue=%2B1555");
}

TEST(SnsAnswers, ParsedAsXmlNotSearchedAsText) {
  // A NextToken inside a member is not the page's; entities are decoded; namespaces are ignored.
  auto page = ParseSnsListSubscriptions(
      "<ListSubscriptionsResponse xmlns=\"http://sns.amazonaws.com/doc/2010-03-31/\"><ListSubscriptionsResult>"
      "<Subscriptions><member><Protocol>email</Protocol><Endpoint>a&amp;b@example.com</Endpoint>"
      "<NextToken>not-this</NextToken></member></Subscriptions></ListSubscriptionsResult></ListSubscriptionsResponse>");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->subscriptions.size(), 1u);
  EXPECT_EQ(page->subscriptions[0].endpoint, "a&b@example.com");
  EXPECT_EQ(page->next_token, "");
  // Cut short: an error naming the fault, not a partial page.
  page = ParseSnsListSubscriptions("<ListSubscriptionsResponse><ListSubscriptionsResult><Subscriptions><member>");
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(page.status().message(), StartsWith("sns:ListSubscriptions: the answer is not well-formed XML ("));
  auto arn = ParseSnsCreateTopic("<CreateTopicResponse><CreateTopicResult><TopicArn>arn:x</TopicArn>");
  ASSERT_FALSE(arn.ok());
  EXPECT_THAT(arn.status().message(), HasSubstr("not well-formed XML"));
  EXPECT_EQ(ParseSnsPublish("<PublishResponse><PublishResult><MessageId>m&#x2D;1</MessageId></PublishResult>"
                            "</PublishResponse>"),
            "m-1");
  EXPECT_EQ(ParseSnsPublish("garbage"), "");
}

TEST_F(AwsActionClientTest, SnsErrorsAreOneLine) {
  Answer(403, "<ErrorResponse><Error><Type>Sender</Type><Code>AuthorizationError</Code>"
              "<Message>User is not authorized to perform SNS:CreateTopic</Message></Error></ErrorResponse>");
  auto arn = client_->CreateTopic("SMDebugRules");
  ASSERT_FALSE(arn.ok());
  EXPECT_THAT(arn.status().message(), StartsWith("sns:CreateTopic: HTTP 403 AuthorizationError"));
  Answer(200, "<CreateTopicResponse/>");
  arn = client_->CreateTopic("SMDebugRules");
  ASSERT_FALSE(arn.ok());
  EXPECT_THAT(arn.status().message(), HasSubstr("no TopicArn"));
}

TEST(FormEncode, PercentEncodesEverythingButUnreserved) {
  EXPECT_EQ(FormEncode({{"a b", "c&d=e"}, {"x", "~._-"}}), "a%20b=c%26d%3De&x=~._-");
  EXPECT_EQ(FormEncode({}), "");
}

}  // namespace
}  // namespace litmus::actions
