// RequirementPredictor (see requirement_predictor.h).
#include "isolation/requirement_predictor.h"

#include <utility>

#include "litmus/engine/trial.h"

namespace litmus::isolation {

const RequirementHistory::Entry* RequirementPredictor::KnownList(int64_t step) const {
  for (auto it = predicted_.rbegin(); it != predicted_.rend(); ++it) {
    if (it->step == step) return &*it;
  }
  return history_.Find(step);
}

const RequirementHistory::Entry* RequirementPredictor::ReferenceFor(int64_t step) const {
  if (repeat_distance_) {
    if (const RequirementHistory::Entry* e = KnownList(step - *repeat_distance_)) return e;
  }
  // The newest list (those predicted for this call first), preferably of a step of the same mode.
  const auto mode = [&](int64_t s) -> std::optional<Mode> {
    if (base_ == nullptr) return std::nullopt;
    const auto m = base_->ModeOfGlobalStep(s);
    return m ? std::optional<Mode>(m->first) : std::nullopt;
  };
  const std::optional<Mode> wanted = mode(step);
  const RequirementHistory::Entry* newest = nullptr;
  const RequirementHistory::Entry* same_mode = nullptr;
  const auto consider = [&](const RequirementHistory::Entry& e) {
    if (e.step >= step) return;
    if (newest == nullptr) newest = &e;
    if (same_mode == nullptr && mode(e.step) == wanted) same_mode = &e;
  };
  for (auto it = predicted_.rbegin(); it != predicted_.rend() && same_mode == nullptr; ++it) consider(*it);
  const auto& recorded = history_.entries();
  for (auto it = recorded.rbegin(); it != recorded.rend() && same_mode == nullptr; ++it) consider(*it);
  return same_mode != nullptr ? same_mode : newest;
}

std::optional<int64_t> RequirementPredictor::Peek(int64_t step, std::vector<TensorRequirement>* out) const {
  const RequirementHistory::Entry* reference = ReferenceFor(step);
  if (reference == nullptr) return std::nullopt;
  RequirementHistory::Moved(reference->requirements, step - reference->step, out);
  return reference->step;
}

std::optional<int64_t> RequirementPredictor::Predict(int64_t step, std::vector<TensorRequirement>* out) {
  // (A rule whose list depends on the modes of the steps around it, as WeightUpdateRatio's on
  // the previous TRAIN step, repeats its lists with the period of the trial's TRAIN/EVAL pattern.)
  if (std::exchange(mispredicted_, false)) repeat_distance_ = history_.RepeatDistance();
  while (!predicted_.empty() && predicted_.back().step >= step) predicted_.pop_back();
  const std::optional<int64_t> reference_step = Peek(step, out);
  if (!reference_step) return std::nullopt;
  references_[step] = *reference_step;
  predicted_.push_back({step, *out});
  return reference_step;
}

const RequirementHistory::Entry* RequirementPredictor::Predicted(int64_t step) const {
  for (auto p = predicted_.rbegin(); p != predicted_.rend(); ++p) {
    if (p->step == step) return &*p;
  }
  return nullptr;
}

std::optional<int64_t> RequirementPredictor::ReferenceOf(int64_t step) const {
  const auto it = references_.find(step);
  return it != references_.end() ? std::optional<int64_t>(it->second) : std::nullopt;
}

std::vector<RequirementHistory::Entry> RequirementPredictor::Take() {
  references_.clear();
  return std::exchange(predicted_, {});
}

void RequirementPredictor::Forget() {
  predicted_.clear();
  references_.clear();
}

}  // namespace litmus::isolation
