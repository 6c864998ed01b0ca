// SeriesStore: what a rule said it watched (ABI 1.3 report_series / report_threshold /
// report_recommendation), bounded in memory whatever the length of the job: each series keeps at
// most kMaxBuckets buckets (consecutive points merged pairwise when full, each bucket keeping the
// minimum, maximum and mean of its points), and every value published at a step where the rule
// fired (MarkFiring) exactly. Serialized as rule-reports/<rule>.series.json (ToJson), which
// `litmus report` reads (docs/report.md). Thread-compatible: one rule's calls at a time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace litmus {

class SeriesStore {
 public:
  // Per series: buckets kept; beyond it, neighbours merge (halving the count). A 100k-step job
  // keeps 512..1024 buckets of ~100-200 steps each.
  static constexpr size_t kMaxBuckets = 1024;
  // Series per rule; later ones are counted (dropped_series, each series once) but not kept.
  static constexpr size_t kMaxSeries = 256;
  // Dropped series told apart for that count (by a hash of their key, 8 bytes each); beyond
  // it, further ones are not counted.
  static constexpr size_t kMaxDroppedCounted = size_t{1} << 20;
  // Points of each series MarkFiring can still find (the most steps of one call: --rule-batch-steps).
  static constexpr size_t kRecentPoints = 64;
  // Exact values at firing steps, per series (a --keep-going job that fires at every step keeps
  // the first ones).
  static constexpr size_t kMaxFirings = 4096;
  static constexpr size_t kMaxRecommendations = 16;
  static constexpr size_t kMaxTextBytes = 2048;

  struct Bucket {
    int64_t first_step = 0;
    int64_t last_step = 0;
    int32_t mode = 0;       // LITMUS_MODE_* of first_step (0: unknown)
    int64_t count = 0;      // points merged
    int64_t finite = 0;     // of which finite
    double sum = 0;         // of the finite ones
    double min = 0;         // of the finite ones (meaningless when finite == 0)
    double max = 0;
    double first_value = 0;  // the first point's value as published (NaN, inf kept)
  };
  struct Point {
    int64_t step = 0;
    int32_t mode = 0;
    double value = 0;
  };
  struct Series {
    std::string name;
    std::string tensor;  // empty: a series of the rule itself
    std::vector<Bucket> buckets;
    int64_t points_per_bucket = 1;  // the most points a bucket holds (doubles at each merge)
    int64_t total_points = 0;
    // The last kRecentPoints points published, oldest first from recent_next once full (for
    // MarkFiring: a call of several steps publishes the later steps' points before the runner
    // learns that an earlier one fired).
    std::vector<Point> recent;
    size_t recent_next = 0;
    std::vector<Point> firings;
  };
  struct Threshold {
    double value = 0;
    int32_t fires_when = 0;  // LITMUS_FIRES_*
  };
  // A point as published, for a consumer that wants every one (TensorBoard, TakeNewPoints).
  struct NewPoint {
    uint32_t series = 0;  // index into series()
    int64_t step = 0;
    double value = 0;
  };

  // Records one value. `mode` is the LITMUS_MODE_* of the step (0 if unknown). Returns the
  // series' position for AddAt, kDropped if the store is full without it, kNotFound if disabled.
  uint32_t Add(std::string_view name, std::string_view tensor, int64_t step, int32_t mode, double value);
  // The position in series() of the series (name, tensor) as Add keys it (names compared whole,
  // before truncation), or kNotFound (never added, dropped beyond kMaxSeries, or disabled).
  // A position stays valid for the store's life (series are never removed; Disable makes every
  // later AddAt a no-op): a caller that publishes the same series again and again finds it once
  // and then calls AddAt, with no string work per point.
  static constexpr uint32_t kNotFound = ~uint32_t{0};
  // What a caller may keep for a series the store dropped (full()): AddAt ignores it.
  static constexpr uint32_t kDropped = kNotFound - 1;
  uint32_t Find(std::string_view name, std::string_view tensor) const;
  // True once kMaxSeries series are kept, or when disabled: then a series Find does not know
  // is never kept (a caller may stop passing its points).
  bool full() const { return disabled_ || series_.size() >= kMaxSeries; }
  // Add to the series at `index` (from Find; an index not in series() is ignored).
  void AddAt(uint32_t index, int64_t step, int32_t mode, double value);
  // A series has at most one threshold per side (fires_when): an upper and a lower bound.
  void SetThreshold(std::string_view series, double value, int32_t fires_when);
  void AddRecommendation(std::string_view text);
  // The rule fired at `step`: every series keeps its newest point at `step`, if among its last
  // kRecentPoints.
  void MarkFiring(int64_t step);

  // `litmus run --no-series`: forgets what was kept and ignores every later Add, SetThreshold,
  // AddRecommendation and MarkFiring (the store stays empty: no series file, nothing to observe).
  void Disable();
  bool disabled() const { return disabled_; }

  // With `on`, Add also keeps each point for TakeNewPoints (off by default: no cost).
  void set_keep_new_points(bool on) { keep_new_points_ = on; }
  // The points published since the last call, in order.
  std::vector<NewPoint> TakeNewPoints();

  const std::vector<Series>& series() const { return series_; }
  const std::map<std::string, std::vector<Threshold>>& thresholds() const { return thresholds_; }
  const std::vector<std::string>& recommendations() const { return recommendations_; }
  int64_t dropped_series() const { return dropped_series_; }
  bool empty() const { return series_.empty() && thresholds_.empty() && recommendations_.empty(); }
  // Changes with every Add/SetThreshold/AddRecommendation/MarkFiring (to skip unchanged writes).
  uint64_t version() const { return version_; }

  // The rule-reports/<rule>.series.json document (docs/report.md), JSON text. A document of at
  // least kParallelBuckets buckets is formatted in kParts parts at once (its doubles' text is
  // most of a rule's last write, which the job's verdict waits for).
  static constexpr size_t kParallelBuckets = 32768;
  static constexpr size_t kParts = 4;
  std::string ToJson(std::string_view rule, std::string_view rule_class) const;
  // The same text in consecutive pieces, as they were formatted (a writer writes them one after
  // the other: joining a large document's parts copied it into fresh memory once more).
  std::vector<std::string> ToJsonPieces(std::string_view rule, std::string_view rule_class) const;

 private:
  static void Merge(Bucket& into, const Bucket& from);
  static void AppendSeriesJson(std::string& out, const Series& s);
  static void Compact(Series& s);

  std::vector<Series> series_;
  std::unordered_map<std::string, uint32_t> index_;  // Key(name, tensor) -> position (series_store.cc)
  std::map<std::string, std::vector<Threshold>> thresholds_;  // by fires_when
  std::vector<std::string> recommendations_;
  int64_t dropped_series_ = 0;
  std::unordered_set<size_t> dropped_keys_;  // hashes of the dropped series' keys (counted once)
  uint64_t version_ = 0;
  bool keep_new_points_ = false;
  bool disabled_ = false;
  std::vector<NewPoint> new_points_;
  std::string key_;  // reused lookup key (Add)
  uint32_t next_ = 0;  // the series Add tries first
};

}  // namespace litmus
