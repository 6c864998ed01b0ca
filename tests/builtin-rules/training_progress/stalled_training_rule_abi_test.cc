// The built plugin's use of ABI 1.1 on the fake host of tests/abi: which rules have on_poll,
// StalledTrainingRule's on_poll verdicts and report, and its add_action in create.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_host.h"

namespace litmus::testing {
namespace {

using ::testing::ElementsAre;

class TrainingProgressAbiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    litmus_ctx ctx = host_.NewCtx();
    std::string dl_error;
    ASSERT_EQ(LoadPlugin(LITMUS_TRAINING_PROGRESS_PLUGIN, host_, &ctx, &api_, &dl_error), LITMUS_OK)
        << dl_error << ctx.error;
    stalled_ = FindRule(api_, "StalledTrainingRule");
    ASSERT_NE(stalled_, nullptr);
  }
  void TearDown() override {
    if (instance_ != nullptr) stalled_->destroy(instance_);
  }
  litmus_status_t Create(const std::vector<std::pair<std::string, std::string>>& params, litmus_ctx* ctx) {
    std::vector<litmus_param_t> c_params;
    for (const auto& [key, value] : params) {
      c_params.push_back({{key.data(), key.size()}, {value.data(), value.size()}});
    }
    return stalled_->create(ctx, c_params.data(), c_params.size(), &instance_);
  }
  litmus_status_t Poll(int64_t last_step) {
    litmus_ctx ctx = host_.NewCtx();
    ctx.in_poll = true;
    const litmus_status_t status = stalled_->on_poll(instance_, &ctx, last_step);
    last_error_ = ctx.error;
    return status;
  }

  FakeHost host_;
  const litmus_plugin_api_t* api_ = nullptr;
  const litmus_rule_descriptor_t* stalled_ = nullptr;
  litmus_rule_instance_t* instance_ = nullptr;
  std::string last_error_;
};

TEST_F(TrainingProgressAbiTest, OnlyStalledTrainingRulePolls) {
  EXPECT_EQ(api_->abi_minor, static_cast<uint32_t>(LITMUS_ABI_MINOR));
  EXPECT_NE(stalled_->on_poll, nullptr);
  for (const char* name : {"LossNotDecreasing", "Overfit", "Overtraining", "PoorWeightInitialization"}) {
    const litmus_rule_descriptor_t* rule = FindRule(api_, name);
    ASSERT_NE(rule, nullptr) << name;
    EXPECT_EQ(rule->on_poll, nullptr) << name;
  }
}

TEST_F(TrainingProgressAbiTest, OnPollFiresAfterTheThresholdAndReports) {
  litmus_ctx ctx = host_.NewCtx();
  ASSERT_EQ(
      Create({{"threshold", "0"}, {"stop_training_on_fire", "False"}, {"training_job_name_prefix", "None"}}, &ctx),
      LITMUS_OK)
      << ctx.error;
  EXPECT_TRUE(host_.actions.empty());
  host_.trials[0].Put(4, "loss", Floats({1}));  // the host lists step 4: progress, then quiet
  EXPECT_EQ(Poll(-1), LITMUS_CONDITION_MET) << last_error_;
  EXPECT_EQ(host_.details["last_step"], "4");
  EXPECT_TRUE(host_.details.count("seconds_since_progress"));
  EXPECT_EQ(host_.calls["steps"], 1);
}

TEST_F(TrainingProgressAbiTest, OnPollIsQuietWithinTheThreshold) {
  litmus_ctx ctx = host_.NewCtx();
  ASSERT_EQ(
      Create({{"threshold", "3600"}, {"stop_training_on_fire", "False"}, {"training_job_name_prefix", "None"}}, &ctx),
      LITMUS_OK);
  EXPECT_EQ(Poll(-1), LITMUS_OK);
  litmus_ctx invoke = host_.NewCtx();
  invoke.in_invoke = true;
  EXPECT_EQ(stalled_->invoke_at_step(instance_, &invoke, 0), LITMUS_OK);  // a step is progress, never a firing
}

TEST_F(TrainingProgressAbiTest, StopTrainingOnFireAddsTheAction) {
  litmus_ctx ctx = host_.NewCtx();
  ASSERT_EQ(
      Create({{"threshold", "1800"}, {"stop_training_on_fire", "True"}, {"training_job_name_prefix", "job-\"x"}}, &ctx),
      LITMUS_OK)
      << ctx.error;
  EXPECT_THAT(host_.actions, ElementsAre(R"({"name": "stoptraining", "training_job_prefix": "job-\"x"})"));
}

TEST_F(TrainingProgressAbiTest, StopTrainingOnFireNeedsAPrefix) {
  litmus_ctx ctx = host_.NewCtx();
  EXPECT_EQ(
      Create({{"threshold", "1800"}, {"stop_training_on_fire", "True"}, {"training_job_name_prefix", "None"}}, &ctx),
      LITMUS_INVALID_CONFIG);
  EXPECT_EQ(ctx.error, "training_job_name_prefix: required when stop_training_on_fire is True");
  EXPECT_EQ(instance_, nullptr);
}

}  // namespace
}  // namespace litmus::testing
