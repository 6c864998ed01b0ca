// TensorBoard histograms (HistogramProto) built the way smdebug's hook builds them: TensorFlow's
// default bucket edges, counts trimmed to the buckets that hold values plus one empty bucket on
// the left, each bucket known by its right limit; runs of empty buckets merged as TensorFlow
// merges them. Conventions and the deliberate differences from smdebug (non-finite values,
// values beyond the outermost edges, merged empty runs): docs/report.md "From the writer".
// Pure functions and a value-type builder; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace litmus::tensorboard {

// HistogramProto's fields (proto/summary.proto). Bucket i counts the values in
// [bucket_limit[i-1], bucket_limit[i]) (for i == 0, everything below bucket_limit[0]).
struct Histogram {
  double min = 0;
  double max = 0;
  double num = 0;
  double sum = 0;
  double sum_squares = 0;
  std::vector<double> bucket_limit;
  std::vector<double> bucket;
};

// TensorFlow's default bucket edges (tensorflow/core/lib/histogram/histogram.cc, ported by
// smdebug's _get_default_bins): 1e-12 * 1.1^k for k = 0, 1, ... while below 1e20, their
// negatives, and 0, ascending (1549 edges, so 1548 buckets).
std::span<const double> DefaultBucketEdges();

// Accumulates values into the buckets between DefaultBucketEdges: value v goes into the bucket
// [e_i, e_i+1) holding it, values at or beyond the outermost edges into the outermost buckets
// (so the counts always sum to num). NaN and infinities are left out (TensorBoard cannot draw
// them; TensorFlow's histogram op refuses them) and only counted in skipped().
class HistogramBuilder {
 public:
  HistogramBuilder();

  void Add(double value);
  int64_t num() const { return num_; }
  int64_t skipped() const { return skipped_; }

  // REQUIRES: num() > 0. min/max/num/sum/sum_squares of the added finite values; buckets from
  // the one before the first non-empty bucket (count 0, its right limit the left edge of the
  // first non-empty one) to the last non-empty one, as smdebug's _make_histogram trims them,
  // with each run of empty buckets in between merged into one, as TensorFlow's
  // Histogram::EncodeToProto merges them.
  Histogram Build() const;

 private:
  std::vector<int64_t> counts_;  // one per bucket between DefaultBucketEdges
  int64_t num_ = 0;
  int64_t skipped_ = 0;
  double min_ = 0, max_ = 0, sum_ = 0, sum_squares_ = 0;
};

}  // namespace litmus::tensorboard
