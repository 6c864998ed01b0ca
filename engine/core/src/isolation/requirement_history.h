// RequirementHistory: the last few requirement lists of a rule, by the step each was declared or
// confirmed at, kept alike at both ends of a worker's socket (each end records the same lists in
// the same order: those the worker sent, and those a kInvokeSteps step confirmed). A call of
// several steps (--rule-batch-steps) predicts a step's list as an earlier list moved by the
// difference of their steps and names that earlier step, so that the worker can check the guess
// against its own copy; choosing a list of a step of the same mode predicts the lists of rules
// that require other tensors in TRAIN and in EVAL steps, and the list one period earlier
// (RepeatDistance) those of rules whose lists depend on the modes of the steps around them.
// Value type, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "plugin/host_api.h"

namespace litmus::isolation {

class RequirementHistory {
 public:
  static constexpr size_t kSize = 32;
  struct Entry {
    int64_t step = 0;
    std::vector<TensorRequirement> requirements;
  };

  void Record(int64_t step, std::vector<TensorRequirement> requirements);
  // The newest entry / list recorded at `step`, or null.
  const Entry* Find(int64_t step) const;
  const std::vector<TensorRequirement>* At(int64_t step) const;
  // Newest last.
  const std::deque<Entry>& entries() const { return entries_; }

  // The smallest distance d such that each recorded list whose step d steps earlier is recorded
  // too is that list moved by d, checked on at least kMinRepeats lists; nullopt if none is.
  static constexpr int kMinRepeats = 3;
  std::optional<int64_t> RepeatDistance() const;

  // *out = `base` with every step moved by `shift`. REQUIRES: out is not &base.
  static void Moved(const std::vector<TensorRequirement>& base, int64_t shift, std::vector<TensorRequirement>* out);
  // Whether `reqs` are `base` moved by `shift` (same order, names, trials, flags).
  static bool IsMoved(const std::vector<TensorRequirement>& base, int64_t shift,
                      const std::vector<TensorRequirement>& reqs);

 private:
  std::deque<Entry> entries_;
};

}  // namespace litmus::isolation
