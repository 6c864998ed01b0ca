// RuleIsolation: the in-process adapter, the isolated factory, the rule_timeout parameter and
// wait-status texts. Thread-safety: see rule_handle.h.
#include "isolation/rule_handle.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <cerrno>
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "isolation/isolated_rule.h"
#include "isolation/shared_arena.h"
#include "isolation/step_table.h"
#include "run/job_config.h"

namespace litmus {
namespace {

// `--isolation none`: the rule runs in this process, as before isolation existed.
class InProcessRule : public RuleHandle {
 public:
  explicit InProcessRule(std::unique_ptr<RuleInstance> instance) : instance_(std::move(instance)) {}
  PluginCallResult RequiredTensors(int64_t step, std::vector<TensorRequirement>* out) override {
    return instance_->RequiredTensors(step, out);
  }
  PluginCallResult Invoke(int64_t step) override { return instance_->Invoke(step); }
  bool polls() const override { return instance_->polls(); }
  PluginCallResult Poll(int64_t last_step) override { return instance_->Poll(last_step); }
  const std::vector<std::string>& extra_action_json() const override { return instance_->extra_action_json(); }
  const RuleReport& report() const override { return instance_->report(); }
  RuleReport& mutable_report() override { return instance_->mutable_report(); }
  void RestoreReport(RuleReport report) override { instance_->RestoreReport(std::move(report)); }
  const LoadedRule& rule() const override { return instance_->rule(); }

 private:
  std::unique_ptr<RuleInstance> instance_;
};

}  // namespace

StatusOr<std::unique_ptr<RuleIsolation>> RuleIsolation::Create(IsolationOptions options) {
  std::unique_ptr<RuleIsolation> isolation(new RuleIsolation(std::move(options)));
  if (isolation->options_.mode == IsolationMode::kProcess) {
    auto arena = isolation::SharedArena::Create(isolation->options_.arena_bytes);
    if (!arena.ok()) return arena.status();
    isolation->arena_ = std::move(arena).value();
    isolation->table_ = std::make_shared<isolation::TensorTable>(isolation->arena_);
    const std::string log_path = isolation->options_.log_dir + "/worker.log";
    for (size_t i = 0; i < isolation->options_.prestart; ++i) {
      auto worker = isolation::StartWorker(*isolation->arena_, log_path, kRuleLogBytes);
      if (!worker.ok()) return worker.status();
      isolation->started_.push_back(std::move(worker).value());
    }
  }
  return isolation;
}

RuleIsolation::RuleIsolation(IsolationOptions options) : options_(std::move(options)) {}
RuleIsolation::~RuleIsolation() = default;

std::shared_ptr<RecordBufferAllocator> RuleIsolation::record_buffers() const { return arena_; }

std::shared_ptr<const isolation::StepTable> RuleIsolation::ShareStep(const std::vector<ReadValue>& values,
                                                                     std::span<Trial* const> trials) const {
  if (options_.mode != IsolationMode::kProcess || values.empty()) return nullptr;
  return isolation::StepTable::Build(*arena_, values, trials);
}

StatusOr<std::unique_ptr<RuleHandle>> RuleIsolation::CreateRule(const LoadedRule& rule, std::string configuration_name,
                                                                std::vector<Trial*> trials,
                                                                std::map<std::string, std::string> params,
                                                                std::vector<std::string>* warnings) {
  double timeout_s = options_.rule_timeout_s;
  const bool declared = std::any_of(rule.params.begin(), rule.params.end(),
                                    [](const LoadedRule::Param& p) { return p.name == kRuleTimeoutParameter; });
  if (const auto it = params.find(kRuleTimeoutParameter); it != params.end() && !declared) {
    LITMUS_ASSIGN_OR_RETURN(timeout_s,
                            ParsePositiveSeconds(it->second, "rule " + configuration_name + ": " + kRuleTimeoutParameter));
    params.erase(it);
    if (options_.mode == IsolationMode::kNone && warnings != nullptr) {
      warnings->push_back("rule " + configuration_name + ": " + kRuleTimeoutParameter +
                          " has no effect with --isolation none");
    }
  }
  if (options_.mode == IsolationMode::kNone) {
    auto instance = RuleInstance::Create(rule, std::move(configuration_name), std::move(trials), params, warnings,
                                         options_.allow_unknown_params);
    if (!instance.ok()) return instance.status();
    std::unique_ptr<RuleHandle> handle(new InProcessRule(std::move(instance).value()));
    if (!options_.keep_series) handle->mutable_report().series.Disable();
    return handle;
  }
  isolation::WorkerLimits limits;
  limits.timeout_s = timeout_s;
  limits.memory_bytes = options_.rule_memory_bytes;
  limits.log_path = (std::filesystem::path(options_.log_dir) / (configuration_name + ".log")).string();
  limits.keep_series = options_.keep_series;
  isolation::StartedWorker worker;
  if (!started_.empty()) {
    worker = std::move(started_.back());
    started_.pop_back();
  } else {
    auto started = isolation::StartWorker(*arena_, limits.log_path, kRuleLogBytes);
    if (!started.ok()) return started.status();
    worker = std::move(started).value();
  }
  auto isolated = isolation::IsolatedRule::Create(rule, std::move(configuration_name), std::move(trials), params,
                                                  options_.allow_unknown_params, warnings, std::move(limits), arena_,
                                                  table_, std::move(worker));
  if (!isolated.ok()) return isolated.status();
  std::unique_ptr<RuleHandle> handle = std::move(isolated).value();
  if (!options_.keep_series) handle->mutable_report().series.Disable();  // (no points arrive)
  return handle;
}

std::string DescribeWaitStatus(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    std::string text = "was killed by signal " + std::to_string(sig) +
                       (abbrev != nullptr ? " (SIG" + std::string(abbrev) + ")" : std::string());
    if (sig == SIGKILL) text += " (by the kernel's out-of-memory killer?)";
    return text;
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended (wait status " + std::to_string(status) + ")";
}

}  // namespace litmus
