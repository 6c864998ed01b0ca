// RequirementHistory (see requirement_history.h).
#include "isolation/requirement_history.h"

namespace litmus::isolation {

void RequirementHistory::Record(int64_t step, std::vector<TensorRequirement> requirements) {
  if (entries_.size() == kSize) entries_.pop_front();
  entries_.push_back({step, std::move(requirements)});
}

const RequirementHistory::Entry* RequirementHistory::Find(int64_t step) const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->step == step) return &*it;
  }
  return nullptr;
}

const std::vector<TensorRequirement>* RequirementHistory::At(int64_t step) const {
  const Entry* entry = Find(step);
  return entry != nullptr ? &entry->requirements : nullptr;
}

std::optional<int64_t> RequirementHistory::RepeatDistance() const {
  for (int64_t d = 1; d < static_cast<int64_t>(kSize); ++d) {
    int checks = 0;
    bool holds = true;
    for (auto it = entries_.rbegin(); it != entries_.rend() && holds; ++it) {
      const std::vector<TensorRequirement>* base = At(it->step - d);
      if (base == nullptr) continue;
      holds = IsMoved(*base, d, it->requirements);
      ++checks;
    }
    if (holds && checks >= kMinRepeats) return d;
  }
  return std::nullopt;
}

void RequirementHistory::Moved(const std::vector<TensorRequirement>& base, int64_t shift,
                               std::vector<TensorRequirement>* out) {
  out->assign(base.begin(), base.end());  // (reusing what *out holds: no allocation once it is large enough)
  for (TensorRequirement& r : *out) {
    for (int64_t& s : r.steps) s += shift;
  }
}

bool RequirementHistory::IsMoved(const std::vector<TensorRequirement>& base, int64_t shift,
                                 const std::vector<TensorRequirement>& reqs) {
  if (reqs.size() != base.size()) return false;
  for (size_t i = 0; i < reqs.size(); ++i) {
    const TensorRequirement& a = reqs[i];
    const TensorRequirement& b = base[i];
    if (a.trial != b.trial || a.reductions_only != b.reductions_only || a.steps.size() != b.steps.size() ||
        (a.name.data() != b.name.data() && a.name != b.name)) {
      return false;
    }
    for (size_t j = 0; j < a.steps.size(); ++j) {
      if (a.steps[j] != b.steps[j] + shift) return false;
    }
  }
  return true;
}

}  // namespace litmus::isolation
