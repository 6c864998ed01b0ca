// End-to-end: how `litmus run` tells its verdict (docs/run.md, "The verdict"): one table on stdout
// at the end of every run whatever the log level and exit code, a job-level status and details in
// a multi-rule status.json, a message file naming every rule that fired, progress (a log line, a
// terminal line, status.json), and one error format on stderr (`litmus: error: ...`).
#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>

#include "run_test_support.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::Count;
using testing::Json;
using testing::kFastEnd;
using testing::LinesStartingWith;
using testing::LitmusBinary;
using testing::ProcessResult;
using testing::ReadJson;
using testing::RunArgsInto;
using testing::RunProcess;

std::string Trial() { return testing::FixturePath("pt_exploding").string(); }

// With --logging-level warning a firing run logs nothing, and the verdict is still on stdout.
TEST(RunVerdict, TableOnStdoutWhateverTheLogLevel) {
  testing::TempDir out;
  const ProcessResult result =
      RunProcess(RunArgsInto(out.path(), {"--trial", Trial(), "--plugin", LITMUS_CUSTOM_RULE_PLUGIN, "--rule",
                                          "CustomGradientRule", "--param", "threshold=10", "--logging-level", "warning"}),
                 kFastEnd);
  ASSERT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(result.err, "");
  const auto header = LinesStartingWith(result.out, "rule ");
  ASSERT_EQ(header.size(), 1u) << result.out;
  for (const char* column : {"status", "first firing", "firings", "datapoints", "time"}) {
    EXPECT_NE(header[0].find(column), std::string::npos) << column << "\n" << result.out;
  }
  const auto row = LinesStartingWith(result.out, "CustomGradientRule ");
  ASSERT_EQ(row.size(), 1u) << result.out;
  // rule, status, first firing 4, 1 firing, 5 datapoints (steps 0..4), time.
  EXPECT_NE(row[0].find("IssuesFound"), std::string::npos) << row[0];
  std::istringstream fields(row[0]);
  std::string rule, status, first, firings, datapoints, time;
  fields >> rule >> status >> first >> firings >> datapoints >> time;
  EXPECT_EQ(first, "4");
  EXPECT_EQ(firings, "1");
  EXPECT_EQ(datapoints, "5");
  EXPECT_EQ(time.back(), 's');
  EXPECT_EQ(Count(result.out, "\n"), 2u) << "nothing but the table on stdout:\n" << result.out;
}

// Errors found at setup show the rules the job names, as Error.
TEST(RunVerdict, TableAlsoOnSetupErrors) {
  testing::TempDir out;
  ProcessResult result = RunProcess(RunArgsInto(out.path(), {"--trial", Trial(), "--plugin", LITMUS_CUSTOM_RULE_PLUGIN,
                                                             "--rule", "CustomGradientRule", "--param", "threshold=abc"}),
                                    kFastEnd);
  ASSERT_EQ(result.exit_code, 2) << result.err;
  ASSERT_EQ(LinesStartingWith(result.out, "CustomGradientRule ").size(), 1u) << result.out;
  EXPECT_NE(result.out.find("Error"), std::string::npos) << result.out;
  // A configuration that cannot be built, too.
  result = RunProcess(RunArgsInto(out.path(), {"--trial", Trial(), "--plugin", LITMUS_CUSTOM_RULE_PLUGIN, "--rule",
                                               "custom_gradient_rule", "--param", "depth"}),
                      kFastEnd);
  ASSERT_EQ(result.exit_code, 2) << result.err;
  ASSERT_EQ(LinesStartingWith(result.out, "CustomGradientRule ").size(), 1u) << result.out;
}

// Several rules: the top level of status.json is the job's (status, details, rule, step), and
// the message file names every rule that fired.
TEST(RunVerdict, MultiRuleStatusAndMessageNameEveryFiring) {
  testing::TempDir out;
  out.WriteFile("job.yaml", "trial: " + Trial() + "\nplugins: [" + std::string(LITMUS_CUSTOM_RULE_PLUGIN) + ", " +
                                LITMUS_TEST_RULES_PLUGIN + "]\nrules:\n" +
                                "  - name: gradients-too-big\n    rule: CustomGradientRule\n"
                                "    parameters: {threshold: \"10\"}\n"
                                "  - name: at-seven\n    rule: FireAtStep\n    parameters: {fire_at_step: \"7\"}\n"
                                "  - name: quiet\n    rule: NeverFires\n");
  const ProcessResult result =
      RunProcess(RunArgsInto(out.path(), {"--config", (out.path() / "job.yaml").string()}), kFastEnd);
  ASSERT_EQ(result.exit_code, 1) << result.err;
  const Json status = ReadJson(out.path() / "status.json");
  EXPECT_EQ(status["RuleEvaluationStatus"], "IssuesFound");
  EXPECT_EQ(status["StatusDetails"],
            "2 of 3 rules found issues: gradients-too-big at step 4, at-seven at step 7; 1 found no issues");
  EXPECT_EQ(status["rule"], "CustomGradientRule,FireAtStep,NeverFires");
  EXPECT_EQ(status["step"], 4);
  EXPECT_EQ(status["Progress"]["StepsEvaluated"], 16);
  EXPECT_EQ(status["Progress"]["LastStep"], 15);
  EXPECT_EQ(testing::ReadWholeFile(out.path() / "message"),
            "RuleEvaluationConditionMet: Evaluation of the rule CustomGradientRule at step 4 resulted in the condition "
            "being met; rule FireAtStep at step 7\n");
  EXPECT_EQ(LinesStartingWith(result.out, "gradients-too-big ").size(), 1u) << result.out;
  EXPECT_EQ(LinesStartingWith(result.out, "at-seven ").size(), 1u) << result.out;
  EXPECT_EQ(LinesStartingWith(result.out, "quiet ").size(), 1u) << result.out;
}

// Progress: a periodic info line when stderr is not a terminal, and status.json's Progress.
TEST(RunVerdict, ProgressIsLoggedAndRecorded) {
  testing::TempDir out;
  auto env = kFastEnd;
  env.push_back({"LITMUS_PROGRESS_INTERVAL_S", "0.000001"});
  const ProcessResult result =
      RunProcess(RunArgsInto(out.path(), {"--trial", Trial(), "--plugin", LITMUS_TEST_RULES_PLUGIN, "--rule",
                                          "NeverFires"}),
                 env);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("litmus: info: progress: "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(" steps evaluated, at step "), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find('\r'), std::string::npos) << "no terminal line when stderr is not a terminal";
  const Json status = ReadJson(out.path() / "status.json");
  EXPECT_EQ(status["Progress"]["StepsEvaluated"], 16);
  EXPECT_EQ(status["Progress"]["LastStep"], 15);
}

// On a terminal (script(1) gives the job one), the progress line is rewritten in place.
TEST(RunVerdict, ProgressLineOnATerminal) {
  if (!std::filesystem::exists("/usr/bin/script")) GTEST_SKIP() << "/usr/bin/script (util-linux) is missing";
  testing::TempDir out;
  const std::string command = LitmusBinary() + " run --output-dir " + out.str() + " --trial " + Trial() +
                              " --plugin " + LITMUS_TEST_RULES_PLUGIN + " --rule NeverFires";
  const ProcessResult result = RunProcess({"/usr/bin/script", "-qec", command, "/dev/null"}, kFastEnd);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("\rlitmus: 1 step evaluated, at step 0\033[K"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("\r\033[K"), std::string::npos) << "the line is cleared before the verdict";
  EXPECT_NE(result.out.find("NeverFires"), std::string::npos) << result.out;
}

// One error format: `litmus: error: ...` once for a fatal error, `litmus: warning: ...` for
// warnings; parse errors point at the subcommand's help.
TEST(RunVerdict, OneErrorFormat) {
  testing::TempDir out;
  ProcessResult result = RunProcess(
      RunArgsInto(out.path(), {"--trial", Trial(), "--plugin", LITMUS_CUSTOM_RULE_PLUGIN, "--rule", "NoSuchRule"}),
      kFastEnd);
  EXPECT_EQ(result.exit_code, 2);
  auto errors = LinesStartingWith(result.err, "litmus: error: ");
  ASSERT_EQ(errors.size(), 1u) << result.err;
  EXPECT_EQ(errors[0].rfind("litmus: error: ClientError: unknown rule 'NoSuchRule'", 0), 0u) << result.err;
  EXPECT_EQ(result.err.find("[error]"), std::string::npos) << result.err;
  EXPECT_EQ(Count(result.err, "unknown rule 'NoSuchRule'"), 1u) << "printed once:\n" << result.err;

  result = RunProcess({LitmusBinary(), "run", "--start-step", "abc"});
  EXPECT_EQ(result.exit_code, 2);
  errors = LinesStartingWith(result.err, "litmus: error: ");
  ASSERT_EQ(errors.size(), 1u) << result.err;
  EXPECT_NE(errors[0].find("(see litmus run --help)"), std::string::npos) << result.err;

  // A configuration error (before any rule runs): the same format, once.
  result = RunProcess(RunArgsInto(out.path(), {"--trial", Trial(), "--rule", "X", "--param", "novalue"}), kFastEnd);
  EXPECT_EQ(result.exit_code, 2);
  errors = LinesStartingWith(result.err, "litmus: error: ");
  ASSERT_EQ(errors.size(), 1u) << result.err;
  EXPECT_EQ(errors[0], "litmus: error: --param novalue: expected key=value") << result.err;

  // Warnings.
  result = RunProcess(RunArgsInto(out.path(), {"--trial", Trial(), "--plugin", LITMUS_CUSTOM_RULE_PLUGIN, "--rule",
                                               "CustomGradientRule", "--param", "threshold=1", "--param",
                                               "threshold=10"}),
                      kFastEnd);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(LinesStartingWith(result.err, "litmus: warning: --param threshold given twice").size(), 1u) << result.err;
}

}  // namespace
}  // namespace litmus
