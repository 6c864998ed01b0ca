// TensorBoard histograms: TensorFlow's default bucket edges and the trimmed HistogramProto
// layout; see tensorboard_histogram.h. Thread-compatible (the edge table is built once,
// thread-safely).
#include "litmus/format/tensorboard_histogram.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace litmus::tensorboard {
namespace {

std::vector<double> MakeDefaultEdges() {
  std::vector<double> positive;
  // Repeated multiplication, not pow(): the same doubles as TensorFlow's and smdebug's loops.
  for (double v = 1e-12; v < 1e20; v *= 1.1) positive.push_back(v);
  std::vector<double> edges;
  edges.reserve(2 * positive.size() + 1);
  for (auto it = positive.rbegin(); it != positive.rend(); ++it) edges.push_back(-*it);
  edges.push_back(0.0);
  edges.insert(edges.end(), positive.begin(), positive.end());
  return edges;
}

}  // namespace

std::span<const double> DefaultBucketEdges() {
  static const std::vector<double> edges = MakeDefaultEdges();
  return edges;
}

HistogramBuilder::HistogramBuilder() : counts_(DefaultBucketEdges().size() - 1, 0) {}

void HistogramBuilder::Add(double value) {
  if (!std::isfinite(value)) {
    ++skipped_;
    return;
  }
  const std::span<const double> edges = DefaultBucketEdges();
  // Index of the last edge <= value; values below the first edge count in bucket 0, values at
  // or above the last edge in the last bucket.
  const auto above = std::upper_bound(edges.begin(), edges.end(), value);
  size_t bucket = above == edges.begin() ? 0 : static_cast<size_t>(std::distance(edges.begin(), above)) - 1;
  if (bucket >= counts_.size()) bucket = counts_.size() - 1;
  ++counts_[bucket];
  if (num_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++num_;
  sum_ += value;
  sum_squares_ += value * value;
}

Histogram HistogramBuilder::Build() const {
  Histogram h;
  h.min = min_;
  h.max = max_;
  h.num = static_cast<double>(num_);
  h.sum = sum_;
  h.sum_squares = sum_squares_;
  if (num_ == 0) return h;
  const std::span<const double> edges = DefaultBucketEdges();
  size_t first = 0;
  while (counts_[first] == 0) ++first;
  size_t last = counts_.size() - 1;
  while (counts_[last] == 0) --last;
  // TensorBoard knows a bucket by its right limit only, so an empty bucket goes first: its right
  // limit is the left edge of the first non-empty bucket (edges[first]).
  h.bucket_limit.push_back(edges[first]);
  h.bucket.push_back(0);
  for (size_t b = first; b <= last; ++b) {
    h.bucket_limit.push_back(edges[b + 1]);
    h.bucket.push_back(static_cast<double>(counts_[b]));
  }
  return h;
}

}  // namespace litmus::tensorboard
