// End-to-end: the real `litmus run` publishing its status events to fake_aws_endpoint.py (a
// local EventBridge that checks each call's SigV4 signature with botocore) and to a webhook
// (LocalHttpServer): every events.jsonl object arrives, in order, through 5xx answers, throttling
// answers and throttled entries; the SageMaker shape; a dead receiver changes neither the verdict
// nor the exit code; bad options are client errors.
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_aws_endpoint_process.h"
#include "support/job_files.h"
#include "support/run_process.h"
#include "support/temp_dir.h"
#include "unit/aws/local_http_server.h"

namespace litmus {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using testing::FakeAwsEndpoint;
using testing::ProcessResult;
using testing::ReadEvents;
using Env = std::vector<std::pair<std::string, std::string>>;

constexpr char kRegion[] = "eu-west-1";

class EventsE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_STRNE(LITMUS_BOTOCORE_PYTHON, "")
        << "no python3 with botocore was found when CMake ran: install python3-botocore "
           "(scripts/install-deps.sh) and re-run cmake";
  }

  static Env AwsEnv(const std::string& endpoint) {
    return {{"AWS_ACCESS_KEY_ID", "TESTKEY"},
            {"AWS_SECRET_ACCESS_KEY", "TESTSECRET"},
            {"AWS_SESSION_TOKEN", ""},
            {"AWS_PROFILE", ""},
            {"AWS_DEFAULT_REGION", ""},
            {"AWS_REGION", kRegion},
            {"AWS_ENDPOINT_URL", ""},
            {"AWS_ENDPOINT_URL_EVENTBRIDGE", endpoint},
            {"AWS_EC2_METADATA_DISABLED", "true"},
            {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", ""},
            {"AWS_CONTAINER_CREDENTIALS_FULL_URI", ""},
            {"LITMUS_RULE_PARAMETERS", ""},
            {"S3_PATH", ""},
            {"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}};
  }

  // FireAtStep fires at step 3 of pt_exploding: RuleStarted, RuleEvaluationConditionMet,
  // StatusChanged (IssuesFound), RuleEnded.
  ProcessResult RunLitmus(std::vector<std::string> extra, const Env& env) {
    std::vector<std::string> args = {testing::LitmusBinary(), "run", "--output-dir", out_.str(),
                                     "--poll-interval-ms", "20", "--trial",
                                     testing::FixturePath("pt_exploding").string(), "--plugin",
                                     LITMUS_TEST_RULES_PLUGIN, "--rule", "FireAtStep", "--param", "fire_at_step=3"};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::RunProcess(args, env);
  }

  // The entries of every successful PutEvents call, in order; every call signed correctly.
  static std::vector<Json> DeliveredEntries(const Json& calls) {
    std::vector<Json> entries;
    for (const Json& c : calls) {
      EXPECT_EQ(c["service"], "events") << c.dump();
      EXPECT_EQ(c["operation"], "PutEvents") << c.dump();
      EXPECT_TRUE(c["signature_ok"].get<bool>()) << c.dump();
      if (c["status"] != 200) continue;
      for (const Json& e : c["params"]["Entries"]) entries.push_back(e);
    }
    return entries;
  }

  // The job's events.jsonl objects as rule-status entries on bus "ops".
  std::vector<Json> ExpectedEntries() const {
    std::vector<Json> out;
    for (const Json& e : ReadEvents(out_.path())) {
      out.push_back({{"Source", "litmus"},
                     {"DetailType", "Rule Evaluation Status Change"},
                     {"Detail", e.dump()},
                     {"EventBusName", "ops"}});
    }
    return out;
  }

  // Entries with Detail parsed (so that key order and spacing do not matter).
  static std::vector<Json> Parsed(std::vector<Json> entries) {
    for (Json& e : entries) e["Detail"] = Json::parse(e["Detail"].get<std::string>());
    return entries;
  }

  testing::TempDir out_;
  testing::TempDir server_dir_;
};

TEST_F(EventsE2eTest, EveryEventReachesEventBridgeSignedAndInOrder) {
  FakeAwsEndpoint endpoint(server_dir_.path(), kRegion, {});
  ASSERT_TRUE(endpoint.ok());
  const ProcessResult result = RunLitmus({"--eventbridge-bus", "ops"}, AwsEnv(endpoint.url()));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::vector<Json> expected = ExpectedEntries();
  ASSERT_EQ(expected.size(), 4u);
  EXPECT_EQ(Parsed(DeliveredEntries(endpoint.Calls())), Parsed(expected));
}

TEST_F(EventsE2eTest, ServerErrorsAreRetried) {
  FakeAwsEndpoint endpoint(server_dir_.path(), kRegion, {"--fail-first", "2", "--fail-first-status", "500"});
  ASSERT_TRUE(endpoint.ok());
  const ProcessResult result = RunLitmus({"--eventbridge-bus", "ops"}, AwsEnv(endpoint.url()));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const Json calls = endpoint.Calls();
  ASSERT_GE(calls.size(), 3u);
  EXPECT_EQ(calls[0]["status"], 500);
  EXPECT_EQ(calls[1]["status"], 500);
  EXPECT_EQ(Parsed(DeliveredEntries(calls)), Parsed(ExpectedEntries()));
}

TEST_F(EventsE2eTest, ThrottlingAnswersAndThrottledEntriesAreRetried) {
  FakeAwsEndpoint endpoint(server_dir_.path(), kRegion,
                           {"--fail-first", "2", "--fail-first-status", "400", "--fail-first-code",
                            "ThrottlingException", "--fail-entries-first", "2"});
  ASSERT_TRUE(endpoint.ok());
  const ProcessResult result = RunLitmus({"--eventbridge-bus", "ops"}, AwsEnv(endpoint.url()));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const Json calls = endpoint.Calls();
  ASSERT_GE(calls.size(), 5u);  // 2 throttled calls, 2 calls with a throttled entry, then the rest
  EXPECT_EQ(calls[0]["status"], 400);
  // A call's last entry was throttled: delivered entries include it twice (once as failed), so
  // compare what was accepted: every entry but the failed ones.
  std::vector<Json> accepted;
  int put_events = 0;
  for (const Json& c : calls) {
    if (c["status"] != 200) continue;
    Json entries = c["params"]["Entries"];
    if (put_events++ < 2) entries.erase(entries.size() - 1);
    for (const Json& e : entries) accepted.push_back(e);
    EXPECT_TRUE(c["signature_ok"].get<bool>());
  }
  EXPECT_EQ(Parsed(accepted), Parsed(ExpectedEntries()));
}

TEST_F(EventsE2eTest, SageMakerShapeForExistingLambdaFunctions) {
  FakeAwsEndpoint endpoint(server_dir_.path(), kRegion, {});
  ASSERT_TRUE(endpoint.ok());
  const ProcessResult result =
      RunLitmus({"--eventbridge-bus", "ops", "--eventbridge-sagemaker-shape", "--training-job-name", "my-job"},
                AwsEnv(endpoint.url()));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  std::vector<Json> sagemaker;
  for (const Json& e : DeliveredEntries(endpoint.Calls())) {
    if (e["DetailType"] == "SageMaker Training Job State Change") sagemaker.push_back(e);
  }
  ASSERT_EQ(sagemaker.size(), 1u);  // one status change: InProgress -> IssuesFound
  EXPECT_EQ(sagemaker[0]["Source"], "litmus");
  const Json detail = Json::parse(sagemaker[0]["Detail"].get<std::string>());
  EXPECT_EQ(detail["TrainingJobName"], "my-job");
  EXPECT_EQ(detail["TrainingJobStatus"], "InProgress");
  ASSERT_EQ(detail["DebugRuleEvaluationStatuses"].size(), 1u);
  const Json& status = detail["DebugRuleEvaluationStatuses"][0];
  EXPECT_EQ(status["RuleConfigurationName"], "FireAtStep");
  EXPECT_EQ(status["RuleEvaluationStatus"], "IssuesFound");
  EXPECT_THAT(status["StatusDetails"].get<std::string>(), HasSubstr("RuleEvaluationConditionMet"));
}

TEST_F(EventsE2eTest, WebhookGetsTheEventsJsonlObjects) {
  std::mutex mu;
  std::vector<std::string> bodies;
  testing::LocalHttpServer server([&](const testing::ServedRequest& r) {
    std::lock_guard lock(mu);
    bodies.push_back(r.body);
    testing::ServedResponse response;
    response.status = bodies.size() == 1 ? 503 : 204;  // the first is retried
    return response;
  });
  const ProcessResult result = RunLitmus({"--events-url", server.url() + "/litmus"}, AwsEnv(""));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  std::vector<Json> received;
  {
    std::lock_guard lock(mu);
    for (size_t i = 1; i < bodies.size(); ++i) received.push_back(Json::parse(bodies[i]));
    ASSERT_FALSE(bodies.empty());
    EXPECT_EQ(bodies[0], bodies[1]);
  }
  EXPECT_EQ(received, ReadEvents(out_.path()));
}

TEST_F(EventsE2eTest, DeadReceiversChangeNothing) {
  int port = 0;
  {
    testing::LocalHttpServer gone([](const testing::ServedRequest&) { return testing::ServedResponse{}; });
    port = gone.port();
  }
  Env env = AwsEnv("http://127.0.0.1:" + std::to_string(port));
  env.emplace_back("LITMUS_EVENTS_FLUSH_TIMEOUT_S", "0.5");
  const ProcessResult result =
      RunLitmus({"--events-url", "http://127.0.0.1:" + std::to_string(port) + "/x", "--eventbridge-bus", "ops"}, env);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(ReadEvents(out_.path()).size(), 4u);
  EXPECT_THAT(result.err, HasSubstr("not delivered to webhook http://127.0.0.1:"));
  EXPECT_THAT(result.out, HasSubstr("IssuesFound"));
}

TEST_F(EventsE2eTest, BadOptionsAreClientErrors) {
  ProcessResult result = RunLitmus({"--events-url", "ftp://example.com/x"}, AwsEnv(""));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("--events-url: expected an http:// or https:// URL"));
  result = RunLitmus({"--eventbridge-sagemaker-shape"}, AwsEnv(""));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("--eventbridge-sagemaker-shape needs --eventbridge-bus"));
  result = RunLitmus({"--eventbridge-bus", "ops", "--eventbridge-sagemaker-shape"}, AwsEnv(""));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("give it with --training-job-name"));
}

}  // namespace
}  // namespace litmus
