// TrialOutline: a trial's catalog as `litmus inspect --json --no-values` describes it (steps,
// modes, workers, tensor names and each tensor's steps, collections), without record locations
// and in memory that does not grow with the number of (step, tensor) records: steps and each
// tensor's steps are kept as arithmetic runs, so a tensor saved at every step (or every k-th)
// costs O(1), however long the trial. Built in one pass over the index files, a folder at a
// time, as a snapshot (Trial::Open with no end-of-training delay: the marker, if present, means
// every step is loaded). Query methods have Trial's names and meaning (trial.h), so that the
// inspect documents are written by the same code for both. Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "litmus/engine/trial.h"
#include "litmus/format/env.h"
#include "litmus/format/mode.h"
#include "litmus/status.h"

namespace litmus {

// An ascending sequence of int64 values stored as arithmetic runs (first, first + stride, ...):
// O(1) for values at a fixed stride, O(runs) in general (24 bytes a run). Values are appended
// in increasing order.
class StepRuns {
 public:
  struct Run {
    int64_t first = 0;
    int64_t stride = 1;
    int64_t count = 0;
    int64_t last() const { return first + stride * (count - 1); }
  };
  // REQUIRES: empty() or value > back().
  void Append(int64_t value);
  bool Contains(int64_t value) const;
  bool empty() const { return runs_.empty(); }
  int64_t back() const { return runs_.back().last(); }
  size_t size() const { return size_; }
  const std::vector<Run>& runs() const { return runs_; }
  template <typename F>
  void ForEach(F&& f) const {
    for (const Run& r : runs_) {
      for (int64_t i = 0; i < r.count; ++i) f(r.first + r.stride * i);
    }
  }

 private:
  std::vector<Run> runs_;
  size_t size_ = 0;
};

class TrialOutline {
 public:
  // Reads `root` through `env` (not owned; used only during the call): collections files, the
  // end marker, then every index file in path order. The index folders (index/<P9>) are listed
  // one at a time while they follow each other, so the listing does not hold every file name
  // of the trial at once (a gap in the folder numbers lists the rest in one go).
  // Errors as Trial::Open and Trial::Refresh (the same messages), and Unimplemented for a layout
  // the outline does not represent (an index file of an earlier step listed after a later one):
  // the caller then opens a Trial instead.
  static StatusOr<std::unique_ptr<TrialOutline>> Open(Env* env, std::string root, const TrialOptions& options);

  const std::string& root() const { return root_; }
  bool collections_ready() const { return collections_ready_; }
  int64_t num_workers() const { return num_workers_; }
  std::vector<std::string> workers() const { return {workers_.begin(), workers_.end()}; }
  bool end_marker_seen() const { return end_marker_seen_; }
  bool loaded_all_steps() const { return loaded_all_steps_; }
  int64_t last_complete_step() const { return last_complete_step_; }

  std::vector<int64_t> Steps(Mode mode = Mode::kGlobal, bool include_incomplete = false) const;
  // Mode steps of `mode` (known ones, complete or not) with their global steps (first seen
  // wins), sorted by mode step: Steps(mode, true) and GlobalStep of each, in one pass.
  std::vector<std::pair<int64_t, int64_t>> ModeStepOwners(Mode mode) const;
  bool HasMode(Mode mode) const;
  std::optional<int64_t> GlobalStep(Mode mode, int64_t mode_step) const;
  std::optional<std::pair<Mode, int64_t>> ModeOfGlobalStep(int64_t global_step) const;
  std::vector<std::string> WorkersForStep(int64_t global_step) const;
  bool IsStepComplete(int64_t global_step) const;

  std::vector<std::string> TensorNames() const;
  std::vector<std::string> TensorNamesAtStep(int64_t global_step) const;
  std::vector<std::string> TensorNamesForMode(Mode mode) const;
  StatusOr<std::vector<std::string>> TensorNamesInCollection(const std::string& collection) const;
  StatusOr<std::vector<std::string>> TensorNamesMatching(const std::string& pattern) const;
  const std::map<std::string, Collection>& collections() const { return collections_; }
  std::vector<int64_t> TensorSteps(const std::string& name, bool include_incomplete = false) const;
  // (mode, mode step) of the entry of `name` at `global_step` of the default worker (the
  // lexicographically smallest that saved it there): Trial::Entries(name, step).front().
  std::optional<std::pair<Mode, int64_t>> TensorModeAt(const std::string& name, int64_t global_step) const;

  // Streaming forms of the lists above, for documents of trials with millions of steps:
  // f(global step, complete) for every known step, in order;
  template <typename F>
  void ForEachStep(F&& f) const {
    ForEachKnown([&](int64_t g, Mode, int64_t, uint32_t workers) { f(g, Complete(g, workers)); });
  }
  // f(mode step, global step) for the known mode steps of `mode` (kGlobal: global steps), in
  // order, each with the global step that owns it (first seen wins);
  template <typename F>
  void ForEachModeStep(Mode mode, F&& f) const {
    if (mode == Mode::kGlobal || ModeStepsInOrder(mode)) {
      ForEachKnown([&](int64_t g, Mode m, int64_t mode_step, uint32_t) {
        if (mode == Mode::kGlobal) f(g, g);
        else if (m == mode) f(mode_step, g);
      });
      return;
    }
    for (const auto& [mode_step, g] : ModeStepOwners(mode)) f(mode_step, g);
  }
  // f(global step) for every step of tensor `name` (complete or not), in order; and whether a
  // step of a tensor counts as complete (Trial::TensorSteps's rule).
  template <typename F>
  void ForEachTensorStep(const std::string& name, F&& f) const {
    const auto it = tensors_.find(name);
    if (it != tensors_.end()) it->second.steps.ForEach(f);
  }
  bool TensorStepComplete(int64_t global_step) const { return loaded_all_steps_ || global_step <= last_complete_step_; }

  // The runs of the tensor's global steps (for tests of the representation's size).
  const StepRuns* TensorStepRuns(const std::string& name) const;
  // Runs of the trial's known global steps (for the same tests).
  size_t step_runs() const { return steps_.size(); }

 private:
  class Builder;
  // A run of known global steps with the same mode, arithmetic mode steps and the same workers.
  struct KnownRun {
    int64_t first = 0;
    int64_t stride = 1;
    int64_t mode_first = 0;
    int64_t mode_stride = 0;
    int64_t count = 0;
    Mode mode = Mode::kGlobal;
    uint32_t workers = 0;  // index into worker_sets_
  };
  struct Known {
    Mode mode;
    int64_t mode_step;
    uint32_t workers;
  };
  struct Tensor {
    StepRuns steps;
    // Steps whose default worker's entry has a (mode, mode step) other than the step's own (the
    // first index file's of that step): rare (workers that disagree).
    std::map<int64_t, std::pair<Mode, int64_t>> other_modes;
    uint32_t modes_seen = 0;  // bit per Mode of the tensor's entries
    const std::string* last_worker = nullptr;  // default worker at steps.back() so far
  };
  // A (mode, mode step) of an index file that is not its step's own, in the order seen.
  struct ExtraOwner {
    int64_t global_step;
    Mode mode;
    int64_t mode_step;
  };

  explicit TrialOutline(std::string root) : root_(std::move(root)) {}
  std::optional<Known> FindKnown(int64_t global_step) const;
  template <typename F>
  void ForEachKnown(F&& f) const {
    for (const KnownRun& r : steps_) {
      for (int64_t i = 0; i < r.count; ++i) f(r.first + r.stride * i, r.mode, r.mode_first + r.mode_stride * i, r.workers);
    }
  }
  bool Complete(int64_t global_step, uint32_t workers) const;
  // Whether the steps' own mode steps of `mode` increase with the global steps and no other
  // index file names one: then they are ModeStepOwners(mode) in order, without building it.
  bool ModeStepsInOrder(Mode mode) const;
  StatusOr<std::vector<std::string>> Members(const Collection& c) const;

  std::string root_;
  bool collections_ready_ = false;
  int64_t num_workers_ = 0;
  std::set<std::string> workers_;  // from collections file names
  std::map<std::string, Collection> collections_;
  std::map<std::string, Status> collection_regex_errors_;
  bool end_marker_seen_ = false;
  bool loaded_all_steps_ = false;
  int64_t last_complete_step_ = -1;
  std::vector<KnownRun> steps_;
  size_t known_steps_ = 0;
  std::vector<ExtraOwner> extra_owners_;
  std::set<std::string> worker_names_;  // of index files (nodes never move)
  std::vector<std::vector<const std::string*>> worker_sets_;  // sorted by name
  uint32_t modes_with_entries_ = 0;
  std::map<std::string, Tensor> tensors_;
};

}  // namespace litmus
