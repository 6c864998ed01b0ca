// Tests of litmus/rule.hpp against the fake host: the registration macro and entry (ABI check,
// tables), typed parameters, exceptions becoming statuses with text, RequiredTensors, and
// struct_size honouring. The rules under test are registered in this file with LITMUS_RULE_PLUGIN,
// so this executable defines litmus_plugin_entry_v1 itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "fake_host.h"
#include "litmus/rule.hpp"

namespace {

using litmus::testing::Doubles;
using litmus::testing::FakeHost;
using litmus::testing::FindRule;
using litmus::testing::Floats;
using litmus::testing::View;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Reads nothing at construction; the tests call its parameter accessors directly.
class ParamProbe : public litmus::Rule {
 public:
  using Rule::Rule;
  bool invoke_at_step(int64_t) override { return false; }
};

// Parses `threshold` in its constructor, as CustomGradientRule does.
class StrictThreshold : public litmus::Rule {
 public:
  explicit StrictThreshold(const litmus::RuleArgs& args)
      : Rule(args), threshold_(param_float("threshold")) {}
  bool invoke_at_step(int64_t) override { return threshold_ < 0; }

 private:
  double threshold_;
};

// Throws what its `what` parameter names from invoke_at_step.
class Thrower : public litmus::Rule {
 public:
  explicit Thrower(const litmus::RuleArgs& args) : Rule(args), what_(param_string("what")) {}
  bool invoke_at_step(int64_t step) override {
    if (what_ == "tensor_unavailable_for_step") throw litmus::TensorUnavailableForStep("t", step);
    if (what_ == "tensor_unavailable") throw litmus::TensorUnavailable("t");
    if (what_ == "step_unavailable") throw litmus::StepUnavailable(step, litmus::Mode::kTrain);
    if (what_ == "not_yet") throw litmus::StepNotYetAvailable(step, litmus::Mode::kEval);
    if (what_ == "no_more_data") throw litmus::NoMoreData(step, litmus::Mode::kGlobal, 9);
    if (what_ == "invalid_config") throw litmus::InvalidConfig("bad config");
    if (what_ == "invalid_argument") throw litmus::InvalidArgument("bad argument");
    if (what_ == "invalid_worker") throw litmus::InvalidWorker("worker_7");
    if (what_ == "error") throw litmus::Error("plain error");
    if (what_ == "std") throw std::runtime_error("std error");
    if (what_ == "bad_alloc") throw std::bad_alloc();
    if (what_ == "int") throw 42;
    // Host-originated errors: passed through with the host's own text, or replaced.
    if (what_ == "host_missing_value") base_trial().tensor("a").value(step);
    if (what_ == "host_replaced") {
      try {
        base_trial().tensor("a").value(step);
      } catch (const litmus::TensorUnavailableForStep& e) {
        throw litmus::Error(std::string("replaced: ") + e.what());
      }
    }
    if (what_ == "reduction") base_trial().tensor("a").reduction_value(step, "mean");
    if (what_ == "bad_reduction") base_trial().tensor("a").reduction_value(step, "median");
    if (what_ == "log") log_warning("warned at step ", step);
    if (what_ == "has_tensor" && (!base_trial().has_tensor("a") || base_trial().has_tensor("never_saved"))) {
      throw litmus::Error("has_tensor answered wrongly");
    }
    return true;
  }

 private:
  std::string what_;
};

// Declares requirements: exact "a" at (step, step-1) and regex "^b" at step; records what
// invoke_at_step saw.
class Requirer : public litmus::Rule {
 public:
  static constexpr bool stateless = true;  // ABI 1.2 LITMUS_RULE_STATELESS
  explicit Requirer(const litmus::RuleArgs& args)
      : Rule(args), missing_(param_optional_string("missing")) {}
  void set_required_tensors(int64_t step) override {
    req_tensors().add("a", {step, step - 1});
    req_tensors().add("^b", {step}, base_trial(), /*should_match_regex=*/true);
    req_tensors().add("cb", {step}, {.reductions_only = true});  // ABI 1.2: require_tensor_ex
    if (missing_) req_tensors().add(*missing_, {step});
  }
  bool invoke_at_step(int64_t) override {
    seen_names = req_tensors().get_names();
    seen_a_steps = req_tensors().get_tensor_steps("a");
    seen_tensors = req_tensors().get().size();
    return false;
  }
  std::vector<std::string> seen_names;
  std::vector<int64_t> seen_a_steps;
  size_t seen_tensors = 0;

 private:
  std::optional<std::string> missing_;
};

// "t<i>" (built with += : GCC 12 warns falsely about "t" + std::to_string(i) at -O3).
std::string TName(int i) {
  std::string name = "t";
  name += std::to_string(i);
  return name;
}

// Requires t0..t99 at the step, then every third of them again at the step before (a name added
// twice keeps its place and gains the steps); records every name with its steps, read through a
// copy of its RequiredTensors.
class ManyRequirer : public litmus::Rule {
 public:
  using Rule::Rule;
  void set_required_tensors(int64_t step) override {
    for (int i = 0; i < 100; ++i) req_tensors().add(TName(i), {step});
    // (Steps as a vector, as smdebug's RequiredTensors.add takes a list: the same as a braced list.)
    const std::vector<int64_t> before{step - 1};
    for (int i = 0; i < 100; i += 3) req_tensors().add(TName(i), before);
  }
  // Reads through a copy made by assignment from a copy, after clearing both originals: a copy
  // answers on its own (its name index must not point into the object it was copied from).
  bool invoke_at_step(int64_t step) override {
    // The tensors handed out, and their values, share the requirement's copy of each name (no
    // string copied per tensor and step).
    const std::vector<litmus::Tensor> first = req_tensors().get();
    const std::vector<litmus::Tensor> second = req_tensors().get();
    names_shared = !first.empty() && first.size() == second.size();
    for (size_t i = 0; names_shared && i < first.size(); ++i) {
      names_shared = first[i].name().data() == second[i].name().data();
    }
    value_name_shared = !first.empty() && first[0].value(step).name().data() == first[0].name().data();
    litmus::RequiredTensors copy = req_tensors();
    litmus::RequiredTensors assigned = req_tensors();
    req_tensors().clear();
    assigned.clear();
    assigned = copy;
    copy.clear();
    seen.clear();
    for (const std::string& name : assigned.get_names()) seen.emplace_back(name, assigned.get_tensor_steps(name));
    return false;
  }
  std::vector<std::pair<std::string, std::vector<int64_t>>> seen;
  bool names_shared = false;
  bool value_name_shared = false;
};

// Requires other names, in another order, at each step (a RequiredTensors reuses the storage of
// an earlier step's: whatever that held must not show), and records what invoke sees.
class ShiftingRequirer : public litmus::Rule {
 public:
  using Rule::Rule;
  static std::vector<std::string> NamesAt(int64_t step) {
    switch (step % 5) {
      case 0: return {"a", "b1", "b2"};
      case 1: return {"a", "b1"};             // the start of the previous list
      case 2: return {"b1", "a", "cb", "b2"};  // diverges at once
      case 3: return {"b1", "a", "cb", "b2", "a"};  // "a" twice: a second step
      default: return {};
    }
  }
  void set_required_tensors(int64_t step) override {
    bool again = false;
    for (const std::string& name : NamesAt(step)) {
      req_tensors().add(name, {again && name == "a" ? step - 1 : step});
      again = again || name == "a";
    }
  }
  bool invoke_at_step(int64_t) override {
    seen.clear();
    for (const std::string& name : req_tensors().get_names()) seen.emplace_back(name, req_tensors().get_tensor_steps(name));
    empty = req_tensors().empty();
    tensors = req_tensors().get().size();
    others_refused = 0;
    for (const std::string name : {"a", "b1", "b2", "cb"}) {
      try {
        req_tensors().get_tensor_steps(name);
      } catch (const litmus::InvalidArgument&) {
        ++others_refused;
      }
    }
    return false;
  }
  std::vector<std::pair<std::string, std::vector<int64_t>>> seen;
  bool empty = false;
  size_t tensors = 0;
  int others_refused = 0;
};

// Reads a value and its properties.
class Reader : public litmus::Rule {
 public:
  using Rule::Rule;
  bool invoke_at_step(int64_t step) override {
    const litmus::TensorView v = base_trial().tensor("a").value(step);
    names = base_trial().tensor_names({.step = step});
    name_views.clear();
    for (const std::string_view name : base_trial().tensor_name_views({.step = step})) name_views.emplace_back(name);
    values.clear();
    for (const float x : v.as<float>()) values.push_back(x);
    nan_or_inf = v.count_nan_or_inf();
    shape = std::vector<int64_t>(v.shape().begin(), v.shape().end());
    mode = v.mode();
    steps = base_trial().steps();
    wrong_type_error.clear();
    try {
      v.as<double>();
    } catch (const litmus::InvalidArgument& e) {
      wrong_type_error = e.what();
    }
    return v.at_double(0) > 100;
  }
  std::vector<float> values;
  std::vector<std::string> names;       // tensor_names at the step
  std::vector<std::string> name_views;  // tensor_name_views at the step, copied during the call
  int64_t nan_or_inf = 0;
  std::vector<int64_t> shape;
  litmus::Mode mode = litmus::Mode::kGlobal;
  std::vector<int64_t> steps;
  std::string wrong_type_error;
};

// ABI 1.1: registers the action of its `action` parameter (if set) in its constructor, and fires
// from on_poll once last_step reaches `fire_at` (reporting it), or throws if `fire_at` is -2.
class Poller : public litmus::Rule {
 public:
  explicit Poller(const litmus::RuleArgs& args) : Rule(args), fire_at_(param_int("fire_at")) {
    if (const auto action = param_optional_string("action")) add_action(*action);
  }
  bool invoke_at_step(int64_t) override { return false; }
  bool on_poll(int64_t last_step) override {
    polled.push_back(last_step);
    if (fire_at_ == -2) throw litmus::InvalidArgument("poll failed");
    if (last_step < fire_at_) return false;
    report_detail("last_step", last_step);
    return true;
  }
  std::vector<int64_t> polled;

 private:
  int64_t fire_at_;
};

}  // namespace

LITMUS_RULE_PLUGIN(
    "sdk_rule_test", "0.0.1",
    LITMUS_RULE(ParamProbe, "ParamProbe", "1.0.0", "parameter accessors",
                litmus::FloatParam("f", "1.5", "a float"), litmus::IntParam("i", "7", "an int"),
                litmus::BoolParam("b", "false", "a bool"),
                litmus::StringParam("s", "None", "a string"),
                litmus::ListParam("l", "a, b ,,c", "a list"),
                litmus::ListParam("nums", "None", "numbers"),
                litmus::Required(litmus::FloatParam("req", "", "required"))),
    LITMUS_RULE(StrictThreshold, "StrictThreshold", "1.0.0", "parses threshold in create",
                litmus::FloatParam("threshold", "10.0", "limit")),
    LITMUS_RULE(Thrower, "Thrower", "1.0.0", "throws", litmus::StringParam("what", "", "what")),
    LITMUS_RULE(Requirer, "Requirer", "1.0.0", "requires",
                litmus::StringParam("missing", "None", "an exact name to require too")),
    LITMUS_RULE(ManyRequirer, "ManyRequirer", "1.0.0", "requires a hundred names"),
    LITMUS_RULE(ShiftingRequirer, "ShiftingRequirer", "1.0.0", "requires other names at each step"),
    LITMUS_RULE(Reader, "Reader", "1.0.0", "reads"),
    LITMUS_RULE(Poller, "Poller", "1.0.0", "polls and adds actions",
                litmus::IntParam("fire_at", "3", "last step at which on_poll fires"),
                litmus::StringParam("action", "None", "an action to add in the constructor")));

namespace {

class SdkRuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    litmus_ctx ctx = host_.NewCtx();
    ASSERT_EQ(litmus_plugin_entry_v1(&host_.table(), &ctx, &api_), LITMUS_OK) << ctx.error;
    ASSERT_NE(api_, nullptr);
  }

  // Creates rule `name` with parameters; returns the status and keeps the instance.
  litmus_status_t Create(std::string_view name, const std::vector<std::pair<std::string, std::string>>& params,
                         litmus_ctx* ctx) {
    rule_ = FindRule(api_, name);
    EXPECT_NE(rule_, nullptr) << name;
    std::vector<litmus_param_t> c_params;
    for (const auto& [key, value] : params) {
      c_params.push_back({{key.data(), key.size()}, {value.data(), value.size()}});
    }
    return rule_->create(ctx, c_params.data(), c_params.size(), &instance_);
  }
  void CreateOk(std::string_view name,
                const std::vector<std::pair<std::string, std::string>>& params = {}) {
    litmus_ctx ctx = host_.NewCtx();
    ASSERT_EQ(Create(name, params, &ctx), LITMUS_OK) << ctx.error;
    ASSERT_NE(instance_, nullptr);
  }
  template <class T>
  T& As() {
    return dynamic_cast<T&>(*reinterpret_cast<litmus::Rule*>(instance_));
  }
  litmus_status_t Invoke(int64_t step, litmus_ctx* ctx) {
    ctx->in_invoke = true;
    return rule_->invoke_at_step(instance_, ctx, step);
  }
  litmus_status_t Poll(int64_t last_step, litmus_ctx* ctx) {
    ctx->in_poll = true;
    return rule_->on_poll(instance_, ctx, last_step);
  }
  litmus_status_t SetRequired(int64_t step, litmus_ctx* ctx) {
    ctx->in_set_required_tensors = true;
    return rule_->set_required_tensors(instance_, ctx, step);
  }
  void TearDown() override {
    if (instance_ != nullptr) rule_->destroy(instance_);
  }

  FakeHost host_;
  const litmus_plugin_api_t* api_ = nullptr;
  const litmus_rule_descriptor_t* rule_ = nullptr;
  litmus_rule_instance_t* instance_ = nullptr;
};

// ---- Entry and tables

TEST_F(SdkRuleTest, TablesDescribeEveryRule) {
  EXPECT_EQ(api_->struct_size, sizeof(litmus_plugin_api_t));
  EXPECT_EQ(api_->abi_major, static_cast<uint32_t>(LITMUS_ABI_MAJOR));
  EXPECT_EQ(api_->abi_minor, static_cast<uint32_t>(LITMUS_ABI_MINOR));
  EXPECT_EQ(View(api_->plugin_name), "sdk_rule_test");
  EXPECT_EQ(View(api_->plugin_version), "0.0.1");
  ASSERT_EQ(api_->rule_count, 8u);
  const litmus_rule_descriptor_t* probe = FindRule(api_, "ParamProbe");
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->struct_size, sizeof(litmus_rule_descriptor_t));
  EXPECT_EQ(probe->param_spec_size, sizeof(litmus_param_spec_t));
  EXPECT_EQ(View(probe->description), "parameter accessors");
  ASSERT_EQ(probe->param_count, 7u);
  EXPECT_EQ(View(probe->params[0].name), "f");
  EXPECT_EQ(View(probe->params[0].type), "float");
  EXPECT_EQ(View(probe->params[0].default_value), "1.5");
  EXPECT_EQ(probe->params[0].required, 0u);
  EXPECT_EQ(View(probe->params[6].name), "req");
  EXPECT_EQ(probe->params[6].required, 1u);
  EXPECT_EQ(View(probe->params[6].default_value), "");
  // Only rules that override set_required_tensors get the optional callback.
  EXPECT_EQ(probe->set_required_tensors, nullptr);
  EXPECT_NE(FindRule(api_, "Requirer")->set_required_tensors, nullptr);
  // Likewise on_poll (ABI 1.1): only for rules that override it.
  EXPECT_EQ(probe->on_poll, nullptr);
  EXPECT_NE(FindRule(api_, "Poller")->on_poll, nullptr);
  // ABI 1.2 flags: LITMUS_RULE_STATELESS only for a rule that declares `stateless`.
  EXPECT_EQ(probe->flags, 0u);
  EXPECT_EQ(FindRule(api_, "Requirer")->flags, LITMUS_RULE_STATELESS);
  EXPECT_NE(probe->create, nullptr);
  EXPECT_NE(probe->destroy, nullptr);
  EXPECT_NE(probe->invoke_at_step, nullptr);
  EXPECT_EQ(FindRule(api_, "Reader")->param_count, 0u);
}

TEST_F(SdkRuleTest, EntryRefusesAnotherMajorWithText) {
  FakeHost other;
  other.table().abi_major = 2;
  other.table().abi_minor = 3;
  litmus_ctx ctx = other.NewCtx();
  const litmus_plugin_api_t* api = reinterpret_cast<const litmus_plugin_api_t*>(&ctx);
  EXPECT_EQ(litmus_plugin_entry_v1(&other.table(), &ctx, &api), LITMUS_INVALID_CONFIG);
  EXPECT_EQ(api, nullptr);
  EXPECT_EQ(ctx.error, "plugin sdk_rule_test needs ABI 1.3, litmus provides 2.3");
}

TEST_F(SdkRuleTest, EntryRefusesATableWithoutHeader) {
  FakeHost other;
  other.table().struct_size = 8;  // ends before abi_minor
  litmus_ctx ctx = other.NewCtx();
  const litmus_plugin_api_t* api = nullptr;
  EXPECT_EQ(litmus_plugin_entry_v1(&other.table(), &ctx, &api), LITMUS_INVALID_ARGUMENT);
  EXPECT_EQ(api, nullptr);
  EXPECT_EQ(litmus_plugin_entry_v1(nullptr, &ctx, &api), LITMUS_INVALID_ARGUMENT);
}

// ---- Parameters

TEST_F(SdkRuleTest, DefaultsApplyWhenTheHostPassesNothing) {
  CreateOk("ParamProbe", {{"req", "2"}});
  const auto& rule = As<ParamProbe>();
  EXPECT_EQ(rule.param_float("f"), 1.5);
  EXPECT_EQ(rule.param_int("i"), 7);
  EXPECT_FALSE(rule.param_bool("b"));
  EXPECT_THAT(rule.param_list("l"), ElementsAre("a", "b", "c"));
  EXPECT_EQ(rule.param_optional_string("s"), std::nullopt);
  EXPECT_FALSE(rule.has_param("s"));
  EXPECT_TRUE(rule.has_param("req"));
  EXPECT_EQ(rule.param_float("req"), 2.0);
  EXPECT_EQ(rule.rule_name(), "ParamProbe");
}

TEST_F(SdkRuleTest, FloatsParseLikePython) {
  CreateOk("ParamProbe", {{"f", " 1e-05 "}, {"i", "10.0"}, {"req", "+3"}});
  const auto& rule = As<ParamProbe>();
  EXPECT_DOUBLE_EQ(rule.param_float("f"), 1e-05);
  EXPECT_EQ(rule.param_int("i"), 10);
  EXPECT_EQ(rule.param_float("req"), 3.0);
  EXPECT_TRUE(std::isinf(*litmus::params::ParseDouble("inf")));
  EXPECT_TRUE(std::isnan(*litmus::params::ParseDouble("nan")));
  EXPECT_EQ(litmus::params::ParseDouble("1.5x"), std::nullopt);
  EXPECT_EQ(litmus::params::ParseDouble("+-1"), std::nullopt);
  EXPECT_EQ(litmus::params::ParseDouble(""), std::nullopt);
  EXPECT_EQ(litmus::params::ParseDouble("1e999"), std::nullopt);
  EXPECT_EQ(litmus::params::ParseInt("1e3"), 1000);
  EXPECT_EQ(litmus::params::ParseInt("-12"), -12);
  EXPECT_EQ(litmus::params::ParseInt("1.5"), std::nullopt);
  EXPECT_EQ(litmus::params::ParseInt("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(litmus::params::ParseInt("9.3e18"), std::nullopt);
}

TEST_F(SdkRuleTest, BadNumbersGiveNamedErrors) {
  CreateOk("ParamProbe", {{"f", "abc"}, {"i", "1.5"}, {"req", "None"}, {"nums", "3, x"}});
  const auto& rule = As<ParamProbe>();
  try {
    rule.param_float("f");
    FAIL() << "no exception";
  } catch (const litmus::InvalidConfig& e) {
    EXPECT_STREQ(e.what(), "f: expected a number, got 'abc'");
    EXPECT_EQ(e.status(), LITMUS_INVALID_CONFIG);
  }
  EXPECT_THROW(
      {
        try {
          rule.param_int("i");
        } catch (const litmus::InvalidConfig& e) {
          EXPECT_STREQ(e.what(), "i: expected an integer, got '1.5'");
          throw;
        }
      },
      litmus::InvalidConfig);
  EXPECT_THROW(
      {
        try {
          rule.param_float("req");
        } catch (const litmus::InvalidConfig& e) {
          EXPECT_STREQ(e.what(), "req: required parameter is not set");
          throw;
        }
      },
      litmus::InvalidConfig);
  EXPECT_EQ(rule.param_optional_float("req"), std::nullopt);
  EXPECT_THROW(
      {
        try {
          rule.param_int_list("nums");
        } catch (const litmus::InvalidConfig& e) {
          EXPECT_STREQ(e.what(), "nums: item 2 of '3, x': expected an integer, got 'x'");
          throw;
        }
      },
      litmus::InvalidConfig);
}

TEST_F(SdkRuleTest, BoolsAreStrict) {
  for (const auto& [text, value] : std::vector<std::pair<std::string, bool>>{
           {"True", true}, {"true", true}, {"False", false}, {"false", false}}) {
    EXPECT_EQ(litmus::params::ParseBool(text), value) << text;
  }
  for (const std::string text : {"TRUE", "1", "yes", " true", "false ", ""}) {
    EXPECT_EQ(litmus::params::ParseBool(text), std::nullopt) << text;
  }
  CreateOk("ParamProbe", {{"b", "yes"}, {"req", "1"}});
  try {
    As<ParamProbe>().param_bool("b");
    FAIL() << "no exception";
  } catch (const litmus::InvalidConfig& e) {
    EXPECT_STREQ(e.what(), "b: expected True, true, False or false, got 'yes'");
  }
}

TEST_F(SdkRuleTest, ListsAreTrimmedAndNoneIsEmpty) {
  CreateOk("ParamProbe", {{"l", " .*tanh_input, .*sigmoid_input ,"}, {"nums", "3, 0"}, {"req", "1"}});
  const auto& rule = As<ParamProbe>();
  EXPECT_THAT(rule.param_list("l"), ElementsAre(".*tanh_input", ".*sigmoid_input"));
  EXPECT_THAT(rule.param_int_list("nums"), ElementsAre(3, 0));
  EXPECT_THAT(rule.param_float_list("nums"), ElementsAre(3.0, 0.0));
  EXPECT_TRUE(litmus::params::SplitList("None").empty());
  EXPECT_TRUE(litmus::params::SplitList("  ").empty());
  EXPECT_TRUE(litmus::params::IsUnset(" None "));
  EXPECT_FALSE(litmus::params::IsUnset("none"));
}

TEST_F(SdkRuleTest, UndeclaredParameterIsARuleBug) {
  CreateOk("ParamProbe", {{"req", "1"}});
  try {
    As<ParamProbe>().param_float("treshold");
    FAIL() << "no exception";
  } catch (const litmus::InvalidConfig&) {
    FAIL() << "must not look like a user error";
  } catch (const litmus::Error& e) {
    EXPECT_EQ(e.status(), LITMUS_INTERNAL);
    EXPECT_THAT(e.what(), HasSubstr("reads parameter 'treshold' that it does not declare"));
  }
}

TEST_F(SdkRuleTest, CreateRejectsABadValueWithInvalidConfig) {
  litmus_ctx ctx = host_.NewCtx();
  EXPECT_EQ(Create("StrictThreshold", {{"threshold", "abc"}}, &ctx), LITMUS_INVALID_CONFIG);
  EXPECT_EQ(instance_, nullptr);
  EXPECT_TRUE(ctx.error_set);
  EXPECT_EQ(ctx.error, "threshold: expected a number, got 'abc'");
}

// ---- Exceptions to statuses

struct ThrowCase {
  std::string what;
  litmus_status_t status;
  std::string text;
};

TEST_F(SdkRuleTest, ExceptionsBecomeStatusesWithText) {
  host_.trials[0].Put(3, "a", Floats({1}));
  host_.trials[0].Put(6, "other", Floats({1}));  // so that step 5 is a gap, not the future
  const std::vector<ThrowCase> cases = {
      {"tensor_unavailable_for_step", LITMUS_TENSOR_UNAVAILABLE_FOR_STEP,
       "Value for tensor t is not available for step 5 with mode GLOBAL as it was not saved."},
      {"tensor_unavailable", LITMUS_TENSOR_UNAVAILABLE, "Tensor t was not saved."},
      {"step_unavailable", LITMUS_STEP_UNAVAILABLE,
       "Step 5 of mode TRAIN is not available as it was not saved"},
      {"not_yet", LITMUS_NOT_YET_AVAILABLE, "Step 5 of mode EVAL not yet available"},
      {"no_more_data", LITMUS_NO_MORE_DATA,
       "Looking for step 5 of mode GLOBAL and reached end of training. Max step available is 9"},
      {"invalid_config", LITMUS_INVALID_CONFIG, "bad config"},
      {"invalid_argument", LITMUS_INVALID_ARGUMENT, "bad argument"},
      {"invalid_worker", LITMUS_INVALID_WORKER, "Invalid Worker: worker_7"},
      {"error", LITMUS_INTERNAL, "plain error"},
      {"std", LITMUS_INTERNAL, "uncaught exception: std error"},
      {"bad_alloc", LITMUS_INTERNAL, "out of memory"},
      {"int", LITMUS_INTERNAL, "uncaught exception of a type not derived from std::exception"},
      // The host's own text stays when its status passes through unchanged...
      {"host_missing_value", LITMUS_STEP_UNAVAILABLE, "fake host: step 5 of GLOBAL not saved"},
      // ...and a rule that replaces the exception replaces the text.
      {"bad_reduction", LITMUS_INVALID_ARGUMENT,
       "unknown reduction 'median' (min, max, mean, std, variance, sum, prod, l1, l2)"},
  };
  for (const ThrowCase& c : cases) {
    SCOPED_TRACE(c.what);
    CreateOk("Thrower", {{"what", c.what}});
    litmus_ctx ctx = host_.NewCtx();
    EXPECT_EQ(Invoke(5, &ctx), c.status);
    EXPECT_TRUE(ctx.error_set);
    EXPECT_EQ(ctx.error, c.text);
    rule_->destroy(instance_);
    instance_ = nullptr;
  }
}

TEST_F(SdkRuleTest, HostStatusesMapToSmdebugExceptions) {
  host_.trials[0].Put(3, "a", Floats({1}));
  host_.trials[0].Put(4, "other", Floats({1}));
  CreateOk("Thrower", {{"what", "host_replaced"}});
  litmus_ctx ctx = host_.NewCtx();
  EXPECT_EQ(Invoke(4, &ctx), LITMUS_INTERNAL);
  EXPECT_EQ(ctx.error,
            "replaced: Value for tensor a is not available for step 4 with mode GLOBAL as it was "
            "not saved.");
  litmus_ctx later = host_.NewCtx();
  EXPECT_EQ(Invoke(50, &later), LITMUS_NOT_YET_AVAILABLE);
  EXPECT_EQ(later.error, "fake host: step 50 not yet available");
  host_.trials[0].ended = true;
  litmus_ctx ended = host_.NewCtx();
  EXPECT_EQ(Invoke(50, &ended), LITMUS_NO_MORE_DATA);
}

// has_tensor reads the host's answer without an exception (see host_calls.hpp).
TEST_F(SdkRuleTest, HasTensorAnswersForSavedAndUnsavedNames) {
  host_.trials[0].Put(3, "a", Floats({1}));
  CreateOk("Thrower", {{"what", "has_tensor"}});
  litmus_ctx ctx = host_.NewCtx();
  EXPECT_EQ(Invoke(3, &ctx), LITMUS_CONDITION_MET) << ctx.error;
}

TEST_F(SdkRuleTest, ConditionAndLogging) {
  CreateOk("Thrower", {{"what", "log"}});
  litmus_ctx ctx = host_.NewCtx();
  EXPECT_EQ(Invoke(7, &ctx), LITMUS_CONDITION_MET);
  EXPECT_FALSE(ctx.error_set);
  ASSERT_EQ(host_.logs.size(), 1u);
  EXPECT_EQ(host_.logs[0].first, LITMUS_LOG_WARNING);
  EXPECT_EQ(host_.logs[0].second, "warned at step 7");
}

// ---- Values

TEST_F(SdkRuleTest, ValuesAreTypedViews) {
  litmus::testing::FakeValue v = Floats({1, 2, std::numeric_limits<float>::infinity(), NAN});
  v.shape = {2, 2};
  host_.trials[0].Put(2, "a", v);
  host_.trials[0].steps[2].mode = LITMUS_MODE_EVAL;
  host_.trials[0].Put(3, "a", Floats({500}));
  host_.trials[0].Put(2, "b", Floats({1}));
  CreateOk("Reader");
  litmus_ctx ctx = host_.NewCtx();
  EXPECT_EQ(Invoke(2, &ctx), LITMUS_OK) << ctx.error;
  auto& rule = As<Reader>();
  EXPECT_THAT(rule.names, ElementsAre("a", "b"));
  EXPECT_EQ(rule.name_views, rule.names);
  ASSERT_EQ(rule.values.size(), 4u);
  EXPECT_EQ(rule.values[1], 2.0f);
  EXPECT_EQ(rule.nan_or_inf, 2);
  EXPECT_THAT(rule.shape, ElementsAre(2, 2));
  EXPECT_EQ(rule.mode, litmus::Mode::kEval);
  EXPECT_THAT(rule.steps, ElementsAre(2, 3));
  EXPECT_THAT(rule.wrong_type_error, HasSubstr("tensor a: as<double>() on a value of dtype 1"));
  litmus_ctx next = host_.NewCtx();
  EXPECT_EQ(Invoke(3, &next), LITMUS_CONDITION_MET) << next.error;
}

TEST(TensorView, ConvertsEveryNumericType) {
  const uint16_t halves[] = {0x3c00, 0xc000, 0x7c00, 0x0001};  // 1, -2, inf, 2^-24
  litmus_tensor_view_t raw{};
  raw.struct_size = sizeof(raw);
  raw.dtype = LITMUS_DTYPE_FLOAT16;
  raw.data = halves;
  raw.byte_size = sizeof(halves);
  raw.num_elements = 4;
  const litmus::TensorView view(raw, "h");
  EXPECT_EQ(view.at_double(0), 1.0);
  EXPECT_EQ(view.at_double(1), -2.0);
  EXPECT_TRUE(std::isinf(view.at_double(2)));
  EXPECT_EQ(view.at_double(3), std::ldexp(1.0, -24));
  EXPECT_EQ(view.count_inf(), 1);
  EXPECT_THROW(view.at_double(4), litmus::InvalidArgument);
  EXPECT_THROW(view.scalar(), litmus::InvalidArgument);

  const int64_t ints[] = {-3, 4};
  raw.dtype = LITMUS_DTYPE_INT64;
  raw.data = ints;
  raw.byte_size = sizeof(ints);
  raw.num_elements = 2;
  const litmus::TensorView int_view(raw, "i");
  EXPECT_THAT(int_view.as<int64_t>(), ElementsAre(-3, 4));
  EXPECT_EQ(int_view.at_double(0), -3.0);
  EXPECT_FALSE(int_view.any_nan_or_inf());

  const uint8_t bools[] = {0, 1};
  raw.dtype = LITMUS_DTYPE_BOOL;
  raw.data = bools;
  raw.byte_size = sizeof(bools);
  const litmus::TensorView bool_view(raw, "b");
  EXPECT_THAT(bool_view.as<uint8_t>(), ElementsAre(0, 1));
  EXPECT_EQ(bool_view.at_double(1), 1.0);

  const litmus_str_t strings[] = {{"x", 1}, {"yz", 2}};
  raw.dtype = LITMUS_DTYPE_STRING;
  raw.data = nullptr;
  raw.byte_size = 0;
  raw.strings = strings;
  const litmus::TensorView string_view(raw, "s");
  EXPECT_THAT(string_view.strings(), ElementsAre("x", "yz"));
  EXPECT_THROW(string_view.at_double(0), litmus::InvalidArgument);
}

// ---- RequiredTensors

class RequiredTensorsTest : public SdkRuleTest {
 protected:
  void SetUp() override {
    SdkRuleTest::SetUp();
    for (int64_t step = 0; step < 8; ++step) {
      host_.trials[0].Put(step, "a", Floats({1}));
      host_.trials[0].Put(step, "b2", Floats({1}));
      host_.trials[0].Put(step, "b1", Floats({1}));
      host_.trials[0].Put(step, "cb", Floats({1}));
    }
  }
};

TEST_F(RequiredTensorsTest, AddForwardsToTheHostAndRecords) {
  CreateOk("Requirer");
  litmus_ctx ctx = host_.NewCtx();
  ASSERT_EQ(SetRequired(5, &ctx), LITMUS_OK) << ctx.error;
  ASSERT_EQ(host_.requirements.size(), 3u);
  EXPECT_EQ(host_.requirements[0].name, "a");
  EXPECT_THAT(host_.requirements[0].steps, ElementsAre(5, 4));
  EXPECT_FALSE(host_.requirements[0].regex);
  EXPECT_FALSE(host_.requirements[0].reductions_only);
  EXPECT_EQ(host_.requirements[1].name, "^b");
  EXPECT_TRUE(host_.requirements[1].regex);
  // {.reductions_only = true} goes through require_tensor_ex (ABI 1.2) with its flag.
  EXPECT_EQ(host_.requirements[2].name, "cb");
  EXPECT_FALSE(host_.requirements[2].regex);
  EXPECT_TRUE(host_.requirements[2].reductions_only);
  EXPECT_EQ(host_.calls["require_tensor_ex"], 1);
  litmus_ctx invoke = host_.NewCtx();
  ASSERT_EQ(Invoke(5, &invoke), LITMUS_OK) << invoke.error;
  const auto& rule = As<Requirer>();
  // Insertion order, regex matches resolved by the host (search semantics: "cb" does not match).
  EXPECT_THAT(rule.seen_names, ElementsAre("a", "b1", "b2", "cb"));
  EXPECT_THAT(rule.seen_a_steps, ElementsAre(5, 4));
  EXPECT_EQ(rule.seen_tensors, 4u);
}

TEST_F(RequiredTensorsTest, RequirementsDeclaredAheadBelongToTheirStep) {
  CreateOk("Requirer");
  litmus_ctx a = host_.NewCtx();
  ASSERT_EQ(SetRequired(5, &a), LITMUS_OK);
  litmus_ctx b = host_.NewCtx();
  ASSERT_EQ(SetRequired(6, &b), LITMUS_OK);
  litmus_ctx c = host_.NewCtx();
  ASSERT_EQ(Invoke(5, &c), LITMUS_OK);
  EXPECT_THAT(As<Requirer>().seen_a_steps, ElementsAre(5, 4));
  litmus_ctx d = host_.NewCtx();
  ASSERT_EQ(Invoke(6, &d), LITMUS_OK);
  EXPECT_THAT(As<Requirer>().seen_a_steps, ElementsAre(6, 5));
  EXPECT_EQ(host_.requirements.size(), 6u);
}

TEST_F(RequiredTensorsTest, HundredsOfNamesKeepTheirOrderAndSteps) {
  for (int64_t step = 4; step <= 5; ++step) {
    for (int i = 0; i < 100; ++i) host_.trials[0].Put(step, TName(i), Floats({1}));
  }
  CreateOk("ManyRequirer");
  litmus_ctx ctx = host_.NewCtx();
  ASSERT_EQ(SetRequired(5, &ctx), LITMUS_OK) << ctx.error;
  litmus_ctx invoke = host_.NewCtx();
  ASSERT_EQ(Invoke(5, &invoke), LITMUS_OK) << invoke.error;
  const auto& seen = As<ManyRequirer>().seen;
  EXPECT_TRUE(As<ManyRequirer>().names_shared);
  EXPECT_TRUE(As<ManyRequirer>().value_name_shared);
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(seen[i].first, TName(i));
    EXPECT_EQ(seen[i].second, i % 3 == 0 ? std::vector<int64_t>({5, 4}) : std::vector<int64_t>({5})) << i;
  }
  // The same again without a declaration ahead (recorded inside invoke, as smdebug does).
  litmus_ctx again = host_.NewCtx();
  ASSERT_EQ(Invoke(4, &again), LITMUS_OK) << again.error;
  ASSERT_EQ(seen.size(), 100u);
  EXPECT_EQ(seen[99].first, "t99");
  EXPECT_EQ(seen[99].second, std::vector<int64_t>({4, 3}));
}

// As the runner calls a rule: each step declared one or two steps ahead, then invoked; and once
// without a declaration. Every step shows exactly its own names and steps.
TEST_F(RequiredTensorsTest, EachStepSeesOnlyItsOwnRequirements) {
  CreateOk("ShiftingRequirer");
  const auto expected = [](int64_t step) {
    std::vector<std::pair<std::string, std::vector<int64_t>>> out;
    for (const std::string& name : ShiftingRequirer::NamesAt(step)) {
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == name; });
      if (it == out.end()) {
        out.emplace_back(name, std::vector<int64_t>{step});
      } else {
        it->second.push_back(step - 1);
      }
    }
    return out;
  };
  litmus_ctx first = host_.NewCtx();
  ASSERT_EQ(SetRequired(1, &first), LITMUS_OK) << first.error;
  for (int64_t step = 1; step <= 7; ++step) {
    if (step != 5) {  // (step 5 is recorded inside invoke)
      litmus_ctx ahead = host_.NewCtx();
      ASSERT_EQ(SetRequired(step + 1 == 5 ? 6 : step + 1, &ahead), LITMUS_OK) << ahead.error;
    }
    litmus_ctx invoke = host_.NewCtx();
    ASSERT_EQ(Invoke(step, &invoke), LITMUS_OK) << invoke.error;
    const auto& rule = As<ShiftingRequirer>();
    EXPECT_EQ(rule.seen, expected(step)) << "step " << step;
    EXPECT_EQ(rule.empty, expected(step).empty()) << "step " << step;
    EXPECT_EQ(rule.tensors, expected(step).size()) << "step " << step;
    EXPECT_EQ(rule.others_refused, 4 - static_cast<int>(expected(step).size())) << "step " << step;
  }
}

TEST_F(RequiredTensorsTest, InvokeWithoutSetRequiredRecordsLikeSmdebug) {
  CreateOk("Requirer");
  litmus_ctx ctx = host_.NewCtx();
  ASSERT_EQ(Invoke(3, &ctx), LITMUS_OK) << ctx.error;
  EXPECT_THAT(As<Requirer>().seen_names, ElementsAre("a", "b1", "b2", "cb"));
  EXPECT_THAT(As<Requirer>().seen_a_steps, ElementsAre(3, 2));
  EXPECT_TRUE(host_.requirements.empty());  // require_tensor is for set_required_tensors only
  EXPECT_EQ(host_.calls["require_tensor"], 0);
}

TEST_F(RequiredTensorsTest, AnUnknownExactNameIsTensorUnavailable) {
  CreateOk("Requirer", {{"missing", "nope"}});
  litmus_ctx ctx = host_.NewCtx();
  EXPECT_EQ(SetRequired(3, &ctx), LITMUS_TENSOR_UNAVAILABLE);
  EXPECT_EQ(ctx.error, "fake host: Tensor nope was not saved.");
  litmus_ctx invoke = host_.NewCtx();
  EXPECT_EQ(Invoke(3, &invoke), LITMUS_TENSOR_UNAVAILABLE);
  EXPECT_EQ(invoke.error, "fake host: tensor nope was never saved");
}

// ---- struct_size

TEST_F(SdkRuleTest, MissingHostFunctionsAreNeverCalled) {
  // A host table that ends right before tensor_value: the functions after it exist in memory
  // (the fake's full table) but must not be read.
  FakeHost small;
  small.table().struct_size = offsetof(litmus_host_api_t, tensor_value);
  small.trials[0].Put(1, "a", Floats({1}));
  litmus_ctx entry_ctx = small.NewCtx();
  const litmus_plugin_api_t* api = nullptr;
  ASSERT_EQ(litmus_plugin_entry_v1(&small.table(), &entry_ctx, &api), LITMUS_OK);
  const litmus_rule_descriptor_t* thrower = FindRule(api, "Thrower");
  const std::string what = "reduction";
  const litmus_param_t param = {{"what", 4}, {what.data(), what.size()}};
  litmus_ctx ctx = small.NewCtx();
  litmus_rule_instance_t* instance = nullptr;
  ASSERT_EQ(thrower->create(&ctx, &param, 1, &instance), LITMUS_OK);
  litmus_ctx invoke = small.NewCtx();
  EXPECT_EQ(thrower->invoke_at_step(instance, &invoke, 1), LITMUS_INTERNAL);
  EXPECT_EQ(invoke.error, "the host does not provide tensor_reduction (host ABI 1.3)");
  EXPECT_EQ(small.calls["tensor_reduction"], 0);
  thrower->destroy(instance);

  // Restore the entry's snapshot of the full host for the other tests of this binary.
  litmus_ctx restore = host_.NewCtx();
  ASSERT_EQ(litmus_plugin_entry_v1(&host_.table(), &restore, &api), LITMUS_OK);
}

TEST_F(SdkRuleTest, AHostWithoutLogDropsLinesQuietly) {
  FakeHost small;
  small.table().struct_size = offsetof(litmus_host_api_t, log);  // set_error only
  litmus_ctx entry_ctx = small.NewCtx();
  const litmus_plugin_api_t* api = nullptr;
  ASSERT_EQ(litmus_plugin_entry_v1(&small.table(), &entry_ctx, &api), LITMUS_OK);
  const litmus_rule_descriptor_t* thrower = FindRule(api, "Thrower");
  const litmus_param_t param = {{"what", 4}, {"log", 3}};
  litmus_ctx ctx = small.NewCtx();
  litmus_rule_instance_t* instance = nullptr;
  ASSERT_EQ(thrower->create(&ctx, &param, 1, &instance), LITMUS_OK);
  litmus_ctx invoke = small.NewCtx();
  EXPECT_EQ(thrower->invoke_at_step(instance, &invoke, 1), LITMUS_CONDITION_MET);
  EXPECT_EQ(small.calls["log"], 0);
  EXPECT_TRUE(small.logs.empty());
  thrower->destroy(instance);
  litmus_ctx restore = host_.NewCtx();
  ASSERT_EQ(litmus_plugin_entry_v1(&host_.table(), &restore, &api), LITMUS_OK);
}

// ---- ABI 1.1: on_poll and add_action

TEST_F(SdkRuleTest, OnPollReachesTheRuleAndItsVerdictBecomesAStatus) {
  CreateOk("Poller", {{"fire_at", "3"}});
  litmus_ctx quiet = host_.NewCtx();
  EXPECT_EQ(Poll(-1, &quiet), LITMUS_OK);
  litmus_ctx still = host_.NewCtx();
  EXPECT_EQ(Poll(2, &still), LITMUS_OK);
  litmus_ctx met = host_.NewCtx();
  EXPECT_EQ(Poll(3, &met), LITMUS_CONDITION_MET);
  EXPECT_THAT(As<Poller>().polled, ElementsAre(-1, 2, 3));
  EXPECT_EQ(host_.details["last_step"], "3");  // reporting works inside on_poll
}

TEST_F(SdkRuleTest, AnExceptionInOnPollBecomesItsStatusWithText) {
  CreateOk("Poller", {{"fire_at", "-2"}});
  litmus_ctx ctx = host_.NewCtx();
  EXPECT_EQ(Poll(0, &ctx), LITMUS_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.error, "poll failed");
  EXPECT_EQ(rule_->on_poll(nullptr, &ctx, 0), LITMUS_INVALID_ARGUMENT);
}

TEST_F(SdkRuleTest, AddActionInTheConstructorReachesTheHost) {
  const std::string action = R"({"name": "stoptraining", "training_job_prefix": "job-1"})";
  CreateOk("Poller", {{"action", action}});
  EXPECT_THAT(host_.actions, ElementsAre(action));
  EXPECT_EQ(host_.calls["add_action"], 1);
  // Without the parameter the rule adds nothing.
  rule_->destroy(instance_);
  instance_ = nullptr;
  CreateOk("Poller");
  EXPECT_EQ(host_.calls["add_action"], 1);
}

TEST_F(SdkRuleTest, AnActionTheHostRefusesFailsCreateWithTheHostText) {
  litmus_ctx ctx = host_.NewCtx();
  EXPECT_EQ(Create("Poller", {{"action", "stoptraining"}}, &ctx), LITMUS_INVALID_ARGUMENT);
  EXPECT_EQ(ctx.error, "fake host: add_action: not a JSON object or list: stoptraining");
  EXPECT_EQ(instance_, nullptr);
}

TEST_F(SdkRuleTest, AHostWithoutAddActionFailsCreateCleanly) {
  // A 1.1 host table cut before add_action (as a 1.0 host's is): the SDK must not read past it.
  FakeHost small;
  small.table().struct_size = offsetof(litmus_host_api_t, add_action);
  litmus_ctx entry_ctx = small.NewCtx();
  const litmus_plugin_api_t* api = nullptr;
  ASSERT_EQ(litmus_plugin_entry_v1(&small.table(), &entry_ctx, &api), LITMUS_OK);
  const litmus_rule_descriptor_t* poller = FindRule(api, "Poller");
  const std::string action = R"({"name": "email", "endpoint": "a@b.cd"})";
  const litmus_param_t params[] = {{{"fire_at", 7}, {"1", 1}}, {{"action", 6}, {action.data(), action.size()}}};
  litmus_ctx ctx = small.NewCtx();
  litmus_rule_instance_t* instance = nullptr;
  EXPECT_EQ(poller->create(&ctx, params, 2, &instance), LITMUS_INTERNAL);
  EXPECT_EQ(ctx.error, "the host does not provide add_action (host ABI 1.3)");
  EXPECT_EQ(instance, nullptr);
  EXPECT_EQ(small.calls["add_action"], 0);
  litmus_ctx restore = host_.NewCtx();
  ASSERT_EQ(litmus_plugin_entry_v1(&host_.table(), &restore, &api), LITMUS_OK);
}

TEST_F(SdkRuleTest, AnOlderHostIsRefusedByAnSdk11Plugin) {
  FakeHost old;
  old.table().abi_minor = 0;
  old.table().struct_size = offsetof(litmus_host_api_t, add_action);
  litmus_ctx ctx = old.NewCtx();
  const litmus_plugin_api_t* api = nullptr;
  EXPECT_EQ(litmus_plugin_entry_v1(&old.table(), &ctx, &api), LITMUS_INVALID_CONFIG);
  EXPECT_EQ(ctx.error, "plugin sdk_rule_test needs ABI 1.3, litmus provides 1.0");
  litmus_ctx restore = host_.NewCtx();
  ASSERT_EQ(litmus_plugin_entry_v1(&host_.table(), &restore, &api), LITMUS_OK);
}

}  // namespace
