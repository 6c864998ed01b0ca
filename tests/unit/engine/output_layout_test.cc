// Unit tests of the output layout: SageMaker's paths only inside a rule container (the contract's
// environment AND /opt/ml), LITMUS_OUTPUT_LAYOUT forcing either, and the paths of each layout.
#include "run/output_layout.h"

#include <gtest/gtest.h>

namespace litmus {
namespace {

TEST(OutputLayout, SageMakerOnlyInsideARuleContainer) {
  const auto choose = [](bool container_env, bool opt_ml) {
    auto layout = ChooseOutputLayout({.forced = std::nullopt, .rule_container_environment = container_env,
                                      .opt_ml_exists = opt_ml});
    EXPECT_TRUE(layout.ok());
    return layout.ok() ? *layout : OutputLayout::kLocal;
  };
  EXPECT_EQ(choose(true, true), OutputLayout::kSageMaker);
  EXPECT_EQ(choose(true, false), OutputLayout::kLocal);   // S3_PATH on a laptop
  EXPECT_EQ(choose(false, true), OutputLayout::kLocal);   // root on a machine that has /opt/ml
  EXPECT_EQ(choose(false, false), OutputLayout::kLocal);
}

TEST(OutputLayout, ForcedByTheEnvironment) {
  for (const char* value : {"sagemaker", "SageMaker"}) {
    auto layout = ChooseOutputLayout({.forced = value, .rule_container_environment = false, .opt_ml_exists = false});
    ASSERT_TRUE(layout.ok());
    EXPECT_EQ(*layout, OutputLayout::kSageMaker);
  }
  auto local = ChooseOutputLayout({.forced = "local", .rule_container_environment = true, .opt_ml_exists = true});
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(*local, OutputLayout::kLocal);
  auto empty = ChooseOutputLayout({.forced = "", .rule_container_environment = true, .opt_ml_exists = true});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, OutputLayout::kSageMaker);  // empty: detect
  auto bad = ChooseOutputLayout({.forced = "docker", .rule_container_environment = false, .opt_ml_exists = false});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "LITMUS_OUTPUT_LAYOUT: expected sagemaker or local, got 'docker'");
}

TEST(OutputLayout, DetectReadsTheContractEnvironment) {
  const auto env = [](std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
      auto it = vars.find(name);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  };
  // Without the contract's variables /opt/ml does not matter.
  auto layout = DetectOutputLayout(env({}));
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(*layout, OutputLayout::kLocal);
  layout = DetectOutputLayout(env({{"S3_PATH", ""}, {"LITMUS_RULE_PARAMETERS", ""}}));
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(*layout, OutputLayout::kLocal);
  layout = DetectOutputLayout(env({{"S3_PATH", "s3://b/p"}, {"LITMUS_OUTPUT_LAYOUT", "sagemaker"}}));
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(*layout, OutputLayout::kSageMaker);
}

TEST(OutputLayout, PathsOfEachLayout) {
  OutputPaths local = ResolveOutputPaths(OutputLayout::kLocal, std::nullopt, std::nullopt, std::nullopt);
  EXPECT_EQ(local.output_dir, "litmus-output");
  EXPECT_EQ(local.message_file, "litmus-output/message");
  EXPECT_EQ(local.failure_file, "litmus-output/failure");
  EXPECT_EQ(local.temp_dir, "");
  local = ResolveOutputPaths(OutputLayout::kLocal, "/out", std::nullopt, "/f");
  EXPECT_EQ(local.output_dir, "/out");
  EXPECT_EQ(local.message_file, "/out/message");
  EXPECT_EQ(local.failure_file, "/f");

  OutputPaths sm = ResolveOutputPaths(OutputLayout::kSageMaker, std::nullopt, std::nullopt, std::nullopt);
  EXPECT_EQ(sm.output_dir, "/opt/ml/processing/output/rule");
  EXPECT_EQ(sm.message_file, "/opt/ml/output/message");
  EXPECT_EQ(sm.failure_file, "/opt/ml/output/failure");
  EXPECT_EQ(sm.temp_dir, "/opt/ml/processing/output/rule/.sagemaker-ignore");
  sm = ResolveOutputPaths(OutputLayout::kSageMaker, "/out", std::nullopt, std::nullopt);
  EXPECT_EQ(sm.message_file, "/opt/ml/output/message");  // what SageMaker reads
  EXPECT_EQ(sm.temp_dir, "/out/.sagemaker-ignore");
}

}  // namespace
}  // namespace litmus
