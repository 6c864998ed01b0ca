// Integration against a real S3 server that verifies SigV4 (Ceph RADOS Gateway, started by the
// CTest fixture `s3_server`): the smdebug fixtures uploaded to a bucket agree with their
// expected.json through S3; `litmus run` and `litmus inspect` give the same answers for a trial in
// S3 as for the same trial on disk (--trial, S3_PATH, YAML, --other-trial); a trial that grows in
// S3 while the runner follows it is evaluated completely; an idle poll is one request; a complete
// trial ends at the end marker without waiting, and a late worker's last step is waited for; a wrong
// secret, a missing bucket and a bad bucket name end the job with exit 2 and a clear message;
// keys holding XML's special characters, spaces, '+', '%' and non-ASCII round-trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "interop/fixture_comparer.h"
#include "litmus/aws/trial_env.h"
#include "litmus/engine/trial.h"
#include "s3/s3_test_server.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::FiredSteps;
using testing::LitmusRunArgs;
using testing::LitmusS3Env;
using testing::ProcessResult;
using testing::RunProcess;

constexpr char kBucket[] = "litmus-it";
const std::vector<std::string> kFixtures = {"pt_exploding", "synthetic_dtypes", "pt_ddp_two_workers",
                                            "pt_run_partial", "pt_run_complete"};

class S3Integration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    testing::S3TestClient client;
    for (const std::string& fixture : kFixtures) {
      client.UploadTree(kBucket, "fixtures/" + fixture, testing::FixturePath(fixture));
    }
  }
  static std::string S3Trial(const std::string& fixture) { return std::string("s3://") + kBucket + "/fixtures/" + fixture; }

  // Signs with TESTKEY/TESTSECRET without touching the process environment.
  std::unique_ptr<aws::TrialEnv> MakeEnv(aws::HttpTransport* transport = nullptr) {
    return std::make_unique<aws::TrialEnv>(aws::TrialEnvOptions{
        .transport = transport, .credentials = credentials_.get(), .region = "us-east-1",
        .endpoint = testing::S3Endpoint(), .retry = {}, .s3 = {}});
  }

  std::unique_ptr<aws::CredentialsProvider> credentials_ = aws::StaticCredentials(
      {.access_key_id = testing::kS3AccessKey, .secret_access_key = testing::kS3SecretKey, .session_token = "",
       .expiration = {}});
};

TEST_F(S3Integration, FixturesAgreeWithSmdebugThroughS3) {
  for (const std::string& fixture : kFixtures) {
    SCOPED_TRACE(fixture);
    auto env = MakeEnv();
    env->AddTrial(S3Trial(fixture));
    TrialOptions options;
    options.training_end_delay_refresh_s = 0;
    LITMUS_ASSERT_OK_AND_ASSIGN(auto trial, Trial::Open(env.get(), S3Trial(fixture), options));
    const testing::FixtureComparison result = testing::CompareFixtureWithExpected(fixture, *trial, env.get());
    EXPECT_GT(result.compared_values, 0);
    EXPECT_GT(env->s3_requests(), 0u);
  }
}

TEST_F(S3Integration, InspectPrintsWhatItPrintsForTheLocalFolder) {
  for (const std::string& fixture : kFixtures) {
    const ProcessResult local = RunProcess({testing::LitmusBinary(), "inspect", testing::FixturePath(fixture).string()});
    const ProcessResult remote = RunProcess({testing::LitmusBinary(), "inspect", S3Trial(fixture)}, LitmusS3Env());
    ASSERT_EQ(local.exit_code, 0) << local.err;
    ASSERT_EQ(remote.exit_code, 0) << remote.err;
    // Everything but the first line ("trial: <path>") is the same.
    EXPECT_EQ(local.out.substr(local.out.find('\n')), remote.out.substr(remote.out.find('\n'))) << fixture;
    EXPECT_TRUE(remote.out.starts_with("trial: " + S3Trial(fixture))) << remote.out;
  }
}

TEST_F(S3Integration, CustomGradientRuleFiresAtTheSameStepsAsLocally) {
  for (const std::string& fixture : kFixtures) {
    for (const std::string threshold : {"0.1", "10.0"}) {
      SCOPED_TRACE(fixture + " threshold " + threshold);
      std::vector<std::string> rule = {"--plugin", LITMUS_CUSTOM_RULE_PLUGIN, "--rule", "CustomGradientRule",
                                       "--param", "threshold=" + threshold, "--keep-going"};
      if (fixture == "pt_run_partial") rule.insert(rule.end(), {"--end-step", "9"});  // training still runs
      testing::TempDir local_out, s3_out;
      std::vector<std::string> local_args = rule, s3_args = rule;
      local_args.insert(local_args.end(), {"--trial", testing::FixturePath(fixture).string()});
      s3_args.insert(s3_args.end(), {"--trial", S3Trial(fixture)});
      const ProcessResult local = RunProcess(LitmusRunArgs(local_out.path(), local_args), LitmusS3Env());
      const ProcessResult remote = RunProcess(LitmusRunArgs(s3_out.path(), s3_args), LitmusS3Env());
      ASSERT_FALSE(remote.timed_out);
      EXPECT_EQ(remote.exit_code, local.exit_code) << remote.err;
      EXPECT_EQ(FiredSteps(s3_out.path()), FiredSteps(local_out.path()));
    }
  }
}

TEST_F(S3Integration, TrialFromS3PathYamlAndOtherTrials) {
  testing::TempDir local_out, env_out, yaml_out, other_out;
  const std::vector<std::string> rule = {"--plugin", LITMUS_CUSTOM_RULE_PLUGIN, "--rule", "CustomGradientRule",
                                         "--param", "threshold=10", "--keep-going"};
  std::vector<std::string> local_args = rule;
  local_args.insert(local_args.end(), {"--trial", testing::FixturePath("pt_exploding").string()});
  const ProcessResult local = RunProcess(LitmusRunArgs(local_out.path(), local_args), LitmusS3Env());
  ASSERT_EQ(local.exit_code, 1) << local.err;

  auto env = LitmusS3Env();
  env.emplace_back("S3_PATH", S3Trial("pt_exploding"));
  const ProcessResult from_env = RunProcess(LitmusRunArgs(env_out.path(), rule), env);
  EXPECT_EQ(from_env.exit_code, 1) << from_env.err;
  EXPECT_EQ(FiredSteps(env_out.path()), FiredSteps(local_out.path()));

  yaml_out.WriteFile("job.yaml", "trial: " + S3Trial("pt_exploding") + "\nplugins: [" + LITMUS_CUSTOM_RULE_PLUGIN +
                                     "]\nrules:\n  - rule: CustomGradientRule\n    parameters: {threshold: \"10\"}\n");
  const ProcessResult from_yaml = RunProcess(
      LitmusRunArgs(yaml_out.path(), {"--config", (yaml_out.path() / "job.yaml").string(), "--keep-going"}),
      LitmusS3Env());
  EXPECT_EQ(from_yaml.exit_code, 1) << from_yaml.err;
  EXPECT_EQ(FiredSteps(yaml_out.path()), FiredSteps(local_out.path()));

  // A rule reading another trial in S3 (the same run's first steps: tolerance -1 makes it fire
  // as soon as it has read the tensor in both trials).
  const std::vector<std::string> differs = {"--plugin", LITMUS_TEST_RULES_PLUGIN, "--rule", "DiffersFromOtherTrial",
                                            "--param", "tensor=gradient/MLP_fc1.bias", "--param", "tolerance=-1"};
  std::vector<std::string> local_other = differs, s3_other = differs;
  local_other.insert(local_other.end(), {"--trial", testing::FixturePath("pt_run_complete").string(), "--other-trial",
                                         testing::FixturePath("pt_run_partial").string()});
  s3_other.insert(s3_other.end(), {"--trial", S3Trial("pt_run_complete"), "--other-trial", S3Trial("pt_run_partial")});
  testing::TempDir local_other_out;
  const ProcessResult a = RunProcess(LitmusRunArgs(local_other_out.path(), local_other), LitmusS3Env());
  const ProcessResult b = RunProcess(LitmusRunArgs(other_out.path(), s3_other), LitmusS3Env());
  EXPECT_EQ(b.exit_code, a.exit_code) << b.err;
  EXPECT_EQ(FiredSteps(other_out.path()), FiredSteps(local_other_out.path()));
  EXPECT_FALSE(FiredSteps(other_out.path()).empty());
}

// The runner follows a trial while it is uploaded step by step (events file, then index file, as
// smdebug publishes them; worker_1 two steps behind worker_0), then the end marker.
TEST_F(S3Integration, FollowsATrialGrowingInS3) {
  const std::filesystem::path source = testing::FixturePath("pt_ddp_two_workers");
  const std::string prefix = "growing-" + std::to_string(::getpid());
  testing::TempDir local_out, s3_out;
  const std::vector<std::string> rule = {"--plugin", LITMUS_CUSTOM_RULE_PLUGIN, "--rule", "CustomGradientRule",
                                         "--param", "threshold=0.1", "--keep-going"};
  std::vector<std::string> local_args = rule;
  local_args.insert(local_args.end(), {"--trial", source.string()});
  const ProcessResult local = RunProcess(LitmusRunArgs(local_out.path(), local_args), LitmusS3Env());

  testing::S3TestClient client;
  client.UploadCollections(kBucket, prefix, source);
  std::vector<std::string> s3_args = rule;
  s3_args.insert(s3_args.end(), {"--trial", std::string("s3://") + kBucket + "/" + prefix});
  testing::ChildProcess runner(LitmusRunArgs(s3_out.path(), s3_args), LitmusS3Env());
  client.UploadStepByStep(kBucket, prefix, source, std::chrono::milliseconds(80));
  const ProcessResult result = runner.Wait(std::chrono::seconds(120));
  ASSERT_FALSE(result.timed_out) << "the runner did not end after the end marker";
  EXPECT_EQ(result.exit_code, local.exit_code) << result.err;
  EXPECT_EQ(FiredSteps(s3_out.path()), FiredSteps(local_out.path()));
  std::ifstream report(s3_out.path() / "rule-reports" / "CustomGradientRule.json");
  std::ifstream local_report(local_out.path() / "rule-reports" / "CustomGradientRule.json");
  EXPECT_EQ(nlohmann::json::parse(report)["Datapoints"], nlohmann::json::parse(local_report)["Datapoints"])
      << "every step evaluated exactly once";
}

// Counts what reaches the server.
class CountingTransport final : public aws::HttpTransport {
 public:
  CountingTransport() : inner_(aws::NewCurlTransport()) {}
  StatusOr<aws::HttpResponse> Send(const aws::HttpRequest& request) override {
    ++total;
    if (request.url.find("list-type=2") != std::string::npos) ++lists;
    return inner_->Send(request);
  }
  std::atomic<int> total{0}, lists{0};

 private:
  std::unique_ptr<aws::HttpTransport> inner_;
};

TEST_F(S3Integration, AnIdlePollIsOneListRequest) {
  CountingTransport counting;
  auto env = MakeEnv(&counting);
  env->AddTrial(S3Trial("pt_run_partial"));  // training still running: no end marker
  LITMUS_ASSERT_OK_AND_ASSIGN(auto trial, Trial::Open(env.get(), S3Trial("pt_run_partial")));
  for (int poll = 0; poll < 5; ++poll) {
    counting.total = 0;
    counting.lists = 0;
    LITMUS_ASSERT_OK(trial->Refresh());
    EXPECT_EQ(counting.total.load(), 1) << "poll " << poll;
    EXPECT_EQ(counting.lists.load(), 1) << "poll " << poll;
  }
}

// End of training through S3 (issue 16 item 1, "S3 too"): a complete trial ends at the marker
// without SMDEBUG_TRAINING_END_DELAY_REFRESH's wait, in one refresh; a step a late worker has not
// uploaded yet keeps it open (listing again, not sleeping) until that worker's files arrive.
TEST_F(S3Integration, CompleteTrialEndsAtTheMarkerWithoutWaiting) {
  auto env = MakeEnv();
  env->AddTrial(S3Trial("pt_ddp_two_workers"));
  TrialOptions options;
  options.training_end_delay_refresh_s = 3600;  // a wait would hang the test
  LITMUS_ASSERT_OK_AND_ASSIGN(auto trial, Trial::Open(env.get(), S3Trial("pt_ddp_two_workers"), options));
  EXPECT_TRUE(trial->end_marker_seen());
  EXPECT_TRUE(trial->loaded_all_steps());
  EXPECT_EQ(trial->StepAvailability(14), StepState::kNoMoreData);
}

TEST_F(S3Integration, IncompleteStepAtTheMarkerWaitsForTheLateWorker) {
  const std::filesystem::path source = testing::FixturePath("pt_ddp_two_workers");
  const std::string prefix = "late-worker-" + std::to_string(::getpid());
  const std::string late_index = "index/000000000/000000000013_worker_1.json";
  const std::string late_events = "events/000000000013/000000000013_worker_1.tfevents";
  testing::TempDir staged;  // the fixture without worker_1's last step
  std::filesystem::copy(source, staged.path(), std::filesystem::copy_options::recursive);
  std::filesystem::remove(staged.path() / late_index);
  std::filesystem::remove(staged.path() / late_events);
  testing::S3TestClient client;
  client.UploadTree(kBucket, prefix, staged.path());

  auto env = MakeEnv();
  const std::string uri = std::string("s3://") + kBucket + "/" + prefix;
  env->AddTrial(uri);
  TrialOptions options;
  options.training_end_delay_refresh_s = 3600;
  LITMUS_ASSERT_OK_AND_ASSIGN(auto trial, Trial::Open(env.get(), uri, options));
  EXPECT_TRUE(trial->end_marker_seen());
  EXPECT_FALSE(trial->loaded_all_steps()) << "step 13 lacks worker_1";
  EXPECT_EQ(trial->StepAvailability(13), StepState::kNotYetAvailable);
  LITMUS_ASSERT_OK(trial->Refresh());  // lists again; does not sleep
  EXPECT_FALSE(trial->loaded_all_steps());
  client.Upload(kBucket, prefix + "/" + late_events, source / late_events);  // as smdebug: events first
  client.Upload(kBucket, prefix + "/" + late_index, source / late_index);
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_TRUE(trial->loaded_all_steps());
  EXPECT_EQ(trial->WorkersForStep(13), (std::vector<std::string>{"worker_0", "worker_1"}));
  EXPECT_EQ(trial->StepAvailability(13), StepState::kAvailable);
  LITMUS_EXPECT_OK(trial->Value(trial->TensorNames().front(), 13, Mode::kGlobal, "worker_1").status());
}

TEST_F(S3Integration, WrongSecretIsAClientErrorNamingTheTrial) {
  testing::TempDir out;
  const std::string secret = "WRONG-SECRET-4d1c";
  const ProcessResult result =
      RunProcess(LitmusRunArgs(out.path(), {"--trial", S3Trial("pt_exploding"), "--plugin", LITMUS_CUSTOM_RULE_PLUGIN,
                                            "--rule", "CustomGradientRule"}),
                 LitmusS3Env(testing::S3Endpoint(), secret));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("SignatureDoesNotMatch"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(S3Trial("pt_exploding")), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("check the AWS credentials"), std::string::npos) << result.err;
  const std::string message = testing::ReadWholeFile(out.path() / "message");
  EXPECT_NE(message.find("ClientError"), std::string::npos) << message;
  for (const std::string& text : {result.err, result.out, message, testing::ReadWholeFile(out.path() / "status.json")}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << "the secret leaked: " << text;
  }

  const ProcessResult inspect = RunProcess({testing::LitmusBinary(), "inspect", S3Trial("pt_exploding")},
                                           LitmusS3Env(testing::S3Endpoint(), secret));
  EXPECT_EQ(inspect.exit_code, 2);
  EXPECT_NE(inspect.err.find("SignatureDoesNotMatch"), std::string::npos) << inspect.err;
}

TEST_F(S3Integration, MissingBucketAndBadBucketNameAreClientErrors) {
  for (const auto& [trial, expected] : std::vector<std::pair<std::string, std::string>>{
           {"s3://litmus-no-such-bucket/run", "bucket 'litmus-no-such-bucket' does not exist"},
           {"s3://Not_A_Bucket/run", "invalid S3 bucket name 'Not_A_Bucket'"}}) {
    testing::TempDir out;
    const ProcessResult result = RunProcess(
        LitmusRunArgs(out.path(), {"--trial", trial, "--plugin", LITMUS_CUSTOM_RULE_PLUGIN, "--rule", "CustomGradientRule"}),
        LitmusS3Env());
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find(expected), std::string::npos) << result.err;
    // One line on stderr for the error.
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
}

// Keys that stress the URL path encoding, SigV4's canonical URI and the XML of the listing: the
// listing returns exactly the keys that were PUT, and HEAD, GET and ranged GET of each listed key
// work. Checked through the client's listings (encoding-type=url) and through one the server
// writes with XML entity escapes, read by the same parser.
TEST_F(S3Integration, KeysWithXmlSpecialAndNonAsciiCharactersRoundTrip) {
  testing::S3TestClient client;
  aws::S3Client& s3 = client.s3();
  const std::string prefix = "tricky/";
  std::vector<std::string> xml_safe = {
      "a&b", "a<b>c", "quote\"s and 'apostrophes'", "&amp;", "&lt;Key&gt;", "with space", " ", "plus+sign",
      "100%.csv", "%41", "caf\xC3\xA9/\xE6\x97\xA5\xE6\x9C\xAC.txt", "a?b#c;d=e,f:g@h$i", "~*()!'", "]]>",
      "a//b", "a/./b/../c"};
  std::vector<std::string> keys = xml_safe;
  keys.push_back("control\r\n\t\x01");  // XML 1.0 cannot carry these: only the url-encoded listing
  for (std::vector<std::string>* list : {&xml_safe, &keys}) {
    for (std::string& key : *list) {
      if (!key.starts_with(prefix)) key = prefix + key;
    }
    std::sort(list->begin(), list->end());
  }
  for (const std::string& key : keys) LITMUS_ASSERT_OK(s3.Put(kBucket, key, "object " + key));

  std::vector<aws::S3Object> listed;
  LITMUS_ASSERT_OK(s3.ListAll(kBucket, prefix, "", &listed));
  std::vector<std::string> names;
  for (const aws::S3Object& object : listed) names.push_back(object.key);
  EXPECT_EQ(names, keys);
  for (const aws::S3Object& object : listed) {
    const std::string expected = "object " + object.key;
    EXPECT_EQ(object.size, expected.size()) << object.key;
    LITMUS_ASSERT_OK_AND_ASSIGN(std::string content, s3.GetObject(kBucket, object.key));
    EXPECT_EQ(content, expected);
    LITMUS_ASSERT_OK_AND_ASSIGN(std::optional<uint64_t> size, s3.Head(kBucket, object.key));
    EXPECT_EQ(size, std::optional<uint64_t>(expected.size())) << object.key;
    std::string tail(prefix.size(), '\0');
    LITMUS_ASSERT_OK_AND_ASSIGN(size_t read, s3.GetRange(kBucket, object.key, 7,
                                                         std::as_writable_bytes(std::span(tail))));
    EXPECT_EQ(tail.substr(0, read), object.key.substr(0, prefix.size()));
  }

  // Pages of three (continuation tokens) and start-after with the same keys.
  std::vector<std::string> paged;
  std::string token;
  do {
    LITMUS_ASSERT_OK_AND_ASSIGN(aws::S3ListPage page, s3.ListPage(kBucket, prefix, "", token, 3));
    for (const aws::S3Object& object : page.objects) paged.push_back(object.key);
    token = page.next_continuation_token;
  } while (!token.empty());
  EXPECT_EQ(paged, keys);
  LITMUS_ASSERT_OK_AND_ASSIGN(aws::S3ListPage after, s3.ListPage(kBucket, prefix, keys[4], "", 1000));
  ASSERT_FALSE(after.objects.empty());
  EXPECT_EQ(after.objects.front().key, keys[5]);

  // The server's own XML escapes (no encoding-type), through the same parser.
  LITMUS_ASSERT_OK_AND_ASSIGN(
      aws::HttpResponse raw,
      s3.aws()->Send({.method = "GET",
                      .url = testing::S3Endpoint() + "/" + kBucket + "/?list-type=2&prefix=tricky%2F&max-keys=1000",
                      .headers = {},
                      .body = ""}));
  ASSERT_EQ(raw.status, 200) << raw.body;
  LITMUS_ASSERT_OK_AND_ASSIGN(aws::S3ListPage escaped, aws::ParseListObjectsV2(raw.body));
  std::vector<std::string> escaped_names;
  for (const aws::S3Object& object : escaped.objects) {
    if (!object.key.starts_with(prefix + "control")) escaped_names.push_back(object.key);
  }
  EXPECT_EQ(escaped_names, xml_safe) << raw.body;
}

}  // namespace
}  // namespace litmus
