// SaveConfigMode step selection (smdebug's should_save_step), ReductionConfig validation and
// serialization, and the built-in collections.
#include <gtest/gtest.h>

#include <vector>

#include "litmus/writer/config.h"
#include "support/temp_dir.h"

namespace litmus::writer {
namespace {

using layout::Reduction;

std::vector<int64_t> SavedSteps(const SaveConfigMode& c, int64_t upto = 30) {
  std::vector<int64_t> out;
  for (int64_t s = 0; s < upto; ++s) {
    if (c.ShouldSaveStep(s)) out.push_back(s);
  }
  return out;
}

TEST(SaveConfigModeTest, DefaultIsEvery500) {
  SaveConfigMode c;
  EXPECT_EQ(c.save_interval, 500);  // smdebug's DEFAULT_SAVE_CONFIG_INTERVAL
  EXPECT_EQ(SavedSteps(c, 1001), (std::vector<int64_t>{0, 500, 1000}));
}

TEST(SaveConfigModeTest, IntervalStartEnd) {
  SaveConfigMode c;
  c.save_interval = 3;
  c.start_step = 4;
  c.end_step = 13;  // exclusive
  EXPECT_EQ(SavedSteps(c), (std::vector<int64_t>{6, 9, 12}));
}

TEST(SaveConfigModeTest, EndStepZeroMeansNoEnd) {
  SaveConfigMode c;
  c.save_interval = 10;
  c.end_step = 0;  // Python: end_step or None
  EXPECT_EQ(SavedSteps(c), (std::vector<int64_t>{0, 10, 20}));
}

TEST(SaveConfigModeTest, SaveStepsAddToTheIntervalRule) {
  // smdebug: `if save_steps and step in save_steps: True; elif in range and step % interval == 0`.
  SaveConfigMode c;
  c.save_interval = 10;
  c.save_steps = {3, 7};
  EXPECT_EQ(SavedSteps(c), (std::vector<int64_t>{0, 3, 7, 10, 20}));
  c.start_step = 5;
  EXPECT_EQ(SavedSteps(c), (std::vector<int64_t>{3, 7, 10, 20}));
}

TEST(SaveConfigModeTest, Validate) {
  SaveConfigMode c;
  EXPECT_TRUE(c.Validate().ok());
  c.save_interval = 0;
  EXPECT_EQ(c.Validate().code(), StatusCode::kInvalidArgument);
  c.save_interval = 1;
  c.start_step = -1;
  EXPECT_EQ(c.Validate().code(), StatusCode::kInvalidArgument);
  c.start_step = 0;
  c.save_steps = {-2};
  EXPECT_EQ(c.Validate().code(), StatusCode::kInvalidArgument);
}

TEST(SaveConfigTest, AllModesAndEvery) {
  const SaveConfig c = SaveConfig::Every(7);
  ASSERT_EQ(c.modes.size(), 4u);
  for (Mode m : kAllModes) EXPECT_EQ(c.modes.at(m).save_interval, 7);
  SaveConfig partial;
  partial.Set(Mode::kEval, SaveConfigMode{.save_interval = 2});
  EXPECT_EQ(partial.modes.size(), 1u);
}

TEST(ReductionConfigTest, StringInSmdebugOrder) {
  ReductionConfig c;
  c.abs_norms = {Reduction::kL1};
  c.abs_reductions = {Reduction::kMean};
  c.norms = {Reduction::kL2};
  c.reductions = {Reduction::kMin, Reduction::kVariance};
  EXPECT_EQ(c.ReductionsString(), "min,variance,l2_norm,abs_mean,abs_l1_norm");
  EXPECT_TRUE(c.Validate().ok());
  EXPECT_TRUE(c.has_reductions());
  EXPECT_EQ(ReductionConfig{}.ReductionsString(), "");
  EXPECT_FALSE(ReductionConfig{}.has_reductions());
  EXPECT_TRUE(ReductionConfig{}.save_raw_tensor);
}

TEST(ReductionConfigTest, NormsAndReductionsAreSeparate) {
  ReductionConfig c;
  c.reductions = {Reduction::kL1};
  EXPECT_EQ(c.Validate().code(), StatusCode::kInvalidArgument);
  c.reductions.clear();
  c.abs_norms = {Reduction::kMax};
  EXPECT_EQ(c.Validate().code(), StatusCode::kInvalidArgument);
}

TEST(CollectionsTest, PyTorchDefaults) {
  const auto c = DefaultCollections();
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c[0].name, "all");
  EXPECT_TRUE(c[0].include_regex.empty());
  EXPECT_EQ(c[1].name, "default");
  EXPECT_TRUE(c[1].include_regex.empty());
  EXPECT_EQ(c[2].name, "biases");
  EXPECT_EQ(c[2].include_regex, std::vector<std::string>{"^(?!gradient).*bias"});
  EXPECT_EQ(c[3].name, "weights");
  EXPECT_EQ(c[3].include_regex, std::vector<std::string>{"^(?!gradient).*weight"});
  EXPECT_EQ(c[4].name, "gradients");
  EXPECT_EQ(c[4].include_regex, std::vector<std::string>{"^gradient"});
  EXPECT_EQ(c[5].name, "losses");
  EXPECT_EQ(c[5].include_regex, std::vector<std::string>{"[Ll]oss_(?!input).*output"});
  EXPECT_FALSE(c[5].save_histogram);
  EXPECT_TRUE(c[3].save_histogram);
  EXPECT_TRUE(IsScalarCollection("losses"));
  EXPECT_TRUE(IsScalarCollection("metrics"));
  EXPECT_FALSE(IsScalarCollection("weights"));
}

}  // namespace
}  // namespace litmus::writer
