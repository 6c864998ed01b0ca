// RuleInstance: one configured rule of a loaded plugin, as the runner uses it: parameter checks
// and defaults, create/destroy, set_required_tensors and invoke_at_step through the C ABI, with
// status normalization (unknown values, errors without text) and the rule's report.
// Thread-safety: one call at a time per instance; different instances may be called
// concurrently (over the same Trials, as long as no Trial::Refresh runs meanwhile).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "litmus/rule_abi.h"
#include "litmus/status.h"
#include "plugin/host_api.h"
#include "plugin/plugin_loader.h"

namespace litmus {

class Trial;

// The outcome of one plugin call. `status` is one of the LITMUS_* values of rule_abi.h (a value
// the ABI does not define becomes LITMUS_INTERNAL). `message` is the set_error text (empty for
// LITMUS_OK and LITMUS_CONDITION_MET); an error status without text gets
// "<plugin>: rule <name> returned <STATUS> without an error message (plugin bug)".
struct PluginCallResult {
  PluginCallResult() = default;
  PluginCallResult(litmus_status_t s, std::string m) : status(s), message(std::move(m)) {}

  litmus_status_t status = LITMUS_OK;
  std::string message;
  // A host call of this call failed on damaged data (litmus_ctx::data_loss): its message.
  std::string data_loss;
};

class RuleInstance {
 public:
  // Validates the keys of `params` against the rule's schema (CheckParameterKeys,
  // parameter_keys.h): an unknown key is InvalidArgument naming it, with a hint when a declared
  // key is close ("did you mean threshold?"), unless `allow_unknown` or it is a misspelling of
  // SageMaker's examples; the keys tolerated are appended to *warnings (may be null) as one line
  // listing them all. A missing required parameter is InvalidArgument naming the key.
  // Applies defaults and calls create. create returning LITMUS_INVALID_CONFIG -> InvalidArgument
  // "rule X (plugin P): <message>"; any other failure -> Internal "rule X (plugin P): create
  // failed: <message>".
  // REQUIRES: `rule` (its registry) and `trials` (base trial first) outlive the instance.
  static StatusOr<std::unique_ptr<RuleInstance>> Create(const LoadedRule& rule, std::string configuration_name,
                                                        std::vector<Trial*> trials,
                                                        const std::map<std::string, std::string>& params,
                                                        std::vector<std::string>* warnings,
                                                        bool allow_unknown = false);
  ~RuleInstance();  // destroy()
  RuleInstance(const RuleInstance&) = delete;
  RuleInstance& operator=(const RuleInstance&) = delete;

  // smdebug's set_required_tensors(step): *out is replaced by the declared requirements (trial
  // indices are the rule's: 0 = base trial). LITMUS_OK with an empty list if the rule has no
  // set_required_tensors. On a failed call *out is empty. Has no effect on the report.
  PluginCallResult RequiredTensors(int64_t step, std::vector<TensorRequirement>* out);
  // invoke_at_step(step): LITMUS_OK (not met), LITMUS_CONDITION_MET, a skip status, ...
  PluginCallResult Invoke(int64_t step);
  // ABI 1.1: whether the rule has on_poll, and the call (LITMUS_OK when it has none): LITMUS_OK,
  // LITMUS_CONDITION_MET, LITMUS_NO_MORE_DATA or an error. last_step = -1 before any step.
  bool polls() const { return rule_.on_poll != nullptr; }
  PluginCallResult Poll(int64_t last_step);
  // ABI 1.1: the actions the rule registered with add_action during create, in order, each a JSON
  // object or list of objects in action_json's form (docs/job-contract.md §8). They belong to
  // this rule only and run, like the job's action_json, when its condition is met.
  const std::vector<std::string>& extra_action_json() const { return ctx_.added_actions; }

  // Everything report_violations / report_detail recorded so far.
  const RuleReport& report() const { return report_; }
  // For the runner, between calls (see RuleHandle::mutable_report).
  RuleReport& mutable_report() { return report_; }
  // For a resumed job (run/checkpoint.h): the report as an earlier run of the job left it.
  void RestoreReport(RuleReport report) { report_ = std::move(report); }
  const LoadedRule& rule() const { return rule_; }
  const std::string& configuration_name() const { return configuration_name_; }
  // What tensor_value reads first during the next calls (CallValues, host_api.h); null: nothing.
  void set_call_values(const CallValues* values) { ctx_.call_values = values; }

 private:
  RuleInstance(const LoadedRule& rule, std::string configuration_name, std::vector<Trial*> trials);
  // Turns what a plugin function returned into a PluginCallResult (see above). `function` names
  // it in messages.
  PluginCallResult Finish(litmus_status_t status, const char* function);

  const LoadedRule& rule_;
  const std::string configuration_name_;
  RuleReport report_;
  litmus_ctx ctx_;  // after report_: it points to it
  litmus_rule_instance_t* instance_ = nullptr;
};

}  // namespace litmus
