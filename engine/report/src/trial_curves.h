// TrialCurves: what the HTML report shows of the trial itself: its workers, steps and modes, the
// loss curves by mode (the `losses` collection) and statistics over steps of the tensors the rules
// watched (mean, min/max band, NaN and inf counts). Incremental and bounded: each Update reads
// only the steps saved since the previous one, the curves are kept in SeriesStores (at most 1024
// buckets per curve, min/max kept), and a watched tensor is read at every step up to
// kFullSteps of its steps, then at every 2nd, 4th, ... step (the stride doubles each time the steps
// seen reach kFullSteps times it), so a job of N steps reads each watched tensor
// ~kFullSteps * (1 + log2(N / kFullSteps) / 2) times whatever its length. Losses (scalars) are
// read at every step. With `litmus run` (the runner's trial, `collected`), the statistics of a
// watched tensor at a step the rules read come from the runner's own reads (Trial::
// CollectStatistics: computed in its prefetch while the value is hot); only the values the rules
// did not read are read here. Thread-compatible.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "litmus/engine/reductions.h"
#include "litmus/engine/trial.h"
#include "litmus/format/env.h"
#include "plugin/series_store.h"

namespace litmus::report {

struct TrialInfo {
  bool open = false;
  std::string error;  // why the trial could not be read ("" if it could, or not tried)
  size_t workers = 0;
  int64_t steps = 0;  // global steps
  std::optional<int64_t> first_step, last_step;
  std::map<std::string, int64_t> steps_by_mode;  // "TRAIN" -> count
  bool ended = false;                            // the end-of-training marker was seen
};

class TrialCurves {
 public:
  static constexpr int64_t kFullSteps = 1024;
  // Watched tensors kept (5 curves each in one SeriesStore of SeriesStore::kMaxSeries).
  static constexpr size_t kMaxWatched = 48;
  // Curves of stats(): per watched tensor (SeriesStore tensor = its name).
  static constexpr const char* kMean = "mean";
  static constexpr const char* kMin = "min";
  static constexpr const char* kMax = "max";
  static constexpr const char* kNan = "NaN count";
  static constexpr const char* kInf = "inf count";

  // `env` (not owned, outlives this) reads `trial` (a folder or s3:// prefix; "" = none).
  TrialCurves(Env* env, std::string trial);
  // Reads through `trial` (not owned, e.g. `litmus run`'s own: JobObserver::TrialOpened): no
  // second Trial, no second parsing of its index files, values its cache still holds not read
  // again. Update never refreshes it (its owner does) and never opens another.
  // With `collected`, the statistics of the values the trial's prefetch decodes are taken from
  // it (Trial::TakeStatistics) instead of reading the values again: this object asks the trial
  // to collect those of the watched tensors (CollectStatistics) at every Update.
  explicit TrialCurves(const Trial* trial, bool collected = false);
  ~TrialCurves();

  // Tensors whose statistics to keep (the rules' published tensors); added to, never removed.
  // Names the trial does not hold are ignored. Beyond kMaxWatched, later names are dropped.
  void Watch(const std::vector<std::string>& tensors);
  // Opens the trial (the first time) and reads what it gained. Never fails: a trial that cannot
  // be read leaves info().error set and the curves as they were. `through`: the statistics of
  // steps after it are left for a later Update (`litmus run`: the steps the rules have not
  // evaluated yet, whose values its prefetch has not read yet).
  void Update(std::optional<int64_t> through = std::nullopt);

  const TrialInfo& info() const { return info_; }
  // Losses: series name = the mode ("TRAIN", "EVAL", ...), tensor = the loss tensor.
  const SeriesStore& losses() const { return losses_; }
  const SeriesStore& stats() const { return stats_; }
  const std::vector<std::string>& watched() const { return watched_; }
  size_t watched_dropped() const { return watched_dropped_; }
  // The steps a watched tensor is read at: every stride(t)-th of its steps (1 = all).
  int64_t stride(const std::string& tensor) const;
  // Whether the `position`-th step of a watched tensor is one its curves read (the plan above).
  static bool PlannedPosition(int64_t position);
  // With `collected`: takes what the trial collected so far (as Update does first), keeping only
  // the statistics of planned steps. A job calls it between rewrites of its page, so that the
  // trial's bounded buffer of collected statistics (Trial::kMaxCollectedStatistics) never fills
  // and nothing the runner read is read again.
  void TakeCollectedStatistics();
  // Statistics points taken from the trial's collected statistics, and values read here.
  int64_t statistics_collected() const { return statistics_collected_; }
  int64_t values_read() const { return values_read_; }

 private:
  struct Cursor {
    int64_t last_step = INT64_MIN;  // the last step considered
    int64_t seen = 0;               // steps considered
    int64_t stride = 1;
  };
  void ReadLosses();
  // The watched tensors' steps since their cursors: the values not collected read step by step in
  // batches (Prefetch), then the curves added to tensor by tensor.
  void ReadStats(std::optional<int64_t> through);
  // The statistics of watched tensor i at `step`; `mode`: the LITMUS_MODE_* of `step`.
  void AddStats(uint32_t i, int64_t step, int32_t mode, const TensorStatistics& s);
  // The statistics the trial collected since the last Update, of watched tensors at steps after
  // their cursors (collected_ only).
  void TakeCollected();

  Env* env_;
  std::string trial_path_;
  std::unique_ptr<Trial> owned_;
  const Trial* trial_ = nullptr;  // owned_ or the borrowed one
  bool borrowed_ = false;
  TrialInfo info_;
  SeriesStore losses_;
  SeriesStore stats_;
  std::vector<std::string> watched_;
  size_t watched_dropped_ = 0;
  std::map<std::string, Cursor> loss_cursors_;
  std::map<std::string, Cursor> stat_cursors_;
  bool collected_ = false;
  size_t collecting_ = SIZE_MAX;  // how many watched tensors the trial was last asked to collect
  // By watched_ index: what the trial collected, by step (sorted; watched_index_: name -> index).
  // (Vectors: the steps come in order, and a long job's last page takes tens of thousands.)
  using Collected = std::pair<int64_t, TensorStatistics>;
  std::vector<std::vector<Collected>> pending_;
  // By watched_ index: the stats_ positions of its curves (kMean, kMin, kMax, kNan, kInf), once added.
  std::vector<std::array<uint32_t, 5>> stat_series_;
  std::unordered_map<std::string, uint32_t> watched_index_;
  int64_t statistics_collected_ = 0;
  int64_t values_read_ = 0;
};

}  // namespace litmus::report
