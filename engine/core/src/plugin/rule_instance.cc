// RuleInstance: parameter handling and the guarded calls into a plugin's rule functions.
// Thread-safety: see rule_instance.h.
#include "plugin/rule_instance.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "plugin/parameter_keys.h"

namespace litmus {
namespace {

// Calls a plugin function; a C++ exception thrown through the C ABI (a plugin bug: the SDK
// catches everything) is stopped here and becomes LITMUS_INTERNAL.
template <class Call>
litmus_status_t CallPlugin(litmus_ctx& ctx, Call&& call) noexcept {
  try {
    return call();
  } catch (...) {
    ctx.has_error = true;
    ctx.error = "a C++ exception escaped from the plugin (plugin bug)";
    return LITMUS_INTERNAL;
  }
}

// docs/rules/semantics.md §1.2: the literal "None" and the empty string (surrounding ASCII blanks
// ignored) mean "not set", so the declared default applies (rule.hpp's params::IsUnset agrees).
bool IsUnsetValue(std::string_view value) {
  const size_t begin = value.find_first_not_of(" \t\r\n\f\v");
  if (begin == std::string_view::npos) return true;
  value = value.substr(begin, value.find_last_not_of(" \t\r\n\f\v") - begin + 1);
  return value == "None";
}

}  // namespace

RuleInstance::RuleInstance(const LoadedRule& rule, std::string configuration_name, std::vector<Trial*> trials)
    : rule_(rule),
      configuration_name_(std::move(configuration_name)),
      ctx_(configuration_name_, std::move(trials), &report_) {}

StatusOr<std::unique_ptr<RuleInstance>> RuleInstance::Create(const LoadedRule& rule, std::string configuration_name,
                                                             std::vector<Trial*> trials,
                                                             const std::map<std::string, std::string>& params,
                                                             std::vector<std::string>* warnings, bool allow_unknown) {
  const std::string who = "rule " + rule.name + " (plugin " + rule.plugin_path + ")";
  // Unknown keys: exit 2 unless tolerated (parameter_keys.h); the tolerated ones are warnings.
  LITMUS_ASSIGN_OR_RETURN(std::vector<std::string> key_warnings, CheckParameterKeys(rule, params, allow_unknown));
  if (warnings != nullptr) warnings->insert(warnings->end(), key_warnings.begin(), key_warnings.end());
  // Every declared parameter reaches create: the user's value or the default.
  std::vector<std::pair<std::string, std::string>> values;
  for (const LoadedRule::Param& p : rule.params) {
    const auto it = params.find(p.name);
    if (it != params.end() && !IsUnsetValue(it->second)) {
      values.emplace_back(p.name, it->second);
    } else if (p.required) {
      return InvalidArgumentError(who + ": missing required parameter '" + p.name + "'");
    } else {
      values.emplace_back(p.name, p.default_value);
    }
  }
  std::vector<litmus_param_t> c_params;
  for (const auto& [key, value] : values) c_params.push_back({{key.data(), key.size()}, {value.data(), value.size()}});

  std::unique_ptr<RuleInstance> instance(new RuleInstance(rule, std::move(configuration_name), std::move(trials)));
  litmus_ctx& ctx = instance->ctx_;
  ctx.BeginCall(PluginCallPhase::kCreate);
  litmus_rule_instance_t* created = nullptr;
  const litmus_status_t status = CallPlugin(ctx, [&] {
    return rule.descriptor->create(&ctx, c_params.empty() ? nullptr : c_params.data(), c_params.size(), &created);
  });
  const PluginCallResult result = instance->Finish(status, "create");
  ctx.EndCall();
  if (result.status == LITMUS_OK && created == nullptr) {
    return InternalError(who + ": create failed: it returned LITMUS_OK but no instance (plugin bug)");
  }
  if (result.status != LITMUS_OK) {
    // Whatever create may have returned in *instance is not an instance: never destroy it.
    if (result.status == LITMUS_INVALID_CONFIG) return InvalidArgumentError(who + ": " + result.message);
    return InternalError(who + ": create failed: " + result.message);
  }
  instance->instance_ = created;
  return instance;
}

RuleInstance::~RuleInstance() {
  if (instance_ == nullptr) return;
  try {
    rule_.descriptor->destroy(instance_);
  } catch (...) {
    spdlog::error("rule {} (plugin {}): a C++ exception escaped from destroy (plugin bug)", rule_.name,
                  rule_.plugin_path);
  }
}

PluginCallResult RuleInstance::RequiredTensors(int64_t step, std::vector<TensorRequirement>* out) {
  out->clear();
  if (rule_.descriptor->set_required_tensors == nullptr) return {LITMUS_OK, ""};
  ctx_.BeginCall(PluginCallPhase::kSetRequiredTensors, out);
  const litmus_status_t status =
      CallPlugin(ctx_, [&] { return rule_.descriptor->set_required_tensors(instance_, &ctx_, step); });
  PluginCallResult result = Finish(status, "set_required_tensors");
  ctx_.EndCall();
  if (result.status == LITMUS_CONDITION_MET) {
    result = {LITMUS_INTERNAL, rule_.plugin_name + ": rule " + rule_.name +
                                   " returned LITMUS_CONDITION_MET from set_required_tensors (only invoke_at_step "
                                   "may; plugin bug)"};
  }
  if (result.status != LITMUS_OK) out->clear();
  return result;
}

PluginCallResult RuleInstance::Invoke(int64_t step) {
  ctx_.BeginCall(PluginCallPhase::kInvoke);
  const litmus_status_t status =
      CallPlugin(ctx_, [&] { return rule_.descriptor->invoke_at_step(instance_, &ctx_, step); });
  PluginCallResult result = Finish(status, "invoke_at_step");
  result.data_loss = ctx_.data_loss;
  ctx_.EndCall();
  return result;
}

PluginCallResult RuleInstance::Poll(int64_t last_step) {
  if (rule_.on_poll == nullptr) return {LITMUS_OK, ""};
  ctx_.BeginCall(PluginCallPhase::kPoll);
  const litmus_status_t status = CallPlugin(ctx_, [&] { return rule_.on_poll(instance_, &ctx_, last_step); });
  PluginCallResult result = Finish(status, "on_poll");
  ctx_.EndCall();
  return result;
}

PluginCallResult RuleInstance::Finish(litmus_status_t status, const char* function) {
  const std::string text = ctx_.has_error ? ctx_.error : std::string();
  if (!IsKnownLitmusStatus(status)) {
    return {LITMUS_INTERNAL, rule_.plugin_name + ": rule " + rule_.name + " returned the unknown status " +
                                 std::to_string(status) + " from " + function + " (plugin bug)" +
                                 (text.empty() ? "" : ": " + text)};
  }
  // A rule that handled a failed host call and went on leaves that call's text behind: drop it.
  if (status == LITMUS_OK || status == LITMUS_CONDITION_MET) return {status, ""};
  if (text.empty()) {
    return {status, rule_.plugin_name + ": rule " + rule_.name + " returned " + LitmusStatusName(status) +
                        " without an error message (plugin bug)"};
  }
  return {status, text};
}

}  // namespace litmus
