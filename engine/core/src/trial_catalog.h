// TrialCatalog: what a trial knows from its parsed index files, kept the way smdebug's trial
// does (docs/trial-format.md §6–§8): tensors with their (step, worker) entries and folded stored
// reductions, first-seen-wins mode maps, workers per global step, last_complete_step with the
// incomplete-step window, loaded_all_steps, and the availability states. No I/O.
// Thread-compatible: mutators must not run concurrently with anything; const methods may run
// concurrently with each other.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "catalog_entries.h"
#include "flat_map.h"
#include "index_file_view.h"
#include "litmus/engine/trial.h"
#include "litmus/format/index_model.h"
#include "litmus/format/mode.h"

namespace litmus::internal {

struct TensorRecord {
  // The tensor's name: a view of the catalog's own copy, valid as long as the catalog.
  std::string_view name;
  // Every entry of the tensor, in the order created (addresses stable: the reader's cache keys).
  TensorEntries entries;
  // While dense, entries[i] is the only entry of the known step at position dense_first + i
  // among all known global steps (TrialCatalog::global_to_mode_), and `steps` is empty: a tensor
  // saved at every step (from some step on, up to some step) costs no step key or pointer. The
  // first step saved twice (several workers), skipped, or a known step inserted before the last
  // one (a straggler) makes the tensor sparse for good: then `steps` maps each of its global
  // steps to its entries by worker (16 bytes a step more).
  bool dense = true;
  size_t dense_first = 0;
  FlatMap<int64_t, WorkerEntries> steps;
  // (mode, mode step) of this tensor's entries -> global step (first seen wins). A GLOBAL-mode
  // entry is keyed by its mode step, which is how tensor.value(step, mode=GLOBAL) finds it.
  // Empty while the catalog derives it from the trial's own mode maps (TrialCatalog::
  // mode_steps_derived_): 24 bytes an entry that most trials never need.
  FlatMap<std::pair<Mode, int64_t>, int64_t> mode_steps;
  // Not catalog data but the reader's hint (trial.cc): one bit per computed reduction that a
  // caller asked of this tensor, so that the reader computes it as soon as it decodes the next
  // value. Set from any thread by readers; an atomic, so that no lock or name lookup is needed.
  mutable std::atomic<uint32_t> reductions_asked{0};
  // Also the reader's: whether Trial::CollectStatistics asked for this tensor's statistics, as of
  // its call numbered statistics_generation (both guarded by the trial's statistics lock), so
  // that a prefetch looks the name up once per CollectStatistics call rather than per value.
  mutable uint32_t statistics_generation = 0;
  mutable bool statistics_asked = false;
  // Also the reader's: whether a rule has read a raw value of this tensor (Trial::Value's
  // rule_read), after which Prefetch keeps its values whole. Set once, from any thread.
  mutable std::atomic<bool> raw_read{false};
  // Set the bits / flag above. (Read first: they are usually set already, and a write would take
  // the cache line from the reading threads every time.)
  void NoteReductionAsked(uint32_t reduction_key) const {
    const uint32_t asked = uint32_t{1} << reduction_key;
    if ((reductions_asked.load(std::memory_order_relaxed) & asked) == 0) {
      reductions_asked.fetch_or(asked, std::memory_order_relaxed);
    }
  }
  void NoteRawRead() const {
    if (!raw_read.load(std::memory_order_relaxed)) raw_read.store(true, std::memory_order_relaxed);
  }
  // Modes this tensor has entries in (ModeBit), so that the per-mode name sets are touched once
  // per tensor and mode rather than once per entry.
  uint32_t modes_seen = 0;
  // False once two global steps of this tensor had the same (mode, mode step): only while it is
  // true may the reader take an entry's own mode step for what mode_steps says (see
  // TrialCatalog::ResolveTensorStep).
  bool mode_steps_unique = true;
  static uint32_t ModeBit(Mode mode) { return uint32_t{1} << static_cast<uint32_t>(mode); }
  bool HasEntriesIn(Mode mode) const { return (modes_seen & ModeBit(mode)) != 0; }
};

// The workers of one global step, in name order, once each: views of names that outlive it. One
// pointer in size (8 bytes a step of the usual single worker; a vector took 56).
class StepWorkers {
 public:
  StepWorkers() = default;
  StepWorkers(StepWorkers&& other) noexcept : head_(std::exchange(other.head_, nullptr)) {}
  StepWorkers& operator=(StepWorkers&& other) noexcept {
    if (this != &other) {
      delete several();
      head_ = std::exchange(other.head_, nullptr);
    }
    return *this;
  }
  StepWorkers(const StepWorkers&) = delete;
  StepWorkers& operator=(const StepWorkers&) = delete;
  ~StepWorkers() { delete several(); }

  std::span<const std::string* const> all() const {
    if (const std::vector<const std::string*>* list = several()) return *list;
    return {&head_, head_ == nullptr ? 0u : 1u};
  }
  // Adds `worker` unless present.
  void Insert(const std::string* worker) {
    if (head_ == nullptr) {
      head_ = worker;
      return;
    }
    std::vector<const std::string*>* list = several();
    if (list == nullptr) {
      if (head_ == worker) return;
      list = new std::vector<const std::string*>{head_};
      head_ = reinterpret_cast<const std::string*>(reinterpret_cast<uintptr_t>(list) | kSeveral);
    }
    const auto at = std::lower_bound(list->begin(), list->end(), worker,
                                     [](const std::string* a, const std::string* b) { return *a < *b; });
    if (at == list->end() || *at != worker) list->insert(at, worker);
  }

 private:
  static_assert(alignof(std::string) > 1 && alignof(std::vector<const std::string*>) > 1, "the low bit is free");
  static constexpr uintptr_t kSeveral = 1;
  std::vector<const std::string*>* several() const {
    const auto bits = reinterpret_cast<uintptr_t>(head_);
    return (bits & kSeveral) != 0 ? reinterpret_cast<std::vector<const std::string*>*>(bits & ~kSeveral) : nullptr;
  }
  // null, the only worker, or (low bit set) the owned list of two or more.
  const std::string* head_ = nullptr;
};

class TrialCatalog {
 public:
  TrialCatalog() = default;
  // Frees the entries on several threads: a trial of small tensors holds hundreds of thousands
  // of them, and freeing them one by one took a noticeable part of a short run.
  ~TrialCatalog();
  // Not copyable: its name indexes point into its own tensor map.
  TrialCatalog(const TrialCatalog&) = delete;
  TrialCatalog& operator=(const TrialCatalog&) = delete;

  // _meta.num_workers of the collections file; steps complete when that many workers wrote them.
  void SetNumWorkers(int64_t num_workers) { num_workers_ = num_workers; }
  int64_t num_workers() const { return num_workers_; }

  // Registers every entry (tensor, stored reduction, shape) of the index file of (global_step,
  // worker). Notes about entries that cannot be represented (a reduction name litmus does not
  // know) are appended to *warnings.
  // (The catalog copies what it keeps: the view's text may go once this returns.)
  void AddIndexFile(int64_t global_step, const std::string& worker, const IndexFileView& index,
                    std::vector<std::string>* warnings);
  // How many index files the refresh in progress has still to add after the current one (a hint
  // for growing the per-tensor step maps; 0 when unknown).
  void set_files_ahead(size_t files) { files_ahead_ = files; }
  // smdebug's incomplete-step window (§8.3), applied after a refresh that found new index files:
  // with K distinct known global steps, if K - (last_complete_step + 1) > window then
  // last_complete_step += window / 2.
  void ApplyWaitWindow(int64_t window);
  // End of training (§8.4): loaded_all_steps = true, last_complete_step = the largest known step.
  void MarkAllStepsLoaded();

  bool loaded_all_steps() const { return loaded_all_steps_; }
  int64_t last_complete_step() const { return last_complete_step_; }

  std::vector<int64_t> Steps(Mode mode, bool include_incomplete) const;
  bool HasMode(Mode mode) const;
  std::optional<int64_t> GlobalStep(Mode mode, int64_t mode_step) const;
  std::optional<std::pair<Mode, int64_t>> ModeOfGlobalStep(int64_t global_step) const;
  std::vector<std::string> WorkersForStep(int64_t global_step) const;
  // A known global step written by all workers, or any known step once all steps are loaded or
  // when it is <= last_complete_step. False for unknown steps.
  bool IsStepComplete(int64_t global_step) const;
  std::optional<int64_t> FirstStepAtOrAfter(int64_t step) const;
  // The largest known global step, complete or not; nullopt if none.
  std::optional<int64_t> LastKnownStep() const;
  StepState StepAvailability(int64_t step, Mode mode) const;

  std::vector<std::string> TensorNames() const;
  std::vector<std::string> TensorNamesAtStep(int64_t global_step) const;
  // The names saved at `global_step`, in name order, as views of the catalog's own copies (valid
  // as long as the catalog); with `among` (views of the catalog's names, sorted), only those of
  // them. Rules ask "which of these tensors were saved at this step" at every step: no copies.
  std::vector<std::string_view> TensorNameViewsAtStep(int64_t global_step,
                                                      const std::vector<std::string_view>* among = nullptr) const;
  std::vector<std::string> TensorNamesForMode(Mode mode) const;
  // TensorNamesForMode as views of the catalog's own copies (valid as long as the catalog).
  std::vector<std::string_view> TensorNameViewsForMode(Mode mode) const;
  // The tensor named `name`; found by address first when `name` views the catalog's own copy.
  const TensorRecord* FindTensor(std::string_view name) const;
  const std::map<std::string, TensorRecord>& tensors() const { return tensors_; }

  // Global steps of a tensor, with smdebug's per-tensor completeness rule (§8.3 Tensor.steps
  // bug: only loaded_all_steps or step <= last_complete_step count).
  std::vector<int64_t> TensorSteps(const std::string& name, bool include_incomplete) const;
  // Mode steps of a tensor in `mode` (global steps for kGlobal), with the same rule; for a
  // non-GLOBAL mode smdebug compares the *mode* step with last_complete_step, and so do we.
  std::vector<int64_t> TensorModeSteps(const std::string& name, Mode mode, bool include_incomplete) const;
  // The global step of `tensor`'s entry at (mode, mode step) (first seen wins), or nullopt: what
  // the tensor's mode_steps map holds, derived while that map is not kept.
  std::optional<int64_t> TensorGlobalStep(const TensorRecord& tensor, Mode mode, int64_t mode_step) const;
  // Whether the per-tensor mode_steps maps are derived (not stored); tests check both states.
  bool mode_steps_derived() const { return mode_steps_derived_; }
  // The entries of `tensor` at `global_step` (no mode-step resolution); empty if none.
  StepEntryList StepEntries(const TensorRecord& tensor, int64_t global_step) const;
  // The position of `global_step` among the tensor's saved steps in ascending order (ForEachStep's
  // order), or nullopt if the tensor has no entry there. One search, no list made.
  std::optional<size_t> StepPosition(const TensorRecord& tensor, int64_t global_step) const;
  // Calls f(global step, its entries) for every global step of `tensor`, in step order.
  template <typename F>
  void ForEachStep(const TensorRecord& tensor, F&& f) const {
    if (!tensor.dense) {
      for (const auto& [global_step, by_worker] : tensor.steps) f(global_step, by_worker.view());
      return;
    }
    for (size_t i = 0; i < tensor.entries.size(); ++i) {
      f(global_to_mode_.item(tensor.dense_first + i).first, StepEntryList(&tensor.entries[i]));
    }
  }
  // What the entries' numbers refer to: their index files and rare parts.
  const EntryFiles& files() const { return files_; }
  // The global step whose entries tensor.value(step, mode) reads, with those entries: for
  // kGlobal the tensor's GLOBAL-mode entry with that mode step if any, else the tensor's entry at
  // the (mode, mode step) of global step `step`; for other modes the entry at (mode, step).
  // nullopt if none. (Every read of a value resolves its step: the usual case, a tensor read at a
  // global step where it was saved, costs one lookup in the tensor's maps.)
  struct ResolvedStep {
    int64_t global_step;
    StepEntryList entries;  // never empty
  };
  std::optional<ResolvedStep> ResolveTensorStep(const TensorRecord& tensor, int64_t step, Mode mode) const;

 private:
  // A known global step, as found in global_to_mode_.
  using KnownStep = FlatMap<int64_t, std::pair<Mode, int64_t>>::const_iterator;
  // The entries of `tensor` at the known step (found by the step's position among all known
  // steps while the tensor is dense); empty if none.
  StepEntryList EntriesAt(const TensorRecord& tensor, KnownStep known) const;
  // Makes `tensor` sparse: builds its step map from its dense entries.
  void MakeSparse(TensorRecord& tensor);
  // Grows a full per-tensor step map for the steps the refresh in progress can still add, at
  // once: a tensor saved at every step then does not reallocate (touching fresh memory each
  // time) while a trial with thousands of steps is opened. Only a tensor saved at every known
  // step so far reserves for every file ahead (exactly: no slack once the trial is open; the
  // map is the catalog's largest part). Others are capped, so that a tensor saved rarely
  // reserves a bounded amount of address space, most of it never touched. Otherwise grows by
  // half (amortised O(1) appends while a live trial adds a few steps per refresh).
  template <typename Map>
  void GrowForFilesAhead(Map& map) const {
    constexpr size_t kMaxStepsAhead = 4096;
    if (map.size() < map.capacity()) return;
    // (The entry being added is at the newest known step, already in global_to_mode_.)
    const bool every_step = map.size() + 1 >= global_to_mode_.size();
    const size_t ahead = every_step ? files_ahead_ : std::min(files_ahead_, kMaxStepsAhead);
    map.reserve(map.size() + std::max({ahead + 1, map.size() / 2, size_t{4}}));
  }
  // Grows a trial-wide step map (one item a global step) for the steps the refresh in progress
  // can still add, at once: a trial opened late then has no doubling slack in them, and no old
  // and new copy at the same time. (Files ahead over the workers seen: one file a step each.)
  template <typename Map>
  void GrowStepMap(Map& map) const {
    if (map.size() < map.capacity()) return;
    const size_t workers = std::max<size_t>(worker_names_.size(), 1);
    map.reserve(map.size() + std::max({files_ahead_ / workers + 1, map.size() / 2, size_t{16}}));
  }
  void NoteStep(int64_t global_step, const std::string& worker, Mode mode, int64_t mode_step);
  // Builds every tensor's mode_steps map from its entries, and keeps them from then on.
  void MaterializeModeSteps();
  // The entry of (name, global_step, the file's worker), created as an entry of index file
  // number `file_number` if new.
  CatalogEntry& EntryFor(std::string_view name, int64_t global_step, uint32_t file_number);

  EntryFiles files_;  // what the entries of each index file share, and the entries' extras
  size_t files_ahead_ = 0;
  int64_t num_workers_ = 0;
  bool loaded_all_steps_ = false;
  int64_t last_complete_step_ = -1;
  FlatMap<int64_t, std::pair<Mode, int64_t>> global_to_mode_;
  // (Sorted vectors rather than trees: steps arrive in order, and a tree node per step cost
  // ~50 bytes a step.)
  std::map<Mode, FlatMap<int64_t, int64_t>> mode_to_global_;  // never holds kGlobal
  // GLOBAL-mode index files: mode step -> global step (first seen wins). With mode_to_global_,
  // the owner of every (mode, mode step) of the trial.
  FlatMap<int64_t, int64_t> global_mode_owner_;
  // True while no (mode, mode step) was seen at two global steps in the whole trial. Then a
  // tensor's (mode, mode step) can only be at its owner's global step, and the per-tensor
  // mode_steps maps are derived from the owners and the entries instead of stored (they took a
  // third of the catalog). Cleared for good, and the maps built, the first time one is.
  bool mode_steps_derived_ = true;
  // The workers of each global step: views of worker_names_ in name order.
  FlatMap<int64_t, StepWorkers> workers_for_step_;
  std::set<std::string> worker_names_;  // every worker, once (nodes never move)
  // Names in this set view tensors_'s keys.
  std::map<Mode, std::set<std::string_view>> tensors_for_mode_;  // never holds kGlobal
  std::map<std::string, TensorRecord> tensors_;
  // tensors_ by name, hashed: every read looks its tensor up, and comparing long names that
  // share a prefix ("gradients/layer_12/...") in the ordered map showed in profiles. Keys view
  // tensors_'s keys (map nodes never move).
  std::unordered_map<std::string_view, TensorRecord*> by_name_;
  // tensors_ by the address of their name's characters: a caller that holds the trial's own
  // view of a name (Trial::SavedTensorName; the runner's read keys do) is found without hashing
  // or comparing the name. (No other string can have those characters' address while the
  // catalog lives, so the address and the length identify the name.)
  std::unordered_map<const char*, TensorRecord*> by_address_;
};

}  // namespace litmus::internal
