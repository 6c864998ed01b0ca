// RequirementPredictor: the requirement lists a call of several steps (--rule-batch-steps)
// assumes at its later steps, before the rule declared them: an earlier list moved by the
// difference of the steps (RequirementHistory::Moved), the newest list of a step of the same
// mode, or, after a wrong guess, the list one period back when the rule's recent lists repeat
// with a period (rules comparing with the previous TRAIN step on a trial whose TRAIN and EVAL
// steps alternate). Either kind of rule handle checks each guess against the list the rule
// declares right before invoking the step: an isolated rule's worker (the runner sends the step
// each prediction was moved from, ReferenceOf), an in-process rule itself. One thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "isolation/requirement_history.h"
#include "plugin/host_api.h"

namespace litmus {
class Trial;
}

namespace litmus::isolation {

class RequirementPredictor {
 public:
  // `base`: the trial whose modes of steps choose the reference lists (may be null: no modes).
  explicit RequirementPredictor(const Trial* base) : base_(base) {}

  // The lists the rule declared (or a call confirmed), newest last.
  RequirementHistory& history() { return history_; }
  const RequirementHistory& history() const { return history_; }

  // Sets *out to the predicted list of `step` and returns the step of the list it moved; nullopt
  // (nothing recorded before `step`) leaves *out alone. Predict remembers the guess until the
  // call that uses it (Take) or Forget; predictions of one call come in step order, so one at a
  // step at or after a remembered one's replaces those (they were not sent). Peek only looks.
  std::optional<int64_t> Predict(int64_t step, std::vector<TensorRequirement>* out);
  std::optional<int64_t> Peek(int64_t step, std::vector<TensorRequirement>* out) const;
  // The remembered prediction of `step`, or null; the step its list was moved from, or nullopt.
  const RequirementHistory::Entry* Predicted(int64_t step) const;
  std::optional<int64_t> ReferenceOf(int64_t step) const;
  // Hands the remembered predictions to the call that uses them, and forgets them.
  std::vector<RequirementHistory::Entry> Take();
  void Forget();
  // The call stopped before a predicted step that it would otherwise have run: that step's list
  // differed. The next prediction looks for a period in the rule's lists first.
  void Mispredicted() { mispredicted_ = true; }

 private:
  // The list a prediction for `step` moves: the list repeat_distance_ steps before it if known,
  // else the newest predicted or recorded before it, of a step of the same mode if there is one.
  const RequirementHistory::Entry* ReferenceFor(int64_t step) const;
  // The newest list predicted or recorded at `step`, or null.
  const RequirementHistory::Entry* KnownList(int64_t step) const;

  const Trial* base_;
  RequirementHistory history_;
  std::vector<RequirementHistory::Entry> predicted_;
  std::map<int64_t, int64_t> references_;
  // RequirementHistory::RepeatDistance, found again after each prediction that failed.
  std::optional<int64_t> repeat_distance_;
  bool mispredicted_ = false;
};

}  // namespace litmus::isolation
