// RuleInstance over the raw-C probe rule of plugins/test_plugin.c (loader_good) on the
// pt_ddp_two_workers fixture: parameters and defaults, create failures, requirements, invoke
// outcomes and messages, and the report.
#include "plugin/rule_instance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "litmus/engine/trial.h"
#include "plugin/plugin_loader.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class RuleInstanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(registry_.LoadFile(LITMUS_TEST_PLUGIN_GOOD).ok());
    TrialOptions options;
    options.training_end_delay_refresh_s = 0;
    auto trial = Trial::Open(Env::Default(), testing::FixturePath("pt_ddp_two_workers").string(), options);
    ASSERT_TRUE(trial.ok()) << trial.status().ToString();
    trial_ = std::move(trial).value();
    probe_ = *registry_.FindRule("VanishingGradient");
    plugin_path_ = std::filesystem::path(LITMUS_TEST_PLUGIN_GOOD).lexically_normal().string();
  }

  StatusOr<std::unique_ptr<RuleInstance>> Create(const std::map<std::string, std::string>& params,
                                                 std::vector<std::string>* warnings = nullptr) {
    return RuleInstance::Create(*probe_, "MyProbeConfig", {trial_.get()}, params, warnings);
  }

  PluginRegistry registry_;
  std::unique_ptr<Trial> trial_;
  const LoadedRule* probe_ = nullptr;
  std::string plugin_path_;
};

TEST_F(RuleInstanceTest, RequirementsInvokeAndReport) {
  LITMUS_ASSERT_OK_AND_ASSIGN(auto rule, Create({{"fire_at_step", "7"}}));
  EXPECT_EQ(rule->configuration_name(), "MyProbeConfig");
  EXPECT_EQ(&rule->rule(), probe_);

  std::vector<TensorRequirement> reqs = {{9, "stale", {1}}};
  PluginCallResult result = rule->RequiredTensors(3, &reqs);
  ASSERT_EQ(result.status, LITMUS_OK) << result.message;
  EXPECT_EQ(result.message, "");
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].name, "gradient/Net_fc1.weight");
  EXPECT_THAT(reqs[0].steps, ElementsAre(3));
  EXPECT_EQ(reqs[1].name, "gradient/Net_fc2.weight");
  EXPECT_EQ(reqs[2].name, "CrossEntropyLoss_output_0");
  EXPECT_THAT(reqs[2].steps, ElementsAre(2, 3));
  EXPECT_EQ(reqs[2].trial, 0u);

  result = rule->Invoke(0);
  EXPECT_EQ(result.status, LITMUS_OK) << result.message;
  EXPECT_EQ(rule->report().violations, 1);
  result = rule->Invoke(7);
  EXPECT_EQ(result.status, LITMUS_CONDITION_MET) << result.message;
  EXPECT_EQ(result.message, "");
  EXPECT_EQ(rule->report().violations, 2);
  // Defaults reached create; the details hold JSON (invalid JSON became a string).
  EXPECT_EQ(rule->report().details.Json().at("threshold"), "1e-07");
  EXPECT_EQ(rule->report().details.Json().at("behavior"), "\"ok\"");
  EXPECT_EQ(rule->report().details.Json().at("rank"), "2");
  EXPECT_EQ(rule->report().details.Json().at("mode"), "[1,5]");  // global step 7 = TRAIN mode step 5

  // EVAL step: the gradient was not saved; the host's smdebug text comes through.
  result = rule->Invoke(5);
  EXPECT_EQ(result.status, LITMUS_TENSOR_UNAVAILABLE_FOR_STEP);
  EXPECT_EQ(
      result.message,
      "Value for tensor gradient/Net_fc1.weight is not available for step 5 with mode GLOBAL as it was not saved.");
  EXPECT_EQ(rule->report().violations, 2);
}

TEST_F(RuleInstanceTest, ParametersUnknownKeysAndRequired) {
  std::vector<std::string> warnings;
  // An unknown key is a client error naming the rule and the key, with a hint ...
  auto refused = Create({{"thresold", "1"}, {"threshold", "abc"}}, &warnings);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "rule VanishingGradient: unknown parameter 'thresold' (did you mean threshold?); known: threshold, "
            "fire_at_step, behavior (--allow-unknown-params ignores unknown keys)");
  EXPECT_TRUE(warnings.empty());
  // ... unless unknown keys are allowed: then a warning.
  LITMUS_ASSERT_OK_AND_ASSIGN(auto rule, RuleInstance::Create(*probe_, "MyProbeConfig", {trial_.get()},
                                                              {{"thresold", "1"}, {"threshold", "abc"}}, &warnings,
                                                              /*allow_unknown=*/true));
  EXPECT_THAT(warnings, ElementsAre("rule VanishingGradient: unknown parameter 'thresold' (did you mean "
                                    "threshold?) (ignored); known: threshold, fire_at_step, behavior"));
  ASSERT_EQ(rule->Invoke(0).status, LITMUS_OK);
  EXPECT_EQ(rule->report().details.Json().at("threshold"), "\"abc\"");  // the user's value reached create

  const LoadedRule& stalled = **registry_.FindRule("StalledTrainingRule");
  auto missing = RuleInstance::Create(stalled, "Stalled", {trial_.get()}, {}, nullptr);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(missing.status().message(),
            "rule StalledTrainingRule (plugin " + plugin_path_ + "): missing required parameter 'threshold'");

  // "None" and "" mean "not set" (docs/rules/semantics.md §1.2): still missing for a required parameter...
  for (const std::string unset : {"None", "", "  None "}) {
    auto none_given = RuleInstance::Create(stalled, "Stalled", {trial_.get()}, {{"threshold", unset}}, nullptr);
    ASSERT_FALSE(none_given.ok()) << unset;
    EXPECT_THAT(none_given.status().message(), ::testing::HasSubstr("missing required parameter 'threshold'"));
  }
  // ... and the declared default for an optional one.
  const LoadedRule& vanishing = **registry_.FindRule("VanishingGradient");
  for (const std::string unset : {"None", ""}) {
    LITMUS_ASSERT_OK_AND_ASSIGN(auto defaulted,
                                RuleInstance::Create(vanishing, "V", {trial_.get()}, {{"threshold", unset}}, nullptr));
    ASSERT_EQ(defaulted->Invoke(0).status, LITMUS_OK);
    EXPECT_EQ(defaulted->report().details.Json().at("threshold"), "1e-07") << unset;  // the default
  }

  LITMUS_ASSERT_OK_AND_ASSIGN(auto ok,
                              RuleInstance::Create(stalled, "Stalled", {trial_.get()}, {{"threshold", "60"}}, nullptr));
  std::vector<TensorRequirement> reqs = {{0, "stale", {1}}};
  const PluginCallResult none = ok->RequiredTensors(0, &reqs);  // no set_required_tensors
  EXPECT_EQ(none.status, LITMUS_OK);
  EXPECT_TRUE(reqs.empty());
  EXPECT_EQ(ok->Invoke(0).status, LITMUS_OK);

  const LoadedRule& no_params = **registry_.FindRule("NLPSequenceRatio");
  warnings.clear();
  EXPECT_EQ(RuleInstance::Create(no_params, "N", {trial_.get()}, {{"x", "1"}}, &warnings).status().message(),
            "rule NLPSequenceRatio: unknown parameter 'x'; known: none (--allow-unknown-params ignores unknown keys)");
  LITMUS_EXPECT_OK(RuleInstance::Create(no_params, "N", {trial_.get()}, {{"x", "1"}}, &warnings, true).status());
  EXPECT_THAT(warnings, ElementsAre("rule NLPSequenceRatio: unknown parameter 'x' (ignored); known: none"));

  // Several unknown keys: one warning listing them all. The misspellings of SageMaker's examples
  // are tolerated (warned about) even when unknown keys are not.
  warnings.clear();
  LITMUS_EXPECT_OK(
      RuleInstance::Create(no_params, "N", {trial_.get()}, {{"x", "1"}, {"nym_steps", "3"}}, &warnings, true).status());
  EXPECT_THAT(warnings,
              ElementsAre("rule NLPSequenceRatio: unknown parameters 'nym_steps', 'x' (ignored); known: none"));
  warnings.clear();
  LITMUS_EXPECT_OK(RuleInstance::Create(no_params, "N", {trial_.get()}, {{"max_diag", "3"}, {"nym_steps", "3"}},
                                        &warnings)
                       .status());
  EXPECT_THAT(warnings,
              ElementsAre("rule NLPSequenceRatio: unknown parameters 'max_diag', 'nym_steps' (ignored); known: none"));
  EXPECT_EQ(RuleInstance::Create(no_params, "N", {trial_.get()}, {{"x", "1"}, {"nym_steps", "3"}}, &warnings)
                .status()
                .message(),
            "rule NLPSequenceRatio: unknown parameter 'x'; known: none (--allow-unknown-params ignores unknown keys)");
}

TEST_F(RuleInstanceTest, CreateFailures) {
  const std::string who = "rule VanishingGradient (plugin " + plugin_path_ + "): ";
  auto invalid = Create({{"behavior", "create_invalid"}});
  EXPECT_EQ(invalid.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(invalid.status().message(), who + "behavior: create_invalid requested");

  auto internal = Create({{"behavior", "create_internal"}});
  EXPECT_EQ(internal.status().code(), StatusCode::kInternal);
  EXPECT_EQ(internal.status().message(), who + "create failed: behavior: create_internal requested");

  auto silent = Create({{"behavior", "create_silent"}});
  EXPECT_EQ(silent.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(silent.status().message(),
            who +
                "loader_good: rule VanishingGradient returned LITMUS_INVALID_CONFIG without an error message "
                "(plugin bug)");
}

TEST_F(RuleInstanceTest, PluginBugsAndPhases) {
  auto outcome = [&](const char* behavior) {
    auto rule = Create({{"behavior", behavior}});
    EXPECT_TRUE(rule.ok()) << rule.status().ToString();
    return (*rule)->Invoke(0);
  };
  PluginCallResult r = outcome("silent_error");
  EXPECT_EQ(r.status, LITMUS_INTERNAL);
  EXPECT_EQ(r.message,
            "loader_good: rule VanishingGradient returned LITMUS_INTERNAL without an error message (plugin bug)");

  r = outcome("silent_skip");
  EXPECT_EQ(r.status, LITMUS_TENSOR_UNAVAILABLE_FOR_STEP);
  EXPECT_THAT(r.message, HasSubstr("returned LITMUS_TENSOR_UNAVAILABLE_FOR_STEP without an error message"));

  r = outcome("unknown_status");
  EXPECT_EQ(r.status, LITMUS_INTERNAL);
  EXPECT_EQ(r.message,
            "loader_good: rule VanishingGradient returned the unknown status 42 from invoke_at_step "
            "(plugin bug): status 42 on purpose");

  r = outcome("require_in_invoke");
  EXPECT_EQ(r.status, LITMUS_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, "require_tensor is only valid inside set_required_tensors");

  r = outcome("handled_error");  // a failed host call the rule handled leaves no text behind
  EXPECT_EQ(r.status, LITMUS_OK);
  EXPECT_EQ(r.message, "");

  LITMUS_ASSERT_OK_AND_ASSIGN(auto unknown, Create({{"behavior", "require_unknown"}}));
  std::vector<TensorRequirement> reqs;
  r = unknown->RequiredTensors(0, &reqs);
  EXPECT_EQ(r.status, LITMUS_TENSOR_UNAVAILABLE);
  EXPECT_EQ(r.message, "Tensor no_such_tensor was not saved.");
  EXPECT_TRUE(reqs.empty());

  LITMUS_ASSERT_OK_AND_ASSIGN(auto reporting, Create({{"behavior", "report_in_set_required"}}));
  r = reporting->RequiredTensors(0, &reqs);
  EXPECT_EQ(r.status, LITMUS_OK);
  EXPECT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reporting->report().violations, 0);  // report_* outside invoke_at_step is ignored
}

// ABI 1.1: on_poll and add_action through the real host, with the SDK-built PollFires rule.
TEST_F(RuleInstanceTest, PollAndAddedActions) {
  LITMUS_ASSERT_OK(registry_.LoadFile(LITMUS_TEST_RULES_PLUGIN));
  LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* polls, registry_.FindRule("PollFires"));
  const std::string action = R"({"name": "stoptraining", "training_job_prefix": "job-1"})";
  LITMUS_ASSERT_OK_AND_ASSIGN(auto rule, RuleInstance::Create(*polls, "Polls", {trial_.get()},
                                                              {{"polls", "2"}, {"action", action}}, nullptr));
  EXPECT_TRUE(rule->polls());
  EXPECT_THAT(rule->extra_action_json(), ElementsAre(action));
  EXPECT_EQ(rule->Poll(-1).status, LITMUS_OK);
  const PluginCallResult met = rule->Poll(4);
  EXPECT_EQ(met.status, LITMUS_CONDITION_MET);
  EXPECT_EQ(rule->report().details.Json().at("last_step"), "4");

  // A rule that adds an action the host refuses does not get created.
  auto bad = RuleInstance::Create(*polls, "Bad", {trial_.get()}, {{"polls", "1"}, {"action", "stop"}}, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("add_action: expected a JSON object"));

  LITMUS_ASSERT_OK_AND_ASSIGN(auto failing, RuleInstance::Create(*polls, "Failing", {trial_.get()},
                                                                 {{"polls", "1"}, {"fail_on_poll", "true"}}, nullptr));
  const PluginCallResult failed = failing->Poll(0);
  EXPECT_EQ(failed.status, LITMUS_INVALID_ARGUMENT);
  EXPECT_EQ(failed.message, "PollFires: on_poll failed on purpose");
  EXPECT_TRUE(failing->extra_action_json().empty());
}

TEST_F(RuleInstanceTest, AnAbi10RuleRunsAndIsNeverPolled) {
  LITMUS_ASSERT_OK(registry_.LoadFile(LITMUS_TEST_PLUGIN_ABI_1_0));
  LITMUS_ASSERT_OK_AND_ASSIGN(const LoadedRule* old, registry_.FindRule("OldFireAtStep"));
  LITMUS_ASSERT_OK_AND_ASSIGN(auto rule,
                              RuleInstance::Create(*old, "Old", {trial_.get()}, {{"fire_at_step", "3"}}, nullptr));
  EXPECT_FALSE(rule->polls());
  EXPECT_EQ(rule->Poll(5).status, LITMUS_OK);  // nothing to call
  EXPECT_EQ(rule->Invoke(2).status, LITMUS_OK);
  EXPECT_EQ(rule->Invoke(3).status, LITMUS_CONDITION_MET);
}

}  // namespace
}  // namespace litmus
