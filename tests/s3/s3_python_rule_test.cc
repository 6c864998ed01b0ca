// A Python rule whose source is an S3 object (`--python-rule s3://bucket/key.py`, SageMaker's
// source_s3_uri in LITMUS_RULE_PARAMETERS or a YAML job), against the S3 test server: the
// SageMaker docs' CustomGradientRule loaded from S3 fires on the same steps as the same file
// loaded locally and as the C++ example plugin, in worker processes and in-process; tracebacks and reports read as for
// the local file but name the URI; a missing object, a wrong secret and an unreachable endpoint
// are one-line client errors (exit 2) naming the URI; the local copy is gone after the job.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "s3/s3_test_server.h"
#include "support/job_files.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::FiredSteps;
using testing::LitmusRunArgs;
using testing::LitmusS3Env;
using testing::ProcessResult;
using testing::RunProcess;

constexpr char kBucket[] = "litmus-python-rules";
const std::filesystem::path kRules = LITMUS_PYTHON_RULES_DIR;
const std::vector<std::string> kFixtures = {"pt_exploding", "synthetic_dtypes", "pt_ddp_two_workers",
                                            "pt_run_partial", "pt_run_complete"};

std::string RuleUri(const std::string& file) { return std::string("s3://") + kBucket + "/rules/" + file; }

class S3PythonRule : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    testing::S3TestClient client;
    client.UploadTree(kBucket, "fixtures/pt_exploding", testing::FixturePath("pt_exploding"));  // creates the bucket
    for (const char* file : {"custom_gradient_rule.py", "raising_rules.py", "syntax_error_rule.py"}) {
      client.Upload(kBucket, std::string("rules/") + file, kRules / file);
    }
  }

  // The environment of a `litmus` child: the test server's credentials, and TMPDIR in `tmp_`, so
  // that the test sees the local copies the job makes (and that it removes them).
  std::vector<std::pair<std::string, std::string>> Env(const std::string& secret = testing::kS3SecretKey) {
    auto env = LitmusS3Env(testing::S3Endpoint(), secret);
    env.emplace_back("TMPDIR", tmp_.path().string());
    return env;
  }

  // Nothing is left in TMPDIR once a job has ended.
  void ExpectNoCopyLeft() {
    EXPECT_TRUE(std::filesystem::is_empty(tmp_.path()))
        << std::filesystem::directory_iterator(tmp_.path())->path();
  }

  ProcessResult Run(const testing::TempDir& out, std::vector<std::string> args,
                    const std::string& secret = testing::kS3SecretKey) {
    ProcessResult result = RunProcess(LitmusRunArgs(out.path(), std::move(args)), Env(secret));
    EXPECT_FALSE(result.timed_out);
    ExpectNoCopyLeft();
    return result;
  }

  // A job that fails at setup with a client error: exit 2, one line on stderr naming the URI,
  // the same line in the message file and status.json.
  void ExpectOneLineClientError(const testing::TempDir& out, const ProcessResult& result, const std::string& uri,
                                const std::string& expected) {
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_NE(result.err.find("ClientError: source_s3_uri " + uri + ": " + expected), std::string::npos)
        << result.err;
    const std::string message = testing::ReadWholeFile(out.path() / "message");
    EXPECT_NE(message.find("ClientError: source_s3_uri " + uri), std::string::npos) << message;
    const nlohmann::json status = testing::ReadJson(out.path() / "status.json");
    EXPECT_EQ(status["RuleEvaluationStatus"], "Error") << status.dump();
    EXPECT_NE(status["StatusDetails"].get<std::string>().find(uri), std::string::npos) << status.dump();
  }

  testing::TempDir tmp_;
};

TEST_F(S3PythonRule, FiresWhereTheLocalFileAndTheCppPluginFire) {
  for (const std::string& fixture : kFixtures) {
    for (const std::string threshold : {"0.001", "0.1", "10.0"}) {
      SCOPED_TRACE(fixture + " threshold " + threshold);
      std::vector<std::string> common = {"--trial", testing::FixturePath(fixture).string(), "--rule",
                                         "CustomGradientRule", "--param", "threshold=" + threshold, "--keep-going"};
      if (fixture == "pt_run_partial") common.insert(common.end(), {"--end-step", "9"});  // training still runs
      auto with = [&](std::vector<std::string> extra) {
        extra.insert(extra.end(), common.begin(), common.end());
        return extra;
      };
      testing::TempDir s3_out, local_out, cpp_out;
      const ProcessResult s3 = Run(s3_out, with({"--python-rule", RuleUri("custom_gradient_rule.py")}));
      const ProcessResult local =
          Run(local_out, with({"--python-rule", (kRules / "custom_gradient_rule.py").string()}));
      const ProcessResult cpp = Run(cpp_out, with({"--plugin", LITMUS_CUSTOM_RULE_PLUGIN}));
      ASSERT_EQ(cpp.exit_code == 0 || cpp.exit_code == 1, true) << cpp.err;
      EXPECT_EQ(s3.exit_code, cpp.exit_code) << s3.err;
      EXPECT_EQ(local.exit_code, cpp.exit_code) << local.err;
      EXPECT_EQ(FiredSteps(s3_out.path()), FiredSteps(cpp_out.path()));
      EXPECT_EQ(FiredSteps(s3_out.path()), FiredSteps(local_out.path()));
    }
  }
}

TEST_F(S3PythonRule, InProcessToo) {
  testing::TempDir out;
  const ProcessResult result =
      Run(out, {"--trial", testing::FixturePath("pt_exploding").string(), "--isolation", "none", "--python-rule",
                RuleUri("custom_gradient_rule.py"), "--rule", "CustomGradientRule", "--param", "threshold=10"});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(FiredSteps(out.path()), std::vector<int64_t>{4});
}

// SageMaker's form: RuleParameters with source_s3_uri and rule_to_invoke, the trial in S3_PATH.
TEST_F(S3PythonRule, EnvironmentFormOfTheContract) {
  testing::TempDir out;
  const nlohmann::json params = {{"source_s3_uri", RuleUri("custom_gradient_rule.py")},
                                 {"rule_to_invoke", "CustomGradientRule"},
                                 {"threshold", "10.0"}};
  auto env = Env();
  env.emplace_back("LITMUS_RULE_PARAMETERS", params.dump());
  env.emplace_back("S3_PATH", std::string("s3://") + kBucket + "/fixtures/pt_exploding");
  const ProcessResult result = RunProcess(LitmusRunArgs(out.path(), {}), env);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(FiredSteps(out.path()), std::vector<int64_t>{4});
  ExpectNoCopyLeft();
  // The rule report names the URI the job was given, not the local copy.
  const nlohmann::json report =
      testing::ReadJson(out.path() / "rule-reports" / "CustomGradientRule.json");
  EXPECT_NE(report.dump().find("source_s3_uri:" + RuleUri("custom_gradient_rule.py")), std::string::npos)
      << report.dump();
  EXPECT_EQ(report.dump().find(tmp_.path().string()), std::string::npos) << report.dump();
  EXPECT_EQ(report.dump().find("source_file"), std::string::npos) << report.dump();

  // The same in a YAML job file (a rule's parameters hold the contract's keys).
  testing::TempDir yaml_out;
  yaml_out.WriteFile("job.yaml", "trial: " + testing::FixturePath("pt_exploding").string() +
                                     "\nrules:\n  - rule: CustomGradientRule\n    parameters: {source_s3_uri: \"" +
                                     RuleUri("custom_gradient_rule.py") + "\", threshold: \"10\"}\n");
  const ProcessResult from_yaml = Run(yaml_out, {"--config", (yaml_out.path() / "job.yaml").string()});
  EXPECT_EQ(from_yaml.exit_code, 1) << from_yaml.err;
  EXPECT_EQ(FiredSteps(yaml_out.path()), std::vector<int64_t>{4});
}

TEST_F(S3PythonRule, ErrorsReadAsForTheLocalFileAndNameTheUri) {
  testing::TempDir crash_out, local_out;
  const std::vector<std::string> crash = {"--trial", testing::FixturePath("pt_run_complete").string(), "--rule",
                                          "Crashes"};
  std::vector<std::string> s3_args = crash, local_args = crash;
  s3_args.insert(s3_args.end(), {"--python-rule", RuleUri("raising_rules.py")});
  local_args.insert(local_args.end(), {"--python-rule", (kRules / "raising_rules.py").string()});
  const ProcessResult s3 = Run(crash_out, s3_args);
  const ProcessResult local = Run(local_out, local_args);
  EXPECT_EQ(s3.exit_code, 3) << s3.err;
  EXPECT_EQ(s3.exit_code, local.exit_code);
  const std::string details = testing::ReadJson(crash_out.path() / "status.json")["StatusDetails"];
  EXPECT_EQ(details, testing::ReadJson(local_out.path() / "status.json")["StatusDetails"].get<std::string>());
  EXPECT_NE(details.find("raising_rules.py:"), std::string::npos) << details;
  EXPECT_NE(details.find("in invoke_at_step: return 1 / 0"), std::string::npos) << details;

  // A file that does not compile: the message names the URI, never the local copy.
  testing::TempDir syntax_out;
  const ProcessResult syntax = Run(syntax_out, {"--trial", testing::FixturePath("pt_run_complete").string(),
                                                "--python-rule", RuleUri("syntax_error_rule.py"), "--rule", "R"});
  EXPECT_EQ(syntax.exit_code, 2) << syntax.err;
  EXPECT_NE(syntax.err.find("SyntaxError"), std::string::npos) << syntax.err;
  EXPECT_EQ(syntax.err.find(tmp_.path().string()), std::string::npos) << syntax.err;
  // A class the file does not have.
  testing::TempDir class_out;
  const ProcessResult no_class = Run(class_out, {"--trial", testing::FixturePath("pt_run_complete").string(),
                                                 "--python-rule", RuleUri("raising_rules.py"), "--rule", "Nope"});
  EXPECT_EQ(no_class.exit_code, 2) << no_class.err;
  EXPECT_NE(no_class.err.find(RuleUri("raising_rules.py") + " has no class Nope"), std::string::npos) << no_class.err;
}

TEST_F(S3PythonRule, MissingObjectOrBucketIsAOneLineClientError) {
  for (const std::string& uri : {RuleUri("missing.py"), std::string("s3://litmus-no-such-bucket/rule.py")}) {
    SCOPED_TRACE(uri);
    testing::TempDir out;
    const ProcessResult result = Run(out, {"--trial", testing::FixturePath("pt_exploding").string(), "--python-rule",
                                           uri, "--rule", "CustomGradientRule"});
    ExpectOneLineClientError(out, result, uri, "no such object");
  }
}

TEST_F(S3PythonRule, AccessDeniedIsAOneLineClientError) {
  testing::TempDir out;
  const std::string secret = "WRONG-SECRET-77a1";
  const ProcessResult result = Run(out,
                                   {"--trial", testing::FixturePath("pt_exploding").string(), "--python-rule",
                                    RuleUri("custom_gradient_rule.py"), "--rule", "CustomGradientRule"},
                                   secret);
  ExpectOneLineClientError(out, result, RuleUri("custom_gradient_rule.py"), "cannot read it:");
  EXPECT_NE(result.err.find("access denied"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find(secret), std::string::npos) << result.err;
}

TEST_F(S3PythonRule, UnreachableEndpointIsAOneLineClientError) {
  testing::TempDir out;
  auto env = LitmusS3Env("http://127.0.0.1:9");  // discard port: nothing listens there
  env.emplace_back("TMPDIR", tmp_.path().string());
  const std::string uri = RuleUri("custom_gradient_rule.py");
  const ProcessResult result = RunProcess(
      LitmusRunArgs(out.path(), {"--trial", testing::FixturePath("pt_exploding").string(), "--python-rule", uri,
                                 "--rule", "CustomGradientRule"}),
      env);
  ExpectOneLineClientError(out, result, uri, "cannot read it:");
  ExpectNoCopyLeft();
}

TEST_F(S3PythonRule, NotAnObjectIsRefusedBeforeTheJobStarts) {
  for (const std::string& uri : {std::string("s3://") + kBucket + "/rules/", std::string("s3://") + kBucket}) {
    SCOPED_TRACE(uri);
    testing::TempDir out;
    const ProcessResult result = Run(out, {"--trial", testing::FixturePath("pt_exploding").string(), "--python-rule",
                                           uri, "--rule", "CustomGradientRule"});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find("source_s3_uri " + uri + ": not an object"), std::string::npos) << result.err;
  }
}

}  // namespace
}  // namespace litmus
