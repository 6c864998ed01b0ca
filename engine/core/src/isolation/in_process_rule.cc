// InProcessRule (see in_process_rule.h). Thread-safety: as RuleHandle.
#include "isolation/in_process_rule.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "isolation/requirement_predictor.h"
#include "litmus/engine/reductions.h"

namespace litmus {
namespace {

class InProcessRule : public RuleHandle, private CallValues {
 public:
  InProcessRule(std::unique_ptr<RuleInstance> instance, std::vector<Trial*> trials)
      : instance_(std::move(instance)),
        trials_(std::move(trials)),
        predictor_(trials_.empty() ? nullptr : trials_[0]) {}

  PluginCallResult RequiredTensors(int64_t step, std::vector<TensorRequirement>* out) override {
    std::optional<Ahead> ahead = std::exchange(ahead_, std::nullopt);
    if (ahead && ahead->step == step && ahead->generation == TrialsGeneration(trials_)) {
      *out = std::move(ahead->requirements);
      return std::move(ahead->result);
    }
    return Declare(step, out);
  }
  void StartInvoke(int64_t step, const InvokeInput& input) override {
    (void)step;
    call_input_ = input;
  }
  PluginCallResult Invoke(int64_t step) override {
    ahead_.reset();
    const ReadingCallValues reading(*this);
    return instance_->Invoke(step);
  }
  bool PredictRequirements(int64_t step, std::vector<TensorRequirement>* out) override {
    return predictor_.Predict(step, out).has_value();
  }
  bool PeekRequirements(int64_t step, std::vector<TensorRequirement>* out) const override {
    return predictor_.Peek(step, out).has_value();
  }
  void ForgetPredictions() override { predictor_.Forget(); }
  void StartInvokeSteps(std::span<const int64_t> steps, const InvokeInput& input) override {
    (void)steps;
    call_input_ = input;
    skip_.assign(input.skip.begin(), input.skip.end());
    past_firings_ = input.past_firings;
  }
  std::vector<PluginCallResult> InvokeSteps(std::span<const int64_t> steps) override {
    ahead_.reset();
    const ReadingCallValues reading(*this);
    const std::vector<isolation::RequirementHistory::Entry> predicted = predictor_.Take();
    std::vector<PluginCallResult> results;
    std::vector<TensorRequirement> declared;
    for (size_t k = 0; k < steps.size(); ++k) {
      const auto guess = std::find_if(predicted.begin(), predicted.end(),
                                      [&](const isolation::RequirementHistory::Entry& e) { return e.step == steps[k]; });
      if (k > 0 && guess != predicted.end()) {
        PluginCallResult result = Declare(steps[k], &declared);
        if (result.status != LITMUS_OK || !isolation::RequirementHistory::IsMoved(guess->requirements, 0, declared)) {
          // (the runner's declaration of the step, which it makes next)
          ahead_ = Ahead{steps[k], TrialsGeneration(trials_), std::move(result), std::move(declared)};
          predictor_.Mispredicted();
          break;
        }
      }
      if (k < skip_.size() && skip_[k] != 0) {  // (confirmed above: a missing tensor of its list)
        results.push_back({LITMUS_OK, ""});
        continue;
      }
      results.push_back(instance_->Invoke(steps[k]));
      const litmus_status_t status = results.back().status;
      if (status != LITMUS_OK && (status != LITMUS_CONDITION_MET || !past_firings_)) break;
    }
    skip_.clear();
    if (results.size() == steps.size() && !trials_.empty()) {
      if (const std::optional<int64_t> next = NextAvailableStepAfter(*trials_[0], steps.back())) {
        Ahead declared{*next, TrialsGeneration(trials_), {}, {}};
        declared.result = Declare(*next, &declared.requirements);
        ahead_ = std::move(declared);
      }
    }
    return results;
  }
  bool polls() const override { return instance_->polls(); }
  PluginCallResult Poll(int64_t last_step) override {
    ahead_.reset();  // (a poll may change what the rule declares)
    return instance_->Poll(last_step);
  }
  const std::vector<std::string>& extra_action_json() const override { return instance_->extra_action_json(); }
  const RuleReport& report() const override { return instance_->report(); }
  RuleReport& mutable_report() override { return instance_->mutable_report(); }
  void RestoreReport(RuleReport report) override { instance_->RestoreReport(std::move(report)); }
  const LoadedRule& rule() const override { return instance_->rule(); }

 private:
  // CallValues: the call's values (StartInvoke's input) by the rule's trial number and the
  // trial's own copy of the name, as the runner keyed them.
  TensorPtr Find(uint32_t trial, std::string_view name, int64_t step) const override {
    const ReadValue* found = Lookup(trial, name, step, /*rule_read=*/true);
    if (found == nullptr || found->value == nullptr || found->value->is_summary()) return nullptr;
    return found->value;
  }
  std::optional<double> Reduction(uint32_t trial, std::string_view name, int64_t step, layout::Reduction r,
                                  bool abs) const override {
    const ReadValue* found = Lookup(trial, name, step, /*rule_read=*/false);
    if (found == nullptr || found->value == nullptr || found->stored_reductions) return std::nullopt;
    const Tensor& value = *found->value;
    const uint32_t key = ReductionMemoKey(r, abs);
    trials_[trial]->NoteReductionAsked(found->key.name, key);
    if (const std::optional<double> memo = value.Memo(key)) return memo;
    if (value.is_summary()) return std::nullopt;
    const StatusOr<double> computed = ComputeReduction(value, r, abs);
    if (!computed.ok()) return std::nullopt;  // (the trial reports it)
    value.SetMemo(key, *computed);
    return *computed;
  }
  // The call's ReadValue of `name` of the rule's trial `trial` at global `step`, or null.
  const ReadValue* Lookup(uint32_t trial, std::string_view name, int64_t step, bool rule_read) const {
    const InvokeInput& in = call_input_;
    if (in.values == nullptr || trial >= trials_.size() || trial >= in.trial_indices.size()) return nullptr;
    const std::optional<std::string_view> saved = trials_[trial]->SavedTensorName(name, rule_read);
    if (!saved) return nullptr;
    const ReadKey key{.trial = in.trial_indices[trial], .name = *saved, .step = step};
    static const ReadValueIndex kUnindexed;  // (its Find is a binary search)
    return (in.index != nullptr ? *in.index : kUnindexed).Find(*in.values, key);
  }
  // Hands the call's values to the rule's calls for its scope (the input lives only until the
  // runner's next step).
  class ReadingCallValues {
   public:
    explicit ReadingCallValues(InProcessRule& rule) : rule_(rule) { rule_.instance_->set_call_values(&rule_); }
    ~ReadingCallValues() {
      rule_.instance_->set_call_values(nullptr);
      rule_.call_input_ = InvokeInput{};
    }
    ReadingCallValues(const ReadingCallValues&) = delete;
    ReadingCallValues& operator=(const ReadingCallValues&) = delete;

   private:
    InProcessRule& rule_;
  };

  // A declaration made before the runner asked for it, valid while the trials' generation holds.
  struct Ahead {
    int64_t step = 0;
    uint64_t generation = 0;
    PluginCallResult result;
    std::vector<TensorRequirement> requirements;
  };

  // The rule's set_required_tensors, its list recorded for the predictions.
  PluginCallResult Declare(int64_t step, std::vector<TensorRequirement>* out) {
    PluginCallResult result = instance_->RequiredTensors(step, out);
    if (result.status == LITMUS_OK) predictor_.history().Record(step, *out);
    return result;
  }

  std::unique_ptr<RuleInstance> instance_;
  const std::vector<Trial*> trials_;
  isolation::RequirementPredictor predictor_;
  std::optional<Ahead> ahead_;
  InvokeInput call_input_;     // of the call StartInvoke(Steps) was given
  std::vector<uint8_t> skip_;  // of the call StartInvokeSteps was given
  bool past_firings_ = false;
};

}  // namespace

std::unique_ptr<RuleHandle> NewInProcessRule(std::unique_ptr<RuleInstance> instance, std::vector<Trial*> trials) {
  return std::make_unique<InProcessRule>(std::move(instance), std::move(trials));
}

}  // namespace litmus
