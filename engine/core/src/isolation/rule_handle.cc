// RuleIsolation: the factory of in-process and isolated rules, the rule_timeout parameter, the
// trials' generation and wait-status texts. Thread-safety: see rule_handle.h.
#include "isolation/rule_handle.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <cerrno>
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "isolation/in_process_rule.h"
#include "isolation/isolated_rule.h"
#include "isolation/shared_arena.h"
#include "isolation/step_table.h"
#include "run/job_config.h"

namespace litmus {

uint64_t TrialsGeneration(std::span<Trial* const> trials) {
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](int64_t v) { h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull; };
  for (const Trial* t : trials) {
    mix(t->index_files_parsed());
    mix(t->last_complete_step());
    mix(t->end_marker_seen());
    mix(t->loaded_all_steps());
    mix(t->collections_ready());
    mix(static_cast<int64_t>(t->collections().size()));
    mix(t->num_workers());
  }
  return h;
}

std::optional<int64_t> NextAvailableStepAfter(const Trial& base, int64_t step) {
  for (auto s = base.FirstStepAtOrAfter(step + 1); s; s = base.FirstStepAtOrAfter(*s + 1)) {
    const StepState state = base.StepAvailability(*s);
    if (state == StepState::kAvailable) return s;
    if (state == StepState::kNotYetAvailable) return std::nullopt;
  }
  return std::nullopt;
}

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
    auto instance = RuleInstance::Create(rule, std::move(configuration_name), trials, params, warnings,
                                         options_.allow_unknown_params);
    if (!instance.ok()) return instance.status();
    std::unique_ptr<RuleHandle> handle = NewInProcessRule(std::move(instance).value(), std::move(trials));
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
