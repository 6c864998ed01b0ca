// End-to-end: the real `litmus run` with action_json against fake_aws_endpoint.py, a local
// SageMaker + SNS endpoint that verifies every call's SigV4 signature with botocore and records
// the calls. Checks the calls and their parameters at rule start and on firing, that no firing
// call is made when the rule does not fire, that failures (HTTP 500, a bad signature) change
// neither the verdict nor the exit code and are recorded in events.jsonl, that endpoints are
// masked everywhere, and that malformed action_json is a client error.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_aws_endpoint_process.h"

#include "support/job_files.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::FakeAwsEndpoint;
using testing::ProcessResult;
using testing::ReadEvents;
using testing::RunProcess;
using Env = std::vector<std::pair<std::string, std::string>>;

constexpr char kRegion[] = "eu-west-1";
const std::string kTopicArn = "arn:aws:sns:eu-west-1:123456789012:SMDebugRules";
// What rulesconfig writes into RuleParameters: every quote backslash-escaped.
constexpr char kEscapedActions[] =
    R"([{\"name\": \"stoptraining\", \"training_job_prefix\": \"my-job\"}, )"
    R"({\"name\": \"email\", \"endpoint\": \"jane@example.com\"}, )"
    R"({\"name\": \"sms\", \"endpoint\": \"+14155550123\"}])";

std::vector<Json> EventsNamed(const std::vector<Json>& events, const std::string& name) {
  std::vector<Json> out;
  std::copy_if(events.begin(), events.end(), std::back_inserter(out),
               [&](const Json& e) { return e["event"] == name; });
  return out;
}

std::vector<std::string> Operations(const Json& calls) {
  std::vector<std::string> out;
  for (const Json& c : calls) out.push_back(c["operation"].get<std::string>());
  return out;
}

// Position of the first (or last) `op` in `ops`; ops.size() if absent.
size_t IndexOf(const std::vector<std::string>& ops, const std::string& op, bool last = false) {
  size_t found = ops.size();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i] != op) continue;
    found = i;
    if (!last) break;
  }
  return found;
}

class ActionsE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_STRNE(LITMUS_BOTOCORE_PYTHON, "")
        << "no python3 with botocore was found when CMake ran: install python3-botocore "
           "(scripts/install-deps.sh) and re-run cmake";
  }

  // The job's environment: the endpoint's credentials and URLs; every other AWS setting unset so
  // the developer's own configuration cannot interfere.
  Env AwsEnv(const FakeAwsEndpoint& endpoint, const std::string& secret = "TESTSECRET") const {
    return {{"AWS_ACCESS_KEY_ID", "TESTKEY"},
            {"AWS_SECRET_ACCESS_KEY", secret},
            {"AWS_SESSION_TOKEN", ""},
            {"AWS_PROFILE", ""},
            {"AWS_DEFAULT_REGION", ""},
            {"AWS_REGION", kRegion},
            {"AWS_ENDPOINT_URL", ""},
            {"AWS_ENDPOINT_URL_SAGEMAKER", endpoint.url()},
            {"AWS_ENDPOINT_URL_SNS", endpoint.url()},
            {"AWS_EC2_METADATA_DISABLED", "true"},
            {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", ""},
            {"AWS_CONTAINER_CREDENTIALS_FULL_URI", ""},
            {"LITMUS_RULE_PARAMETERS", ""},
            {"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}};
  }

  ProcessResult RunLitmus(const std::string& rule, std::vector<std::string> params, const Env& env) {
    std::vector<std::string> args = {testing::LitmusBinary(), "run", "--output-dir", out_.str(), "--message-file",
                                     (out_.path() / "message").string(), "--failure-file",
                                     (out_.path() / "failure").string(), "--poll-interval-ms", "20", "--trial",
                                     testing::FixturePath("pt_exploding").string(), "--plugin",
                                     LITMUS_TEST_RULES_PLUGIN, "--rule", rule};
    for (const auto& p : params) {
      args.push_back("--param");
      args.push_back(p);
    }
    return RunProcess(args, env);
  }

  Json Status() const {
    std::ifstream in(out_.path() / "status.json");
    return Json::parse(in);
  }

  // Neither the e-mail address nor the phone number appears in any output of the job.
  void ExpectNoEndpointIn(const ProcessResult& result) const {
    for (const std::string& text : {result.out, result.err, testing::ReadWholeFile(out_.path() / "events.jsonl"),
                                    testing::ReadWholeFile(out_.path() / "status.json")}) {
      EXPECT_THAT(text, Not(HasSubstr("jane@example.com")));
      EXPECT_THAT(text, Not(HasSubstr("4155550123")));
    }
  }

  testing::TempDir out_;
  testing::TempDir server_dir_;
};

TEST_F(ActionsE2eTest, RuleStartCallsThenOneStopAndOnePublishPerEndpointOnFiring) {
  // ListTrainingJobs pages one job at a time: old-my-job-2 contains the prefix but does not start
  // with it, so StopTraining asks for the second page, finds my-job-1 and stops paging.
  FakeAwsEndpoint endpoint(server_dir_.path(), kRegion, {"--training-jobs", "old-my-job-2,my-job-1,my-job-0"});
  ASSERT_TRUE(endpoint.ok());
  const ProcessResult result =
      RunLitmus("FireAtStep", {"fire_at_step=3", std::string("action_json=") + kEscapedActions}, AwsEnv(endpoint));
  EXPECT_EQ(result.exit_code, 1) << result.err;

  const Json calls = endpoint.Calls();
  const std::vector<std::string> ops = Operations(calls);
  EXPECT_THAT(ops, ::testing::ElementsAre(
                       "ListTrainingJobs", "ListTrainingJobs",                                // stoptraining
                       "CreateTopic", "ListSubscriptions", "ListSubscriptions", "Subscribe",  // email
                       "CreateTopic", "ListSubscriptions", "ListSubscriptions", "Subscribe",  // sms
                       "StopTrainingJob", "Publish", "Publish"));                             // on firing
  for (const Json& c : calls) {
    EXPECT_TRUE(c["signature_ok"].get<bool>()) << c.dump();
    EXPECT_EQ(c["status"], 200) << c.dump();
    EXPECT_EQ(c["service"], c["operation"].get<std::string>().find("Training") != std::string::npos ? "sagemaker"
                                                                                                    : "sns");
  }
  if (calls.size() != 13) return;
  EXPECT_EQ(calls[0]["params"], Json::parse(R"({"NameContains": "my-job", "StatusEquals": "InProgress",
                                                 "SortBy": "CreationTime", "SortOrder": "Descending"})"));
  EXPECT_EQ(calls[1]["params"]["NextToken"], "1");
  EXPECT_EQ(calls[2]["params"], Json::parse(R"({"Version": "2010-03-31", "Name": "SMDebugRules"})"));
  EXPECT_FALSE(calls[3]["params"].contains("NextToken"));
  EXPECT_EQ(calls[4]["params"]["NextToken"], "page-2");
  EXPECT_EQ(calls[5]["params"], Json({{"Version", "2010-03-31"},
                                      {"TopicArn", kTopicArn},
                                      {"Protocol", "email"},
                                      {"Endpoint", "jane@example.com"},
                                      {"Attributes.entry.1.key", "FilterPolicy"},
                                      {"Attributes.entry.1.value", R"({"email":["jane@example.com"]})"},
                                      {"ReturnSubscriptionArn", "false"}}));
  EXPECT_EQ(calls[9]["params"]["Protocol"], "sms");
  EXPECT_EQ(calls[9]["params"]["Endpoint"], "+14155550123");
  EXPECT_EQ(calls[9]["params"]["Attributes.entry.1.value"], R"({"phone_num":["+14155550123"]})");
  EXPECT_EQ(calls[10]["params"], Json::parse(R"({"TrainingJobName": "my-job-1"})"));
  const std::string subject = "SMDebugRule:FireAtStep fired";
  EXPECT_EQ(calls[11]["params"],
            Json({{"Version", "2010-03-31"},
                  {"TopicArn", kTopicArn},
                  {"Subject", subject},
                  {"Message",
                   subject + ". Evaluation of the rule FireAtStep at step 3 resulted in the condition being met"},
                  {"MessageAttributes.entry.1.Name", "email"},
                  {"MessageAttributes.entry.1.Value.DataType", "String"},
                  {"MessageAttributes.entry.1.Value.StringValue", "jane@example.com"}}));
  EXPECT_EQ(calls[12]["params"]["MessageAttributes.entry.1.Name"], "phone_num");
  EXPECT_EQ(calls[12]["params"]["MessageAttributes.entry.1.Value.StringValue"], "+14155550123");

  // Events: rule start, prepared actions, firing, invoked actions, end.
  const std::vector<Json> events = ReadEvents(out_.path());
  std::vector<std::string> names;
  for (const Json& e : events) names.push_back(e["event"].get<std::string>());
  EXPECT_LT(IndexOf(names, "RuleStarted"), IndexOf(names, "ActionPrepared"));
  EXPECT_LT(IndexOf(names, "ActionPrepared", true), IndexOf(names, "RuleEvaluationConditionMet"));
  EXPECT_LT(IndexOf(names, "RuleEvaluationConditionMet"), IndexOf(names, "ActionInvoked"));
  EXPECT_LT(IndexOf(names, "ActionInvoked", true), IndexOf(names, "RuleEnded"));
  const auto prepared = EventsNamed(events, "ActionPrepared");
  const auto invoked = EventsNamed(events, "ActionInvoked");
  ASSERT_EQ(prepared.size(), 3u);
  ASSERT_EQ(invoked.size(), 3u);
  const std::vector<std::pair<std::string, std::string>> targets = {
      {"stoptraining", "my-job"}, {"email", "j***@e***.com"}, {"sms", "+*********23"}};
  for (size_t i = 0; i < 3; ++i) {
    for (const Json& e : {prepared[i], invoked[i]}) {
      EXPECT_EQ(e["action"], targets[i].first);
      EXPECT_EQ(e["target"], targets[i].second);
      EXPECT_EQ(e["outcome"], "ok") << e.dump();
      EXPECT_EQ(e["error"], "");
      EXPECT_EQ(e["rule"], "FireAtStep");
    }
    EXPECT_EQ(invoked[i]["step"], 3);
  }
  EXPECT_EQ(invoked[0]["message"], "stopped training job my-job-1");
  EXPECT_EQ(Status()["RuleEvaluationStatus"], "IssuesFound");
  ExpectNoEndpointIn(result);
}

// Raw JSON through LITMUS_RULE_PARAMETERS; the rule never fires.
TEST_F(ActionsE2eTest, NoFiringMeansOnlyTheRuleStartCalls) {
  FakeAwsEndpoint endpoint(server_dir_.path(), kRegion, {"--training-jobs", "my-job-1"});
  ASSERT_TRUE(endpoint.ok());
  Env env = AwsEnv(endpoint);
  const Json parameters = {{"action_json", R"([{"name": "stoptraining", "training_job_prefix": "my-job"},)"
                                           R"( {"name": "sms", "endpoint": "+14155550123"}])"}};
  env.emplace_back("LITMUS_RULE_PARAMETERS", parameters.dump());
  const ProcessResult result = RunLitmus("NeverFires", {}, env);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(Operations(endpoint.Calls()),
              ::testing::ElementsAre("ListTrainingJobs", "CreateTopic", "ListSubscriptions", "ListSubscriptions",
                                     "Subscribe"));
  const std::vector<Json> events = ReadEvents(out_.path());
  EXPECT_EQ(EventsNamed(events, "ActionPrepared").size(), 2u);
  EXPECT_TRUE(EventsNamed(events, "ActionInvoked").empty());
  EXPECT_EQ(Status()["RuleEvaluationStatus"], "NoIssuesFound");
  ExpectNoEndpointIn(result);
}

TEST_F(ActionsE2eTest, AFailingEndpointChangesNeitherVerdictNorExitCode) {
  FakeAwsEndpoint endpoint(server_dir_.path(), kRegion, {"--training-jobs", "my-job-1", "--fail-with", "500"});
  ASSERT_TRUE(endpoint.ok());
  const ProcessResult result =
      RunLitmus("FireAtStep", {"fire_at_step=3", std::string("action_json=") + kEscapedActions}, AwsEnv(endpoint));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(Status()["RuleEvaluationStatus"], "IssuesFound");
  EXPECT_EQ(Status()["step"], 3);
  EXPECT_THAT(testing::ReadWholeFile(out_.path() / "message"),
              StartsWith("RuleEvaluationConditionMet: Evaluation of the rule FireAtStep at step 3"));

  const std::vector<std::string> ops = Operations(endpoint.Calls());
  // StopTraining gives up after 5 failed ListTrainingJobs calls (each retried by the client).
  const auto lists = std::count(ops.begin(), ops.end(), "ListTrainingJobs");
  EXPECT_GE(lists, 5);
  EXPECT_LE(lists, 15);
  // Without a topic or a matching job, nothing is attempted on firing.
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "StopTrainingJob"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Publish"), 0);

  const std::vector<Json> events = ReadEvents(out_.path());
  for (const std::string name : {"ActionPrepared", "ActionInvoked"}) {
    const auto named = EventsNamed(events, name);
    ASSERT_EQ(named.size(), 3u) << name;
    for (const Json& e : named) {
      EXPECT_EQ(e["outcome"], "failed") << e.dump();
      EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("HTTP 500 InternalFailure")) << e.dump();
    }
  }
  EXPECT_THAT(EventsNamed(events, "ActionPrepared")[0]["error"].get<std::string>(), HasSubstr("giving up"));
  ExpectNoEndpointIn(result);
}

TEST_F(ActionsE2eTest, AFailingEndpointKeepsAQuietRuleAtExitZero) {
  FakeAwsEndpoint endpoint(server_dir_.path(), kRegion, {"--fail-with", "503"});
  ASSERT_TRUE(endpoint.ok());
  const ProcessResult result =
      RunLitmus("NeverFires", {R"(action_json={"name": "email", "endpoint": "jane@example.com"})"}, AwsEnv(endpoint));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(Status()["RuleEvaluationStatus"], "NoIssuesFound");
  const auto prepared = EventsNamed(ReadEvents(out_.path()), "ActionPrepared");
  ASSERT_EQ(prepared.size(), 1u);
  EXPECT_EQ(prepared[0]["outcome"], "failed");
}

TEST_F(ActionsE2eTest, ABadSignatureIsRefusedRecordedAndIgnored) {
  FakeAwsEndpoint endpoint(server_dir_.path(), kRegion, {"--training-jobs", "my-job-1"});
  ASSERT_TRUE(endpoint.ok());
  const ProcessResult result = RunLitmus(
      "FireAtStep", {"fire_at_step=3", std::string("action_json=") + kEscapedActions}, AwsEnv(endpoint, "WRONGSECRET"));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(Status()["RuleEvaluationStatus"], "IssuesFound");
  const Json calls = endpoint.Calls();
  ASSERT_FALSE(calls.empty());
  for (const Json& c : calls) {
    EXPECT_FALSE(c["signature_ok"].get<bool>()) << c.dump();
    EXPECT_EQ(c["status"], 403);
  }
  const auto invoked = EventsNamed(ReadEvents(out_.path()), "ActionInvoked");
  ASSERT_EQ(invoked.size(), 3u);
  for (const Json& e : invoked) {
    EXPECT_EQ(e["outcome"], "failed");
    EXPECT_THAT(e["error"].get<std::string>(), HasSubstr("SignatureDoesNotMatch"));
  }
  // The secret never appears in the job's output.
  EXPECT_THAT(result.err + result.out + testing::ReadWholeFile(out_.path() / "events.jsonl"),
              Not(HasSubstr("WRONGSECRET")));
  ExpectNoEndpointIn(result);
}

// A rule's own action (add_action, ABI 1.1): StalledTrainingRule with stop_training_on_fire
// registers StopTraining for its prefix, which lists the jobs at rule start and stops the one
// match when the rule fires (here at once: an empty trial and threshold 0).
TEST_F(ActionsE2eTest, StalledTrainingRuleStopsTheOneMatchingJob) {
  FakeAwsEndpoint endpoint(server_dir_.path(), kRegion, {"--training-jobs", "my-job-1"});
  ASSERT_TRUE(endpoint.ok());
  testing::TempDir empty_trial;
  const ProcessResult result =
      RunProcess({testing::LitmusBinary(), "run", "--output-dir", out_.str(), "--poll-interval-ms", "20", "--trial",
                  empty_trial.str(), "--rule", "StalledTrainingRule", "--param", "threshold=0", "--param",
                  "stop_training_on_fire=True", "--param", "training_job_name_prefix=my-job"},
                 AwsEnv(endpoint));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const Json calls = endpoint.Calls();
  EXPECT_THAT(Operations(calls), ::testing::ElementsAre("ListTrainingJobs", "StopTrainingJob"));
  for (const Json& c : calls) EXPECT_TRUE(c["signature_ok"].get<bool>()) << c.dump();
  if (calls.size() == 2) {
    EXPECT_EQ(calls[1]["params"], Json::parse(R"({"TrainingJobName": "my-job-1"})"));
  }
  const auto invoked = EventsNamed(ReadEvents(out_.path()), "ActionInvoked");
  ASSERT_EQ(invoked.size(), 1u);
  EXPECT_EQ(invoked[0]["action"], "stoptraining");
  EXPECT_EQ(invoked[0]["outcome"], "ok") << invoked[0].dump();
  EXPECT_EQ(invoked[0]["rule"], "StalledTrainingRule");
}

TEST_F(ActionsE2eTest, MalformedActionJsonIsAClientErrorAndCallsNothing) {
  FakeAwsEndpoint endpoint(server_dir_.path(), kRegion, {});
  ASSERT_TRUE(endpoint.ok());
  const ProcessResult result =
      RunLitmus("FireAtStep", {"fire_at_step=3", R"(action_json=[{\"name\": \"email\", \"endpoint\": )"},
                AwsEnv(endpoint));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("action_json is not valid JSON"));
  EXPECT_THAT(testing::ReadWholeFile(out_.path() / "failure"), StartsWith("ClientError: rule FireAtStep: action_json"));
  EXPECT_TRUE(endpoint.Calls().empty());
}

}  // namespace
}  // namespace litmus
