// Loads the real plugins built in this tree (examples and the rogue gallery) with dlopen, the way
// the engine does, and drives them through the fake host: CustomGradientRule's logic in its C++
// and raw C forms, and what each gallery plugin returns. Paths come from compile definitions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "fake_host.h"

namespace {

using litmus::testing::FakeHost;
using litmus::testing::FindRule;
using litmus::testing::Floats;
using litmus::testing::View;
using ::testing::HasSubstr;

using Params = std::vector<std::pair<std::string, std::string>>;

// One loaded plugin and one instance of one of its rules.
class Driver {
 public:
  Driver(FakeHost& host, const std::string& path) : host_(host) {
    litmus_ctx ctx = host_.NewCtx();
    std::string dl_error;
    entry_status_ = litmus::testing::LoadPlugin(path, host_, &ctx, &api_, &dl_error);
    entry_error_ = dl_error.empty() ? ctx.error : dl_error;
  }
  ~Driver() {
    if (instance_ != nullptr) rule_->destroy(instance_);
  }
  litmus_status_t entry_status() const { return entry_status_; }
  const std::string& entry_error() const { return entry_error_; }
  const litmus_plugin_api_t* api() const { return api_; }

  litmus_status_t Create(std::string_view rule, const Params& params, std::string* error = nullptr) {
    rule_ = FindRule(api_, rule);
    if (rule_ == nullptr) {
      ADD_FAILURE() << "no rule " << rule;
      return LITMUS_INTERNAL;
    }
    std::vector<litmus_param_t> c_params;
    for (const auto& [key, value] : params) {
      c_params.push_back({{key.data(), key.size()}, {value.data(), value.size()}});
    }
    litmus_ctx ctx = host_.NewCtx();
    const litmus_status_t status = rule_->create(&ctx, c_params.data(), c_params.size(), &instance_);
    if (error != nullptr) *error = ctx.error_set ? ctx.error : "<no text>";
    return status;
  }
  // The host's sequence for one step: set_required_tensors (if any), then invoke_at_step.
  litmus_status_t Step(int64_t step, std::string* error = nullptr) {
    if (rule_->set_required_tensors != nullptr) {
      litmus_ctx ctx = host_.NewCtx();
      ctx.in_set_required_tensors = true;
      const litmus_status_t status = rule_->set_required_tensors(instance_, &ctx, step);
      if (status != LITMUS_OK) {
        if (error != nullptr) *error = ctx.error_set ? ctx.error : "<no text>";
        return status;
      }
    }
    litmus_ctx ctx = host_.NewCtx();
    ctx.in_invoke = true;
    const litmus_status_t status = rule_->invoke_at_step(instance_, &ctx, step);
    if (error != nullptr) *error = ctx.error_set ? ctx.error : "<no text>";
    return status;
  }

 private:
  FakeHost& host_;
  litmus_status_t entry_status_ = LITMUS_INTERNAL;
  std::string entry_error_;
  const litmus_plugin_api_t* api_ = nullptr;
  const litmus_rule_descriptor_t* rule_ = nullptr;
  litmus_rule_instance_t* instance_ = nullptr;
};

// ---- CustomGradientRule, in C++ (rule.hpp) and raw C: same behaviour

struct GradientPlugin {
  std::string path;
  std::string rule;
};
void PrintTo(const GradientPlugin& plugin, std::ostream* out) { *out << plugin.rule; }

class GradientRuleTest : public ::testing::TestWithParam<GradientPlugin> {
 protected:
  void SetUp() override {
    litmus::testing::FakeTrial& trial = host_.trials[0];
    trial.collections["gradients"] = {"gradients/w1", "gradients/w2"};
    trial.Put(0, "gradients/w1", Floats({1, -1}));
    trial.Put(0, "gradients/w2", Floats({2, -2}));
    trial.Put(0, "loss", Floats({100}));  // not a gradient: never looked at
    trial.Put(1, "gradients/w1", Floats({1, -1}));
    trial.Put(1, "gradients/w2", Floats({-11, 11}));
    trial.Put(2, "gradients/w1", Floats({std::numeric_limits<float>::quiet_NaN(), 1}));
    trial.Put(2, "gradients/w2", Floats({1, 1}));
    trial.Put(3, "gradients/w1", Floats({std::numeric_limits<float>::infinity(), 1}));
    trial.Put(3, "gradients/w2", Floats({1, 1}));
    trial.Put(4, "gradients/w1", Floats({0.1f}));  // w2 missing at step 4
    trial.Put(5, "gradients/w1", Floats({10, -10}));  // exactly the threshold: not above it
    trial.Put(5, "gradients/w2", Floats({1}));
  }
  FakeHost host_;
};

TEST_P(GradientRuleTest, FiresOnlyAboveTheThreshold) {
  Driver driver(host_, GetParam().path);
  ASSERT_EQ(driver.entry_status(), LITMUS_OK) << driver.entry_error();
  std::string error;
  ASSERT_EQ(driver.Create(GetParam().rule, {{"threshold", "10.0"}}, &error), LITMUS_OK) << error;
  EXPECT_EQ(driver.Step(0, &error), LITMUS_OK) << error;
  EXPECT_EQ(driver.Step(1, &error), LITMUS_CONDITION_MET) << error;
  EXPECT_EQ(host_.violations, 1);
  EXPECT_EQ(driver.Step(2, &error), LITMUS_OK) << "NaN never fires: " << error;
  EXPECT_EQ(driver.Step(3, &error), LITMUS_CONDITION_MET) << "inf fires: " << error;
  EXPECT_EQ(driver.Step(5, &error), LITMUS_OK) << error;
  // Required at step 1: every gradient, nothing else.
  std::vector<std::string> required;
  for (const auto& r : host_.requirements) {
    if (r.steps == std::vector<int64_t>{1}) required.push_back(r.name);
  }
  EXPECT_THAT(required, ::testing::ElementsAre("gradients/w1", "gradients/w2"));
}

TEST_P(GradientRuleTest, AMissingGradientSkipsTheStep) {
  Driver driver(host_, GetParam().path);
  ASSERT_EQ(driver.entry_status(), LITMUS_OK) << driver.entry_error();
  ASSERT_EQ(driver.Create(GetParam().rule, {{"threshold", "0.5"}}), LITMUS_OK);
  std::string error;
  EXPECT_EQ(driver.Step(4, &error), LITMUS_TENSOR_UNAVAILABLE_FOR_STEP);
  EXPECT_EQ(error, "fake host: tensor gradients/w2 not saved at step 4");
}

TEST_P(GradientRuleTest, ThresholdIsAParameter) {
  Driver driver(host_, GetParam().path);
  ASSERT_EQ(driver.entry_status(), LITMUS_OK) << driver.entry_error();
  const litmus_rule_descriptor_t* rule = FindRule(driver.api(), GetParam().rule);
  ASSERT_NE(rule, nullptr);
  ASSERT_EQ(rule->param_count, 1u);
  EXPECT_EQ(View(rule->params[0].name), "threshold");
  EXPECT_EQ(View(rule->params[0].default_value), "10.0");
  ASSERT_EQ(driver.Create(GetParam().rule, {{"threshold", "20"}}), LITMUS_OK);
  EXPECT_EQ(driver.Step(1), LITMUS_OK);
  EXPECT_EQ(driver.Step(3), LITMUS_CONDITION_MET);
}

TEST_P(GradientRuleTest, DefaultThresholdIsTen) {
  Driver driver(host_, GetParam().path);
  ASSERT_EQ(driver.entry_status(), LITMUS_OK) << driver.entry_error();
  ASSERT_EQ(driver.Create(GetParam().rule, {}), LITMUS_OK);
  EXPECT_EQ(driver.Step(5), LITMUS_OK);
  EXPECT_EQ(driver.Step(1), LITMUS_CONDITION_MET);
}

TEST_P(GradientRuleTest, RejectsAThresholdThatIsNotANumber) {
  Driver driver(host_, GetParam().path);
  ASSERT_EQ(driver.entry_status(), LITMUS_OK) << driver.entry_error();
  std::string error;
  EXPECT_EQ(driver.Create(GetParam().rule, {{"threshold", "abc"}}, &error), LITMUS_INVALID_CONFIG);
  EXPECT_EQ(error, "threshold: expected a number, got 'abc'");
}

TEST_P(GradientRuleTest, RefusesAnOlderMajorHost) {
  host_.table().abi_major = 0;
  Driver driver(host_, GetParam().path);
  EXPECT_EQ(driver.entry_status(), LITMUS_INVALID_CONFIG);
  EXPECT_THAT(driver.entry_error(), HasSubstr("needs ABI 1.3, litmus provides 0.3"));
  host_.table().abi_major = LITMUS_ABI_MAJOR;
}

#if defined(LITMUS_CUSTOM_GRADIENT_RULE_SO)
INSTANTIATE_TEST_SUITE_P(
    Examples, GradientRuleTest,
    ::testing::Values(GradientPlugin{LITMUS_CUSTOM_GRADIENT_RULE_SO, "CustomGradientRule"},
                      GradientPlugin{LITMUS_RAW_C_RULE_SO, "RawCGradientRule"}),
    [](const ::testing::TestParamInfo<GradientPlugin>& info) { return info.param.rule; });
#else
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GradientRuleTest);
#endif

// ---- The rogue gallery: what each plugin hands the host

std::string Gallery(const std::string& name) {
  return std::string(LITMUS_TEST_PLUGINS_DIR) + "/" + name + ".so";
}

TEST(Gallery, TablesWithAnotherAbiAreHandedOutUnchecked) {
  FakeHost host;
  Driver major(host, Gallery("rogue_abi_major"));
  ASSERT_EQ(major.entry_status(), LITMUS_OK);
  EXPECT_EQ(major.api()->abi_major, 2u);
  Driver minor(host, Gallery("rogue_abi_minor"));
  ASSERT_EQ(minor.entry_status(), LITMUS_OK);
  EXPECT_EQ(minor.api()->abi_major, 1u);
  EXPECT_EQ(minor.api()->abi_minor, 99u);
}

TEST(Gallery, SdkEntryRefusesAnOlderMinor) {
  FakeHost host;
  Driver driver(host, Gallery("rogue_abi_minor_sdk"));
  EXPECT_EQ(driver.entry_status(), LITMUS_INVALID_CONFIG);
  EXPECT_EQ(driver.entry_error(), "plugin rogue_abi_minor_sdk needs ABI 1.99, litmus provides 1.3");
  EXPECT_EQ(driver.api(), nullptr);
}

TEST(Gallery, NoEntrySymbol) {
  FakeHost host;
  Driver driver(host, Gallery("rogue_no_entry"));
  EXPECT_EQ(driver.entry_status(), LITMUS_INTERNAL);
  EXPECT_THAT(driver.entry_error(), HasSubstr("no litmus_plugin_entry_v1"));
}

TEST(Gallery, ExtraExportStillWorks) {
  FakeHost host;
  Driver driver(host, Gallery("rogue_extra_export"));
  ASSERT_EQ(driver.entry_status(), LITMUS_OK);
  ASSERT_EQ(driver.Create("ExtraExport", {}), LITMUS_OK);
  EXPECT_EQ(driver.Step(0), LITMUS_OK);
}

TEST(Gallery, ThrowInCreateIsCaught) {
  FakeHost host;
  Driver driver(host, Gallery("rogue_throw_in_create"));
  ASSERT_EQ(driver.entry_status(), LITMUS_OK);
  std::string error;
  EXPECT_EQ(driver.Create("ThrowInCreate", {}, &error), LITMUS_INTERNAL);
  EXPECT_EQ(error, "uncaught exception: ThrowInCreate: thrown from the constructor on purpose");
}

TEST(Gallery, ThrowInInvokeIsCaught) {
  FakeHost host;
  Driver driver(host, Gallery("rogue_throw_in_invoke"));
  ASSERT_EQ(driver.entry_status(), LITMUS_OK);
  std::string error;
  ASSERT_EQ(driver.Create("ThrowInInvoke", {{"throw_at_step", "2"}}), LITMUS_OK);
  EXPECT_EQ(driver.Step(1, &error), LITMUS_OK) << error;
  EXPECT_EQ(driver.Step(2, &error), LITMUS_INTERNAL);
  EXPECT_EQ(error, "uncaught exception: ThrowInInvoke: thrown at step 2 on purpose");
  Driver ints(host, Gallery("rogue_throw_in_invoke"));
  ASSERT_EQ(ints.Create("ThrowIntInInvoke", {{"throw_at_step", "0"}}), LITMUS_OK);
  EXPECT_EQ(ints.Step(0, &error), LITMUS_INTERNAL);
  EXPECT_EQ(error, "uncaught exception of a type not derived from std::exception");
}

TEST(Gallery, ErrorsWithoutText) {
  FakeHost host;
  Driver driver(host, Gallery("rogue_error_without_text"));
  ASSERT_EQ(driver.entry_status(), LITMUS_OK);
  std::string error;
  ASSERT_EQ(driver.Create("ErrorWithoutText", {}), LITMUS_OK);
  EXPECT_EQ(driver.Step(0, &error), LITMUS_INTERNAL);
  EXPECT_EQ(error, "<no text>");
  Driver create(host, Gallery("rogue_error_without_text"));
  EXPECT_EQ(create.Create("CreateErrorWithoutText", {}, &error), LITMUS_INVALID_CONFIG);
  EXPECT_EQ(error, "<no text>");
  Driver unknown(host, Gallery("rogue_error_without_text"));
  ASSERT_EQ(unknown.Create("UnknownStatus", {}), LITMUS_OK);
  EXPECT_EQ(unknown.Step(0, &error), 42);
  EXPECT_EQ(error, "UnknownStatus returns status 42 on purpose");
}

TEST(Gallery, InvalidParameters) {
  FakeHost host;
  Driver driver(host, Gallery("rogue_invalid_param"));
  ASSERT_EQ(driver.entry_status(), LITMUS_OK);
  std::string error;
  EXPECT_EQ(driver.Create("InvalidParam", {{"threshold", "abc"}}, &error), LITMUS_INVALID_CONFIG);
  EXPECT_EQ(error, "threshold: expected a number, got 'abc'");
  Driver required(host, Gallery("rogue_invalid_param"));
  const litmus_rule_descriptor_t* rule = FindRule(required.api(), "RequiredParam");
  ASSERT_NE(rule, nullptr);
  ASSERT_EQ(rule->param_count, 1u);
  EXPECT_EQ(rule->params[0].required, 1u);
  EXPECT_EQ(required.Create("RequiredParam", {}, &error), LITMUS_INVALID_CONFIG);
  EXPECT_EQ(error, "limit: required parameter is not set");
}

TEST(Gallery, TestRules) {
  FakeHost host;
  litmus::testing::FakeTrial& trial = host.trials[0];
  trial.collections["weights"] = {"w"};
  for (int64_t step = 0; step < 6; ++step) {
    if (step != 4) trial.Put(step, "loss", Floats({1}));
    trial.Put(step, "w", Floats({-2, 2}));
  }
  std::string error;
  Driver fire(host, Gallery("test_rules"));
  ASSERT_EQ(fire.entry_status(), LITMUS_OK);
  ASSERT_EQ(fire.Create("FireAtStep", {{"fire_at_step", "4"}, {"tensor", "loss"}}), LITMUS_OK);
  EXPECT_EQ(fire.Step(3, &error), LITMUS_OK) << error;
  EXPECT_EQ(fire.Step(4, &error), LITMUS_TENSOR_UNAVAILABLE_FOR_STEP) << error;
  EXPECT_EQ(fire.Step(5, &error), LITMUS_CONDITION_MET) << error;
  EXPECT_EQ(host.details["fired_at_step"], "5");

  Driver never(host, Gallery("test_rules"));
  ASSERT_EQ(never.Create("NeverFires", {{"collection", "weights"}}), LITMUS_OK);
  for (int64_t step = 0; step < 6; ++step) EXPECT_EQ(never.Step(step, &error), LITMUS_OK) << error;
  EXPECT_EQ(host.calls["tensor_reduction"], 6);

  Driver end(host, Gallery("test_rules"));
  ASSERT_EQ(end.Create("EndAtStep", {{"end_at_step", "2"}}), LITMUS_OK);
  EXPECT_EQ(end.Step(1), LITMUS_OK);
  EXPECT_EQ(end.Step(2, &error), LITMUS_NO_MORE_DATA);
  EXPECT_EQ(error, "EndAtStep: no more data from step 2");
}

}  // namespace
