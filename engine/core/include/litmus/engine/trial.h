// Trial: reads a trial (a local folder or, through another Env, an S3 prefix) the way smdebug's
// trial API does (docs/trial-format.md §4–§8): discovery from final index files only,
// incremental refresh that costs O(new files), collections, modes and mode steps, completeness
// across workers, the incomplete-step window, the end-of-training marker with its final refresh,
// availability states, and values/reductions/shapes read at the exact offsets the index gives.
//
// Threading: Refresh() and the catalog queries must not run concurrently with each other (one
// "owner" thread polls and queries). Value(), Reduction() and Shape() may be called from any
// number of threads concurrently with each other (and with queries), but not concurrently with
// Refresh(). Decoded tensors are cached (byte-bounded LRU) so the same (tensor, step, worker) is
// never decoded twice while it stays in the cache.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "litmus/engine/reductions.h"
#include "litmus/engine/tensor.h"
#include "litmus/format/env.h"
#include "litmus/format/index_model.h"
#include "litmus/format/mode.h"
#include "litmus/format/trial_layout.h"
#include "litmus/status.h"

namespace litmus {

class Regex;  // Python-`re`-compatible matcher (engine/core/src/python_regex.h)

// smdebug's availability states (§8.5); kNoMoreData is UNAVAILABLE after the end of training
// for a step beyond every known step.
enum class StepState { kAvailable, kNotYetAvailable, kUnavailable, kNoMoreData };
std::string_view StepStateName(StepState state);

// What smdebug expresses with exceptions when reading a value, carried as Status::subcode() of
// the errors Trial::Value/Reduction/Shape return (frozen values; 0 = none of these).
enum class TrialError : int32_t {
  kTensorUnavailable = 1,         // NotFound: the name was never indexed
  kTensorUnavailableForStep = 2,  // NotFound: no raw record (or no reduction) at that step
  kInvalidWorker = 3,             // NotFound: that worker did not write the step
  kStepNotYetAvailable = 4,       // OutOfRange: poll again later
  kStepUnavailable = 5,           // FailedPrecondition: the step was skipped
  kNoMoreData = 6,                // FailedPrecondition: beyond the last step after the end
};
std::optional<TrialError> GetTrialError(const Status& status);
Status TrialErrorStatus(TrialError error, std::string message);

// The key under which the reader memoises a reduction on a tensor (Tensor::Memo), and its bit in
// Trial::ReductionsAsked: 2 * r + abs (r as LITMUS_REDUCTION_*; the rule workers use it too).
constexpr uint32_t ReductionMemoKey(layout::Reduction r, bool abs) { return static_cast<uint32_t>(r) * 2 + (abs ? 1 : 0); }
static_assert(ReductionMemoKey(layout::Reduction::kL2, true) < 32, "a key is a bit of a uint32_t");

// Where the reader puts the bytes of the records it reads (decoded tensors are views into them,
// tensor.h). The default is the heap; `litmus run` with isolated rules reads into memory it
// shares read-only with its rule workers (isolation/shared_arena.h). Thread-safe.
class RecordBufferAllocator {
 public:
  virtual ~RecordBufferAllocator() = default;
  // `size` uninitialised bytes, aligned to at least 16, valid while any copy of the pointer lives.
  virtual std::shared_ptr<std::byte[]> Allocate(size_t size) = 0;
};

struct TrialOptions {
  // SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW (default 1000).
  int64_t incomplete_step_wait_window = 1000;
  // SMDEBUG_TRAINING_END_DELAY_REFRESH in seconds (default 1): the longest the trial waits,
  // after the end marker is first seen, for what can still arrive (a step not complete across
  // the workers, a worker's collections file) before declaring all steps loaded. A trial with
  // nothing pending is loaded at the first refresh that sees the marker; otherwise each
  // Refresh() lists again (it never sleeps) until nothing is pending or the delay has passed.
  double training_end_delay_refresh_s = 1.0;
  // SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT (default 100): refreshes during which a record the
  // index names but its event file does not hold (absent or short) is "not yet available";
  // after that, and at once after the end of training, it is DataLoss (a damaged trial).
  int64_t missing_event_file_retry_limit = 100;
  // Only steps in [range_begin, range_end) are kept (smdebug's range_steps); end exclusive.
  int64_t range_begin = 0;
  int64_t range_end = INT64_MAX;
  // Byte budget of the decoded-tensor cache.
  size_t cache_bytes = 512ull << 20;
  // Record buffers; null = the heap.
  std::shared_ptr<RecordBufferAllocator> record_buffers;
  // Decode records in place from mapped event files (RandomAccessFile::Mapped) where the Env
  // maps them, keeping many files mapped; ignored with record_buffers. Pays off for readers that
  // come back to the same files (the Python package: one tensor at every step, then the next);
  // a one-pass reader (litmus run) measured faster with reads (copying misaligned data out of a
  // mapping costs as much as a read, and page faults and unmapping come on top).
  bool map_event_files = false;
  // Fills the unset fields above from the SMDEBUG_* environment variables.
  static TrialOptions FromEnvironment();
};

// One collection as the trial sees it.
struct Collection {
  std::string name;
  std::vector<std::string> include_regex;
  std::vector<std::string> tensor_names;              // as listed in the file
  std::optional<ReductionConfigJson> reduction_config;  // null allowed
  std::vector<std::shared_ptr<const Regex>> compiled_regex;
};

// Where one (tensor, global step, worker) lives.
struct TensorEntry {
  std::string worker;
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  std::optional<IndexEntry> location;  // raw tensor record (event file in event_file)
  // Relative to the trial root; never null in entries the trial returns. (Shared by every entry
  // of one index file: a trial of small tensors has hundreds of thousands of entries.)
  std::shared_ptr<const std::string> event_file;
  std::optional<std::vector<int64_t>> shape;  // from shape_payload
  // Stored reductions folded onto this tensor: (reduction, abs) -> record location.
  std::map<std::pair<layout::Reduction, bool>, IndexEntry> stored_reductions;
};

class Trial {
 public:
  // Opens `root` through `env` (not owned; must outlive the Trial) and performs a first
  // Refresh(). NotFound if root does not exist; InvalidArgument if it is not a folder/prefix.
  // A trial whose collections files do not exist yet opens fine: collections_ready() is false
  // and queries see no steps until they appear (smdebug's create_trial would block instead).
  static StatusOr<std::unique_ptr<Trial>> Open(Env* env, std::string root, TrialOptions options = {});
  ~Trial();

  // Lists new index files (and collections files, the end marker) and parses only those.
  // Cost is proportional to new files. DataLoss/InvalidArgument for a corrupt or malformed final
  // index/collections file (message names the file); transient I/O errors are returned as such.
  Status Refresh();

  const std::string& root() const { return root_; }
  bool collections_ready() const;            // at least one collections file parsed
  int64_t num_workers() const;               // _meta.num_workers of the first file (0 if none)
  std::vector<std::string> workers() const;  // from collections file names, sorted
  bool end_marker_seen() const;
  bool loaded_all_steps() const;             // end marker seen and final refresh done
  int64_t last_complete_step() const;        // -1 if none

  // Global steps (mode == kGlobal) or mode steps of `mode`, sorted. Only complete steps unless
  // include_incomplete. InvalidArgument-free: an unseen mode gives an empty list (see
  // HasMode for smdebug's KeyError behaviour).
  std::vector<int64_t> Steps(Mode mode = Mode::kGlobal, bool include_incomplete = false) const;
  bool HasMode(Mode mode) const;
  // The first known global step >= `step` (complete or not), in O(log steps); nullopt if none.
  std::optional<int64_t> FirstStepAtOrAfter(int64_t step) const;
  std::optional<int64_t> GlobalStep(Mode mode, int64_t mode_step) const;
  std::optional<std::pair<Mode, int64_t>> ModeOfGlobalStep(int64_t global_step) const;
  // Workers with at least one index entry at `global_step`, sorted.
  std::vector<std::string> WorkersForStep(int64_t global_step) const;
  bool IsStepComplete(int64_t global_step) const;

  // smdebug's has_passed_step (§8.5) for a step of `mode` (global step if kGlobal).
  StepState StepAvailability(int64_t step, Mode mode = Mode::kGlobal) const;

  // All tensor names (reductions folded), sorted.
  std::vector<std::string> TensorNames() const;
  // Names saved at a global step / in a mode; InvalidArgument-free filters.
  std::vector<std::string> TensorNamesAtStep(int64_t global_step) const;
  std::vector<std::string> TensorNamesForMode(Mode mode) const;
  // TensorNamesForMode as views of the trial's own names (valid as long as the Trial), sorted.
  std::vector<std::string_view> TensorNameViewsForMode(Mode mode) const;
  // TensorNamesAtStep as views of the trial's own names (valid as long as the Trial); with
  // `among` (views of the trial's names from the *View* functions here, sorted), only those.
  std::vector<std::string_view> TensorNameViewsAtStep(int64_t global_step,
                                                      const std::vector<std::string_view>* among = nullptr) const;
  // Members of a collection: listed names ∪ names an include_regex *searches*, ∩ saved tensors.
  // NotFound for an unknown collection.
  StatusOr<std::vector<std::string>> TensorNamesInCollection(const std::string& collection) const;
  // Names matching a Python regex anywhere (re.search). InvalidArgument for a bad pattern.
  StatusOr<std::vector<std::string>> TensorNamesMatching(const std::string& pattern) const;
  // TensorNamesInCollection as views of the trial's own copies of the names (valid as long as
  // the Trial): for callers that ask at every step and keep the names.
  StatusOr<std::vector<std::string_view>> TensorNameViewsInCollection(const std::string& collection) const;
  // TensorNamesMatching as views of the trial's own names; the pattern is compiled once.
  StatusOr<std::vector<std::string_view>> TensorNameViewsMatching(const std::string& pattern) const;
  const std::map<std::string, Collection>& collections() const;
  bool HasTensor(const std::string& name) const;
  // The trial's own copy of `name` if a tensor of that name was saved, else nullopt: a view valid
  // as long as the Trial, and the same view for every call with that name. With `rule_read`, a
  // rule reads the tensor's raw value from what the runner read for it (as Value()'s rule_read).
  std::optional<std::string_view> SavedTensorName(std::string_view name, bool rule_read = false) const;

  // Global steps at which `name` has an entry, sorted (complete only unless include_incomplete,
  // using smdebug's per-tensor rule: end marker or <= last_complete_step).
  std::vector<int64_t> TensorSteps(const std::string& name, bool include_incomplete = false) const;
  // The position of `step` in TensorSteps(name, /*include_incomplete=*/true), without making
  // that list; nullopt if `name` has no entry at global step `step`.
  std::optional<int64_t> TensorStepPosition(std::string_view name, int64_t step) const;
  // Mode steps of `mode` at which `name` has an entry, sorted (global steps for kGlobal); smdebug's
  // tensor.steps(mode=M): the same per-tensor rule, where smdebug compares the *mode* step with
  // last_complete_step (§8.3). Map them to global steps with GlobalStep().
  std::vector<int64_t> TensorSteps(const std::string& name, Mode mode, bool include_incomplete = false) const;
  // Entries of `name` at a global step, one per worker, sorted by worker. Empty if none.
  std::vector<TensorEntry> Entries(const std::string& name, int64_t global_step) const;

  // Resolves (step, mode) to a global step the way tensor.value(step, mode) does, then reads.
  // worker: default = the lexicographically smallest worker that wrote the step.
  // Errors carry a TrialError subcode (see above) for smdebug's exceptions; DataLoss /
  // Unimplemented (no subcode) for a corrupt record / an undecodable dtype. An index whose event
  // file is missing or too short is kStepNotYetAvailable during training (within
  // TrialOptions::missing_event_file_retry_limit refreshes) and DataLoss after that or after the
  // end marker: a damaged trial is an error, never "not saved" (the message names the file,
  // tensor, step, worker and offset).
  // `rule_read`: a rule asked for the value (the host's tensor_value). From then on Prefetch keeps
  // the tensor's values whole even where they are wanted for reductions only (its
  // reductions_only): rules that require a tensor for its reductions may still read its values
  // (built-in ones do, falling back to saved reductions), and reading each value twice would
  // cost more than keeping it.
  StatusOr<TensorPtr> Value(std::string_view name, int64_t step, Mode mode = Mode::kGlobal,
                            const std::optional<std::string>& worker = std::nullopt, bool rule_read = false) const;
  // (tensor name, global step): the raw value of the default worker, for Prefetch and Release.
  // The name is borrowed for the call (callers pass views of names they hold).
  using StepTensor = std::pair<std::string_view, int64_t>;
  // Reads the raw values of `keys` into the decoded-tensor cache with as few reads as the
  // storage favours: records of one event file that lie close together are fetched with one
  // read (RandomAccessFile::coalescing()), the files in parallel. Keys that are unknown, not
  // available, already cached or that fail to read are skipped: Value() of the same key reads
  // again and reports the error. With `out`, (*out)[i] tells what became of keys[i]: whether it
  // is now decoded without error (cached, or read by this call): what Value() of that key
  // returns, until a Refresh() (which can change what a key resolves to), has decoded fine; with
  // `with_values` that value too (taking a reference to each costs a little: only for callers
  // that use them). With `reductions_only` (empty, or a flag per key), a flagged key is wanted
  // only for the reductions asked of its tensor so far (by Reduction()): a large record of it is
  // then read into a buffer of the reading thread that is used again for the next one (so it
  // stays in the CPU caches), its reductions (and collected statistics) computed there, and
  // only a summary kept (Tensor::SummaryOf: dtype, shape, memos), which Reduction() answers
  // from and which `out` gives as the value; Value() of the key reads the record again (and
  // once a rule has read a value of the tensor, see Value's rule_read, they are kept whole).
  // Thread-safety as Value().
  struct Prefetched {
    bool decoded = false;
    bool stored_reductions = false;  // the key's entry holds stored reductions (Reduction() prefers them)
    TensorPtr value;                 // with_values: the decoded value, or its summary
  };
  void Prefetch(const std::vector<StepTensor>& keys, std::vector<Prefetched>* out = nullptr,
                bool with_values = false, std::span<const uint8_t> reductions_only = {}) const;
  // How many raw values Prefetch has reduced and kept only as summaries (reductions_only).
  uint64_t values_summarized() const;
  // A batch read for callers that use each value once (Python's Tensor.values(steps)): copies
  // the raw value of `name` at each of `steps` (of `mode`, default worker) into `out`, `each`
  // = out.size() / steps.size() bytes per step in order, reading the steps in parallel. Records
  // of mapped event files are checked and copied once, with no Tensor and no tensor cache;
  // others go through Value(). Returns one status per step: OK, the error
  // Value() gives, or InvalidArgument when the value's dtype, shape or size is not `dtype`,
  // `shape`, `each`; out's bytes for a step that is not OK are unspecified. Thread-safety as
  // Value().
  std::vector<Status> CopyValues(std::string_view name, std::span<const int64_t> steps, Mode mode, DType dtype,
                                 const std::vector<int64_t>& shape, std::span<std::byte> out) const;
  // CopyValues of many tensors at once, in file-major order (Python's Trial.values(names)): each
  // event file that holds any of the wanted records is visited once, the files in parallel, its
  // records read in coalesced runs (RandomAccessFile::coalescing()) with one read a run into a
  // reused buffer (no mapping, no system call per record), each checked as decoding checks it
  // (framing, CRCs, dtype, shape) and its content copied into the output. Where it pays: reading many
  // tensors into arrays that are all kept (measured in docs/benchmarks.md); one tensor at many
  // steps is CopyValues' case. targets[t].out holds out.size() / steps.size() bytes per step, in
  // order. Returns statuses[t][i] for step i of target t as CopyValues does (anything that does
  // not check out goes through Value(), which gives the error). The name and step spans are
  // borrowed for the call. Thread-safety as Value().
  struct ValuesTarget {
    std::string_view name;
    std::span<const int64_t> steps;
    DType dtype = DType::kFloat32;
    std::vector<int64_t> shape;
    std::span<std::byte> out;
  };
  std::vector<std::vector<Status>> CopyValuesFileMajor(std::span<const ValuesTarget> targets, Mode mode) const;
  // Drops the cached raw values of `keys` (every worker): a hint from a caller that knows nobody
  // needs them any more, so the cache holds what is still useful. Thread-safety as Value().
  void Release(const std::vector<StepTensor>& keys) const;

  // Statistics of the raw values the trial decodes anyway, for the HTML report of `litmus run`
  // (docs/report.md): after CollectStatistics, every raw value that Prefetch decodes (not one it
  // finds cached, nor one Value() reads alone) of the tensors asked for gets its
  // ComputeStatistics right after decoding, on the prefetching thread, while the data is in the
  // CPU caches, and is kept until TakeStatistics. `tensors` = nullopt: of every tensor; a list:
  // of those only (replaces the previous choice); an empty list: none (the default). At most
  // kMaxCollectedStatistics are kept between two TakeStatistics (later ones are dropped: the
  // caller reads those values itself). Thread-safe (any thread, concurrently with Prefetch).
  static constexpr size_t kMaxCollectedStatistics = 1 << 16;
  struct CollectedStatistics {
    std::string name;
    int64_t step = 0;  // global step
    TensorStatistics statistics;
  };
  void CollectStatistics(const std::optional<std::vector<std::string>>& tensors) const;
  std::vector<CollectedStatistics> TakeStatistics() const;

  // Stored reduction if one exists, else computed from the raw value (reductions.h).
  StatusOr<double> Reduction(std::string_view name, int64_t step, layout::Reduction r, bool abs,
                             Mode mode = Mode::kGlobal,
                             const std::optional<std::string>& worker = std::nullopt) const;
  // The reductions of `name` that Reduction() was asked for so far (at any step), one bit per
  // reduction: bit ReductionMemoKey(r, abs). 0 for an unknown name.
  uint32_t ReductionsAsked(std::string_view name) const;
  // Records that a rule asked `name` for the reduction of ReductionMemoKey `reduction_key`, as
  // Reduction() does, when it takes the reduction from a value the runner read for it.
  void NoteReductionAsked(std::string_view name, uint32_t reduction_key) const;
  // Whether the default worker's entry of `name` at global `step` has stored reductions (then
  // Reduction() may read one instead of computing it from the value). False if there is none.
  bool HasStoredReductions(std::string_view name, int64_t step) const;
  // Shape from shape_payload if present, else from the decoded value.
  StatusOr<std::vector<int64_t>> Shape(std::string_view name, int64_t step, Mode mode = Mode::kGlobal,
                                       const std::optional<std::string>& worker = std::nullopt) const;

  // Number of index files parsed so far (for tests of incremental refresh).
  int64_t index_files_parsed() const;
  // Non-fatal findings of Refresh(), oldest first: collections files disagreeing on num_workers,
  // collection regexes that do not compile, unknown stored-reduction names, an end marker
  // without collections files.
  std::vector<std::string> warnings() const;

 private:
  struct Impl;
  explicit Trial(std::unique_ptr<Impl> impl, std::string root);
  std::unique_ptr<Impl> impl_;
  std::string root_;
};

}  // namespace litmus
