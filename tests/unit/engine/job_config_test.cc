// Unit tests of BuildJobConfig: precedence command line > environment > YAML, key by key;
// runner keys and their aliases; limits; clear one-line errors.
#include "run/job_config.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace litmus {
namespace {

GetEnvFn Env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(JobConfig, CommandLineOnly) {
  RunCommandLine cli;
  cli.trial = "/t";
  cli.rule = "VanishingGradient";
  cli.params = {"threshold=0.5", "start-step=3", "end_step=10"};
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig job, BuildJobConfig(cli, Env({})));
  EXPECT_EQ(job.trial, "/t");
  ASSERT_EQ(job.rules.size(), 1u);
  const RuleJobConfig& r = job.rules[0];
  EXPECT_EQ(r.rule, "VanishingGradient");
  EXPECT_EQ(r.configuration_name, "");  // the runner names it after the resolved rule class
  EXPECT_EQ(r.start_step, 3);
  EXPECT_EQ(r.end_step, 10);
  EXPECT_EQ(r.parameters.at("threshold"), "0.5");
  EXPECT_FALSE(r.parameters.count("rule_to_invoke"));
  // Outside a SageMaker rule container: ./litmus-output, message and failure inside it.
  EXPECT_EQ(job.output_layout, OutputLayout::kLocal);
  EXPECT_EQ(job.output_dir, "litmus-output");
  EXPECT_EQ(job.message_file, "litmus-output/message");
  EXPECT_EQ(job.failure_file, "litmus-output/failure");
  EXPECT_EQ(job.temp_dir, "");
  EXPECT_EQ(job.poll_interval_ms, 1000);
  EXPECT_EQ(job.progress_interval_s, 30);
  EXPECT_FALSE(job.allow_unknown_params);
  EXPECT_EQ(job.rule_batch_steps, 16);
}

// The output paths follow the layout; explicit ones are kept.
TEST(JobConfig, OutputPathsFollowTheLayout) {
  RunCommandLine cli;
  cli.trial = "/t";
  cli.rule = "VanishingGradient";
  cli.output_dir = "/out";
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig local, BuildJobConfig(cli, Env({})));
  EXPECT_EQ(local.message_file, "/out/message");
  EXPECT_EQ(local.failure_file, "/out/failure");
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig sm, BuildJobConfig(cli, Env({{"LITMUS_OUTPUT_LAYOUT", "sagemaker"}})));
  EXPECT_EQ(sm.output_layout, OutputLayout::kSageMaker);
  EXPECT_EQ(sm.output_dir, "/out");
  EXPECT_EQ(sm.message_file, "/opt/ml/output/message");
  EXPECT_EQ(sm.failure_file, "/opt/ml/output/failure");
  EXPECT_EQ(sm.temp_dir, "/out/.sagemaker-ignore");
  auto bad = BuildJobConfig(cli, Env({{"LITMUS_OUTPUT_LAYOUT", "docker"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("LITMUS_OUTPUT_LAYOUT"), std::string::npos);
  // The fallback reporting that error still has paths (the local layout's).
  EXPECT_EQ(FallbackJobConfig(cli, Env({{"LITMUS_OUTPUT_LAYOUT", "docker"}})).message_file, "/out/message");
}

TEST(JobConfig, AllowUnknownParamsAndProgressInterval) {
  testing::TempDir dir;
  dir.WriteFile("job.yaml", "trial: /t\nallow_unknown_params: true\nrules: [{rule: AllZero}]\n");
  RunCommandLine cli;
  cli.config_file = dir.str() + "/job.yaml";
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig from_yaml, BuildJobConfig(cli, Env({{"LITMUS_PROGRESS_INTERVAL_S", "0.5"}})));
  EXPECT_TRUE(from_yaml.allow_unknown_params);
  EXPECT_EQ(from_yaml.progress_interval_s, 0.5);
  RunCommandLine flag;
  flag.trial = "/t";
  flag.rule = "AllZero";
  flag.allow_unknown_params = true;
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig from_flag, BuildJobConfig(flag, Env({})));
  EXPECT_TRUE(from_flag.allow_unknown_params);
  for (const char* bad : {"0", "-1", "soon", "5s"}) {
    auto job = BuildJobConfig(flag, Env({{"LITMUS_PROGRESS_INTERVAL_S", bad}}));
    ASSERT_FALSE(job.ok()) << bad;
    EXPECT_NE(job.status().message().find("LITMUS_PROGRESS_INTERVAL_S"), std::string::npos);
  }
}

TEST(JobConfig, PrecedenceKeyByKey) {
  testing::TempDir dir;
  dir.WriteFile("job.yaml", R"(
trial: /yaml-trial
output_dir: /yaml-out
rules:
  - name: my-rule
    rule: ExplodingTensor
    parameters:
      a: yaml
      b: yaml
      c: yaml
)");
  RunCommandLine cli;
  cli.config_file = dir.str() + "/job.yaml";
  cli.params = {"c=cli"};
  auto env = Env({{"LITMUS_RULE_PARAMETERS", R"({"b": "env", "c": "env"})"}, {"S3_PATH", "/env-trial"}});
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig job, BuildJobConfig(cli, env));
  EXPECT_EQ(job.trial, "/env-trial");  // S3_PATH beats YAML
  EXPECT_EQ(job.output_dir, "/yaml-out");
  ASSERT_EQ(job.rules.size(), 1u);
  EXPECT_EQ(job.rules[0].configuration_name, "my-rule");
  EXPECT_EQ(job.rules[0].rule, "ExplodingTensor");
  EXPECT_EQ(job.rules[0].parameters.at("a"), "yaml");
  EXPECT_EQ(job.rules[0].parameters.at("b"), "env");
  EXPECT_EQ(job.rules[0].parameters.at("c"), "cli");

  cli.trial = "/cli-trial";
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig job2, BuildJobConfig(cli, env));
  EXPECT_EQ(job2.trial, "/cli-trial");
}

TEST(JobConfig, SeveralRulesFromYaml) {
  testing::TempDir dir;
  dir.WriteFile("job.yaml", R"(
trial: /t
start_step: 5
DebugRuleConfigurations:
  - RuleConfigurationName: vg
    RuleParameters: {rule_to_invoke: VanishingGradient, threshold: "1e-7"}
  - RuleConfigurationName: et
    RuleParameters: {rule_to_invoke: ExplodingTensor, start_step: "7"}
)");
  RunCommandLine cli;
  cli.config_file = dir.str() + "/job.yaml";
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig job, BuildJobConfig(cli, Env({})));
  ASSERT_EQ(job.rules.size(), 2u);
  EXPECT_EQ(job.rules[0].rule, "VanishingGradient");
  EXPECT_EQ(job.rules[0].start_step, 5);
  EXPECT_EQ(job.rules[1].rule, "ExplodingTensor");
  EXPECT_EQ(job.rules[1].start_step, 7);

  cli.rule = "AllZero";
  auto conflict = BuildJobConfig(cli, Env({}));
  ASSERT_FALSE(conflict.ok());
  EXPECT_NE(conflict.status().message().find("cannot be combined"), std::string::npos);
}

TEST(JobConfig, OtherTrialsAndRunnerKeys) {
  RunCommandLine cli;
  cli.trial = "/t";
  auto env = Env({{"LITMUS_RULE_PARAMETERS",
                   R"({"rule_to_invoke": "SimilarAcrossRuns", "other_trial_1": "/b", "other_trial_0": "/a",
                       "other-trials-paths": "/c;/d", "action_json": "[]", "logging-level": "DEBUG"})"}});
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig job, BuildJobConfig(cli, env));
  ASSERT_EQ(job.rules.size(), 1u);
  EXPECT_EQ(job.rules[0].rule, "SimilarAcrossRuns");
  EXPECT_EQ(job.rules[0].other_trials, (std::vector<std::string>{"/a", "/b", "/c", "/d"}));
  EXPECT_EQ(job.rules[0].action_json, "[]");
  EXPECT_EQ(job.logging_level, "DEBUG");
  EXPECT_TRUE(job.rules[0].parameters.empty());
}

// A rule with a source_s3_uri is written in Python: python_rule_host.so's PythonRule runs it, the
// class keeps its name, and the rule's own parameters (start/end step included, for constructors
// that take them) travel as one JSON object.
TEST(JobConfig, PythonRuleRunsInTheHost) {
  testing::TempDir dir;
  dir.WriteFile("rule.py", "class R: pass\n");
  dir.WriteFile("python_rule_host.so", "");
  setenv("LITMUS_PYTHON_RULE_HOST", (dir.path() / "python_rule_host.so").c_str(), 1);
  RunCommandLine cli;
  cli.trial = "/t";
  cli.rule = "MyRule";
  cli.python_rule = (dir.path() / "rule.py").string();
  cli.params = {"threshold=0.5", "start_step=2"};
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig job, BuildJobConfig(cli, Env({})));
  ASSERT_EQ(job.rules.size(), 1u);
  const RuleJobConfig& r = job.rules[0];
  EXPECT_EQ(r.rule, "MyRule");
  EXPECT_EQ(r.plugin_rule, "PythonRule");
  EXPECT_EQ(r.plugin, (dir.path() / "python_rule_host.so").string());
  EXPECT_EQ(r.start_step, 2);
  EXPECT_EQ(r.parameters, (ParameterMap{{"source_s3_uri", (dir.path() / "rule.py").string()},
                                        {"rule_to_invoke", "MyRule"},
                                        {"rule_parameters", R"({"start_step":"2","threshold":"0.5"})"}}));

  // The env form: source_s3_uri and rule_to_invoke in LITMUS_RULE_PARAMETERS.
  RunCommandLine env_cli;
  env_cli.trial = "/t";
  const std::string json = R"({"rule_to_invoke": "MyRule", "source_s3_uri": ")" + (dir.path() / "rule.py").string() + R"("})";
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig from_env, BuildJobConfig(env_cli, Env({{"LITMUS_RULE_PARAMETERS", json}})));
  EXPECT_EQ(from_env.rules[0].plugin_rule, "PythonRule");
  env_cli.allow_unknown_params = true;
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig tolerant, BuildJobConfig(env_cli, Env({{"LITMUS_RULE_PARAMETERS", json}})));
  EXPECT_EQ(tolerant.rules[0].parameters.at("allow_unknown_params"), "true");

  cli.python_rule = (dir.path() / "missing.py").string();
  auto missing = BuildJobConfig(cli, Env({}));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing.py: no such Python file"), std::string::npos);

  // An s3:// source keeps its URI (the runner fetches it at job start, run/rule_source.h); one
  // that names no object is refused here.
  cli.python_rule = "s3://bucket/rules/rule.py";
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig from_s3, BuildJobConfig(cli, Env({})));
  EXPECT_EQ(from_s3.rules[0].parameters.at("source_s3_uri"), "s3://bucket/rules/rule.py");
  EXPECT_EQ(from_s3.rules[0].plugin_rule, "PythonRule");
  for (const std::string bad : {"s3://bucket/rules/", "s3://bucket", "s3://Bad_Bucket/rule.py"}) {
    cli.python_rule = bad;
    auto refused = BuildJobConfig(cli, Env({}));
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(refused.status().message().find("source_s3_uri " + bad), std::string::npos) << refused.status().message();
  }
  setenv("LITMUS_PYTHON_RULE_HOST", (dir.path() / "no_host.so").c_str(), 1);
  cli.python_rule = (dir.path() / "rule.py").string();
  auto no_host = BuildJobConfig(cli, Env({}));
  ASSERT_FALSE(no_host.ok());
  EXPECT_NE(no_host.status().message().find("Python rules need python_rule_host.so"), std::string::npos);
  unsetenv("LITMUS_PYTHON_RULE_HOST");
}

// A key given twice on the command line, or with different values by two sources: the later /
// higher-precedence value wins and one note names the key and both values.
TEST(JobConfig, RepeatedKeysKeepTheWinningValueWithOneNote) {
  testing::TempDir dir;
  dir.WriteFile("job.yaml", R"(
trial: /t
start_step: 1
rules:
  - rule: ExplodingTensor
    parameters: {start_step: "2", a: "yaml", b: "same", c: "yaml"}
)");
  RunCommandLine cli;
  cli.config_file = dir.str() + "/job.yaml";
  cli.params = {"threshold=0.1", "threshold=0.5", "c=cli", "end-step=9", "b=same"};
  cli.end_step = 8;
  auto env = Env({{"LITMUS_RULE_PARAMETERS", R"({"a": "env", "b": "same"})"}});
  std::vector<std::string> notes;
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig job, BuildJobConfig(cli, env, &notes));
  ASSERT_EQ(job.rules.size(), 1u);
  const RuleJobConfig& r = job.rules[0];
  EXPECT_EQ(r.parameters.at("threshold"), "0.5");
  EXPECT_EQ(r.parameters.at("a"), "env");
  EXPECT_EQ(r.parameters.at("c"), "cli");
  EXPECT_EQ(r.start_step, 2);  // the rule's own value over the job-wide default: no note
  EXPECT_EQ(r.end_step, 8);
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "--param threshold given twice ('0.1', then '0.5'); using '0.5'",
                       "--param end_step='9' and --end-step '8' both given; using '8'",
                       "parameter a set by the config file ('yaml') and LITMUS_RULE_PARAMETERS ('env'); using 'env'",
                       "parameter c set by the config file ('yaml') and the command line ('cli'); using 'cli'"}));
}

// What a configuration error is reported with: as much of the job as can be known.
TEST(JobConfig, FallbackForReportingAConfigurationError) {
  testing::TempDir dir;
  dir.WriteFile("dup.yaml", R"(
trial: /t
output_dir: /yaml-out
failure_file: /yaml-failure
rules:
  - {name: same, rule: tree_depth}
  - {name: same, rule: AllZero}
)");
  RunCommandLine cli;
  cli.config_file = dir.str() + "/dup.yaml";
  cli.output_dir = "/cli-out";
  cli.plugin_files = {"/p.so"};
  ASSERT_FALSE(BuildJobConfig(cli, Env({})).ok());
  JobConfig job = FallbackJobConfig(cli, Env({}));
  EXPECT_EQ(job.output_dir, "/cli-out");
  EXPECT_EQ(job.failure_file, "/yaml-failure");
  EXPECT_EQ(job.message_file, "/cli-out/message");
  EXPECT_EQ(job.plugin_files, std::vector<std::string>{"/p.so"});
  ASSERT_EQ(job.rules.size(), 2u);
  EXPECT_EQ(job.rules[0].configuration_name, "same");
  EXPECT_EQ(job.rules[0].rule, "tree_depth");
  EXPECT_EQ(job.rules[1].rule, "AllZero");

  // An unreadable config file and a malformed --param: the command line's rule, default paths.
  RunCommandLine bad;
  bad.config_file = dir.str() + "/missing.yaml";
  bad.rule = "tree_depth";
  bad.params = {"depth"};
  ASSERT_FALSE(BuildJobConfig(bad, Env({})).ok());
  job = FallbackJobConfig(bad, Env({}));
  EXPECT_EQ(job.output_dir, "litmus-output");
  ASSERT_EQ(job.rules.size(), 1u);
  EXPECT_EQ(job.rules[0].rule, "tree_depth");
  EXPECT_EQ(job.rules[0].configuration_name, "");

  // No rule anywhere: none.
  EXPECT_TRUE(FallbackJobConfig(RunCommandLine{}, Env({})).rules.empty());
  // The environment's rule_to_invoke.
  job = FallbackJobConfig(RunCommandLine{}, Env({{"LITMUS_RULE_PARAMETERS", R"({"rule_to_invoke": " AllZero "})"}}));
  ASSERT_EQ(job.rules.size(), 1u);
  EXPECT_EQ(job.rules[0].rule, "AllZero");
}

TEST(JobConfig, ClearErrors) {
  auto message = [](RunCommandLine cli, std::map<std::string, std::string> env = {}) {
    auto job = BuildJobConfig(cli, Env(env));
    EXPECT_FALSE(job.ok());
    return job.ok() ? std::string() : job.status().message();
  };
  RunCommandLine no_trial;
  no_trial.rule = "X";
  EXPECT_NE(message(no_trial).find("no trial"), std::string::npos);

  RunCommandLine no_rule;
  no_rule.trial = "/t";
  EXPECT_NE(message(no_rule).find("no rule"), std::string::npos);

  RunCommandLine bad_param = no_rule;
  bad_param.rule = "X";
  bad_param.params = {"threshold"};
  EXPECT_NE(message(bad_param).find("--param threshold: expected key=value"), std::string::npos);

  RunCommandLine bad_step = bad_param;
  bad_step.params = {"start_step=abc"};
  EXPECT_NE(message(bad_step).find("start_step: expected a non-negative integer"), std::string::npos);

  RunCommandLine long_value = bad_param;
  long_value.params = {"k=" + std::string(300, 'x')};
  EXPECT_NE(message(long_value).find("at most 256"), std::string::npos);

  RunCommandLine env_json = bad_param;
  env_json.params = {};
  EXPECT_NE(message(env_json, {{"LITMUS_RULE_PARAMETERS", "{not json"}}).find("LITMUS_RULE_PARAMETERS"),
            std::string::npos);
  EXPECT_NE(message(env_json, {{"LITMUS_RULE_PARAMETERS", R"({"threshold": 5})"}}).find("must be a string"),
            std::string::npos);

  RunCommandLine batch = bad_param;
  batch.params = {};
  for (const int64_t steps : {0, 65}) {
    batch.rule_batch_steps = steps;
    EXPECT_NE(message(batch).find("--rule-batch-steps must be between 1 and 64, got " + std::to_string(steps)),
              std::string::npos);
  }
  batch.rule_batch_steps = 64;
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig most, BuildJobConfig(batch, Env({})));
  EXPECT_EQ(most.rule_batch_steps, 64);

  RunCommandLine missing_yaml = bad_param;
  missing_yaml.params = {};
  missing_yaml.config_file = "/nonexistent/job.yaml";
  EXPECT_NE(message(missing_yaml).find("/nonexistent/job.yaml"), std::string::npos);

  testing::TempDir dir;
  dir.WriteFile("bad.yaml", "rules: [ {name: a, rule: X, parameters: {k: [1, 2]}} ]\n");
  RunCommandLine bad_yaml = missing_yaml;
  bad_yaml.config_file = dir.str() + "/bad.yaml";
  EXPECT_NE(message(bad_yaml).find("must be a string"), std::string::npos);
  dir.WriteFile("typo.yaml", "trail: /t\n");
  bad_yaml.config_file = dir.str() + "/typo.yaml";
  EXPECT_NE(message(bad_yaml).find("unknown key 'trail'"), std::string::npos);
  dir.WriteFile("broken.yaml", "rules: [\n");
  bad_yaml.config_file = dir.str() + "/broken.yaml";
  EXPECT_NE(message(bad_yaml).find("broken.yaml"), std::string::npos);
}

// rule_batch_steps from the YAML, the command line over it, and its bounds from either.
TEST(JobConfig, RuleBatchStepsFromYamlAndCommandLine) {
  testing::TempDir dir;
  dir.WriteFile("job.yaml", "trial: /t\nrule_batch_steps: 4\nrules: [ {rule: X} ]\n");
  RunCommandLine cli;
  cli.config_file = dir.str() + "/job.yaml";
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig from_yaml, BuildJobConfig(cli, Env({})));
  EXPECT_EQ(from_yaml.rule_batch_steps, 4);
  cli.rule_batch_steps = 1;
  LITMUS_ASSERT_OK_AND_ASSIGN(JobConfig from_cli, BuildJobConfig(cli, Env({})));
  EXPECT_EQ(from_cli.rule_batch_steps, 1);
  dir.WriteFile("bad.yaml", "trial: /t\nrule_batch_steps: 100\nrules: [ {rule: X} ]\n");
  RunCommandLine bad;
  bad.config_file = dir.str() + "/bad.yaml";
  const auto job = BuildJobConfig(bad, Env({}));
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("between 1 and 64, got 100"), std::string::npos) << job.status().message();
}

TEST(JobConfig, ByteSizes) {
  EXPECT_EQ(ParseByteSize("512M").value(), 512ull << 20);
  EXPECT_EQ(ParseByteSize("2G").value(), 2ull << 30);
  EXPECT_EQ(ParseByteSize("1000").value(), 1000u);
  EXPECT_FALSE(ParseByteSize("lots").ok());
  EXPECT_FALSE(ParseByteSize("5Q").ok());
}

}  // namespace
}  // namespace litmus
