// End-to-end: the real `litmus rules` binary with the example CustomGradientRule plugin and the
// loader test plugins: listing, describing one rule, and one-line failures with exit code 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using ::testing::HasSubstr;
using testing::LitmusBinary;
using ::testing::MatchesRegex;
using testing::RunProcess;

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// No $LITMUS_PLUGIN_PATH from the caller's environment. The build tree's built-in rules may still
// be listed (the binary runs from the build tree), so the tests look for their own rules only.
const std::vector<std::pair<std::string, std::string>> kEnv = {{"LITMUS_PLUGIN_PATH", ""}};

TEST(RulesCli, ListsTheRulesOfAPlugin) {
  const auto result = RunProcess({LitmusBinary(), "rules", "--plugin", LITMUS_CUSTOM_RULE_PLUGIN}, kEnv);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_THAT(result.out, HasSubstr("CustomGradientRule"));
  EXPECT_THAT(result.out, HasSubstr("custom_gradient_rule"));
  EXPECT_THAT(result.out, HasSubstr("Fires when the mean absolute value of any gradient exceeds threshold"));
}

TEST(RulesCli, ListsRulesOfSeveralPluginsSorted) {
  const auto result = RunProcess(
      {LitmusBinary(), "rules", "--plugin", LITMUS_TEST_PLUGIN_GOOD, "--plugin", LITMUS_CUSTOM_RULE_PLUGIN}, kEnv);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const size_t custom = result.out.find("\nCustomGradientRule ");
  const size_t nlp = result.out.find("\nNLPSequenceRatio ");
  const size_t vanishing = result.out.find("\nVanishingGradient ");
  ASSERT_NE(custom, std::string::npos) << result.out;
  ASSERT_NE(nlp, std::string::npos) << result.out;
  ASSERT_NE(vanishing, std::string::npos) << result.out;
  EXPECT_LT(custom, nlp);
  EXPECT_LT(nlp, vanishing);
  EXPECT_EQ(result.out.rfind("RULE ", 0), 0u) << "a header line first";
}

TEST(RulesCli, DescribesOneRulesParameters) {
  for (const char* name : {"CustomGradientRule", "customgradientrule", "custom_gradient_rule"}) {
    const auto result = RunProcess({LitmusBinary(), "rules", name, "--plugin", LITMUS_CUSTOM_RULE_PLUGIN}, kEnv);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.out, HasSubstr("CustomGradientRule 1.0.0"));
    EXPECT_THAT(result.out, HasSubstr(LITMUS_CUSTOM_RULE_PLUGIN));
    // threshold: type float, default 10.0, with its description, on one line.
    EXPECT_THAT(result.out, MatchesRegex("(.|\n)*\n +threshold +float +10\\.0 +limit for the mean absolute value of "
                                         "each gradient\n(.|\n)*"))
        << result.out;
  }
  // The NAME may also come before the option.
  const auto result =
      RunProcess({LitmusBinary(), "rules", "--plugin", LITMUS_TEST_PLUGIN_GOOD, "StalledTrainingRule"}, kEnv);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, MatchesRegex("(.|\n)*\n +threshold +int +required +seconds without new data\n(.|\n)*"))
      << result.out;
}

TEST(RulesCli, UnknownRuleListsTheAvailableOnes) {
  const auto result = RunProcess({LitmusBinary(), "rules", "Nope", "--plugin", LITMUS_TEST_PLUGIN_GOOD}, kEnv);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(Lines(result.err), 1) << result.err;
  EXPECT_EQ(result.err.rfind("litmus: error: unknown rule 'Nope'; available rules: ", 0), 0u) << result.err;
  for (const char* name : {"NLPSequenceRatio, ", "StalledTrainingRule, ", "VanishingGradient"}) {
    EXPECT_THAT(result.err, HasSubstr(name));
  }
}

TEST(RulesCli, UnknownRuleSuggestsTheClosestName) {
  for (const char* typo : {"CustomGradientRul", "custom_gradiant_rule", "customgradient"}) {
    const auto result = RunProcess({LitmusBinary(), "rules", typo, "--plugin", LITMUS_CUSTOM_RULE_PLUGIN}, kEnv);
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(Lines(result.err), 1) << result.err;
    EXPECT_EQ(result.err.rfind("litmus: error: unknown rule '" + std::string(typo) +
                                   "'; did you mean CustomGradientRule? available rules: ",
                               0),
              0u)
        << result.err;
  }
}

TEST(RulesCli, PluginThatCannotLoadIsAClientError) {
  const auto result = RunProcess({LitmusBinary(), "rules", "--plugin", LITMUS_TEST_PLUGIN_MINOR}, kEnv);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(Lines(result.err), 1);
  EXPECT_THAT(result.err, HasSubstr("needs ABI 1.99, litmus provides 1.3"));
  EXPECT_EQ(result.out, "");
}

TEST(RulesCli, PluginFolders) {
  testing::TempDir dir;
  std::filesystem::copy_file(LITMUS_CUSTOM_RULE_PLUGIN, dir.path() / "custom.so");
  auto result = RunProcess({LitmusBinary(), "rules", "--plugin-dir", dir.str()}, kEnv);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("CustomGradientRule"));
  // The same through $LITMUS_PLUGIN_PATH.
  result = RunProcess({LitmusBinary(), "rules", "CustomGradientRule"}, {{"LITMUS_PLUGIN_PATH", dir.str()}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("threshold"));

  result = RunProcess({LitmusBinary(), "rules", "--plugin-dir", (dir.path() / "missing").string()}, kEnv);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("plugin folder " + (dir.path() / "missing").string() + " does not exist"));
}

}  // namespace
}  // namespace litmus
