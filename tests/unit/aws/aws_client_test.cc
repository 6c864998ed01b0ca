// AwsClient: retries (5xx, 429, throttling codes, transport errors) with backoff, a fresh
// signature per attempt, no retry for client errors, endpoint resolution and error parsing; and
// that no secret reaches an error message or a log line.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <deque>
#include <mutex>
#include <sstream>

#include "litmus/aws/aws_client.h"
#include "litmus/aws/s3_client.h"

namespace litmus::aws {
namespace {

constexpr char kSecret[] = "SECRETxyzSECRET";
constexpr char kToken[] = "TOKENabcTOKEN";

// Answers from a script; records every request it saw.
class ScriptedTransport final : public HttpTransport {
 public:
  void Push(StatusOr<HttpResponse> answer) { script_.push_back(std::move(answer)); }
  StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    seen.push_back(request);
    if (script_.empty()) return HttpResponse{.status = 200, .headers = {}, .body = "ok"};
    StatusOr<HttpResponse> answer = script_.front();
    script_.pop_front();
    return answer;
  }
  std::vector<HttpRequest> seen;

 private:
  std::mutex mu_;
  std::deque<StatusOr<HttpResponse>> script_;
};

HttpResponse Xml(long status, const std::string& code) {
  return {.status = status, .headers = {}, .body = "<Error><Code>" + code + "</Code><Message>m</Message></Error>"};
}

class AwsClientTest : public ::testing::Test {
 protected:
  AwsClientTest()
      : credentials_(StaticCredentials({.access_key_id = "AKID", .secret_access_key = kSecret,
                                        .session_token = kToken, .expiration = std::nullopt})),
        client_(&transport_, credentials_.get(), "us-east-1", "s3", "http://127.0.0.1:1/",
                {.max_attempts = 4, .base_delay = std::chrono::milliseconds(1), .max_delay = std::chrono::milliseconds(4)}) {}

  ScriptedTransport transport_;
  std::unique_ptr<CredentialsProvider> credentials_;
  AwsClient client_;
};

TEST_F(AwsClientTest, RetriesServerErrorsThrottlingAndDroppedConnections) {
  transport_.Push(Xml(503, "SlowDown"));
  transport_.Push(UnavailableError("connection reset"));
  transport_.Push(Xml(400, "RequestTimeout"));
  transport_.Push(HttpResponse{.status = 200, .headers = {}, .body = "done"});
  StatusOr<HttpResponse> response = client_.Send({.method = "GET", .url = "http://127.0.0.1:1/b/k", .headers = {}, .body = ""});
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, "done");
  EXPECT_EQ(transport_.seen.size(), 4u);
  EXPECT_EQ(client_.attempts(), 4u);
  for (const HttpRequest& sent : transport_.seen) {
    int authorizations = 0;
    for (const auto& [name, value] : sent.headers) authorizations += name == "Authorization";
    EXPECT_EQ(authorizations, 1);
  }
}

TEST_F(AwsClientTest, GivesUpAfterMaxAttempts) {
  for (int i = 0; i < 4; ++i) transport_.Push(Xml(500, "InternalError"));
  StatusOr<HttpResponse> response = client_.Send({.method = "GET", .url = "http://127.0.0.1:1/b/k", .headers = {}, .body = ""});
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->status, 500);  // the last answer, for the caller to describe
  EXPECT_EQ(transport_.seen.size(), 4u);

  for (int i = 0; i < 4; ++i) transport_.Push(UnavailableError("Couldn't connect to server"));
  response = client_.Send({.method = "GET", .url = "http://127.0.0.1:1/b/k", .headers = {}, .body = ""});
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("after 4 attempts"), std::string::npos) << response.status().message();
}

TEST_F(AwsClientTest, ClientErrorsAreNotRetried) {
  for (const auto& [status, code] : std::vector<std::pair<long, std::string>>{
           {403, "SignatureDoesNotMatch"}, {404, "NoSuchKey"}, {400, "InvalidArgument"}}) {
    transport_.seen.clear();
    transport_.Push(Xml(status, code));
    StatusOr<HttpResponse> response = client_.Send({.method = "GET", .url = "http://127.0.0.1:1/b/k", .headers = {}, .body = ""});
    ASSERT_TRUE(response.ok());
    EXPECT_EQ(response->status, status);
    EXPECT_EQ(transport_.seen.size(), 1u) << code;
  }
}

TEST(S3Urls, AddressingStylesAndEncoding) {
  ScriptedTransport transport;
  auto credentials = StaticCredentials({.access_key_id = "A", .secret_access_key = "B", .session_token = "", .expiration = {}});
  AwsClient aws(&transport, credentials.get(), "eu-west-1", "s3", "https://s3.eu-west-1.amazonaws.com");
  S3Client virtual_hosted(&aws, S3Addressing::kVirtualHosted);
  (void)virtual_hosted.GetObject("bucket", "a b/c+d");
  (void)virtual_hosted.GetObject("my.bucket", "k");
  (void)virtual_hosted.ListPage("bucket", "trial/index/", "trial/index/000000000/000000000007", "", 1000);
  AwsClient local(&transport, credentials.get(), "us-east-1", "s3", "http://127.0.0.1:7480");
  S3Client path(&local, S3Addressing::kPath);
  (void)path.GetObject("bucket", "a b/c");
  ASSERT_EQ(transport.seen.size(), 4u);
  EXPECT_EQ(transport.seen[0].url, "https://bucket.s3.eu-west-1.amazonaws.com/a%20b/c%2Bd");
  EXPECT_EQ(transport.seen[1].url, "https://s3.eu-west-1.amazonaws.com/my.bucket/k");
  EXPECT_EQ(transport.seen[2].url,
            "https://bucket.s3.eu-west-1.amazonaws.com/?list-type=2&encoding-type=url&max-keys=1000"
            "&prefix=trial%2Findex%2F&start-after=trial%2Findex%2F000000000%2F000000000007");
  EXPECT_EQ(transport.seen[3].url, "http://127.0.0.1:7480/bucket/a%20b/c");
}

TEST(RetryPolicy, RetryableAnswers) {
  EXPECT_TRUE(IsRetryableResponse({.status = 500, .headers = {}, .body = ""}));
  EXPECT_TRUE(IsRetryableResponse({.status = 503, .headers = {}, .body = ""}));
  EXPECT_TRUE(IsRetryableResponse({.status = 429, .headers = {}, .body = ""}));
  EXPECT_TRUE(IsRetryableResponse(Xml(400, "Throttling")));
  EXPECT_TRUE(IsRetryableResponse({.status = 400, .headers = {}, .body = R"({"__type":"ThrottlingException"})"}));
  EXPECT_FALSE(IsRetryableResponse(Xml(403, "AccessDenied")));
  EXPECT_FALSE(IsRetryableResponse({.status = 206, .headers = {}, .body = ""}));
}

TEST(AwsError, CodesFromXmlJsonAndHeaders) {
  EXPECT_EQ(AwsErrorCode(Xml(404, "NoSuchBucket")), "NoSuchBucket");
  EXPECT_EQ(AwsErrorCode({.status = 400, .headers = {},
                          .body = R"({"__type":"com.amazon.coral.validate#ValidationException","message":"bad"})"}),
            "ValidationException");
  EXPECT_EQ(AwsErrorCode({.status = 400, .headers = {{"x-amzn-errortype", "ResourceNotFound:http://x/"}}, .body = ""}),
            "ResourceNotFound");
  EXPECT_EQ(DescribeAwsError({.status = 400, .headers = {}, .body = R"({"__type":"A#ValidationException","message":"bad\nthing"})"}),
            "HTTP 400 ValidationException: bad thing");
  EXPECT_EQ(DescribeAwsError({.status = 502, .headers = {}, .body = "<html>gateway</html>"}), "HTTP 502");
}

TEST(Endpoint, OverridesThenDefault) {
  unsetenv("AWS_ENDPOINT_URL_S3");
  unsetenv("AWS_ENDPOINT_URL");
  EXPECT_EQ(ResolveEndpoint("S3", "s3.{region}.amazonaws.com", "eu-west-1"), "https://s3.eu-west-1.amazonaws.com");
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000/", 1);
  EXPECT_EQ(ResolveEndpoint("SNS", "sns.{region}.amazonaws.com", "eu-west-1"), "http://127.0.0.1:9000");
  setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:7480", 1);
  EXPECT_EQ(ResolveEndpoint("S3", "s3.{region}.amazonaws.com", "eu-west-1"), "http://127.0.0.1:7480");
  unsetenv("AWS_ENDPOINT_URL_S3");
  unsetenv("AWS_ENDPOINT_URL");
}

// Every way an S3 error can surface (messages, debug logs of retries) must leave secrets out,
// even when a server echoes the request back as S3 does for SignatureDoesNotMatch.
TEST_F(AwsClientTest, SecretsNeverReachMessagesOrLogs) {
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  auto logger = std::make_shared<spdlog::logger>("capture", sink);
  logger->set_level(spdlog::level::trace);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);

  const std::string echo = std::string("<Error><Code>SignatureDoesNotMatch</Code><Message>x-amz-security-token: ") +
                           kToken + " Authorization: AWS4-HMAC-SHA256 Credential=AKID, Signature=ab12</Message>"
                           "<CanonicalRequest>x-amz-security-token:" + kToken + "</CanonicalRequest></Error>";
  transport_.Push(HttpResponse{.status = 503, .headers = {}, .body = echo});
  transport_.Push(UnavailableError(std::string("GET http://h/?X-Amz-Signature=ab12&X-Amz-Security-Token=") + kToken));
  transport_.Push(HttpResponse{.status = 403, .headers = {}, .body = echo});
  S3Client s3(&client_, S3Addressing::kPath);
  StatusOr<std::string> got = s3.GetObject("bucket", "key");
  spdlog::set_default_logger(previous);

  ASSERT_FALSE(got.ok());
  const std::string everything = got.status().message() + "\n" + log.str();
  EXPECT_NE(got.status().message().find("s3://bucket/key"), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find("SignatureDoesNotMatch"), std::string::npos);
  EXPECT_NE(log.str().find("retry"), std::string::npos) << "the retries were logged";
  for (const char* secret : {kSecret, kToken, "Signature=ab12", "X-Amz-Signature=ab12"}) {
    EXPECT_EQ(everything.find(secret), std::string::npos) << secret << " leaked in:\n" << everything;
  }
}

}  // namespace
}  // namespace litmus::aws
