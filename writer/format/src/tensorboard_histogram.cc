// TensorBoard histograms: TensorFlow's default bucket edges and the trimmed HistogramProto
// layout; see tensorboard_histogram.h. Thread-compatible (the edge table is built once,
// thread-safely).
#include "litmus/format/tensorboard_histogram.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>

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

// The cell of a double: its top 16 bits (sign, exponent, 4 mantissa bits). A cell spans a
// factor of at most 2^(1/16) < 1.1, so it holds at most one edge.
size_t Cell(double v) { return static_cast<size_t>(std::bit_cast<uint64_t>(v) >> 48); }

// Per cell, the bucket of the cell's first value: a guess at most one bucket off for any value
// of the cell, which Add corrects with a comparison or two (a binary search per element cost
// ~50 ns, mostly mispredicted branches).
std::vector<uint16_t> MakeCellGuesses(std::span<const double> edges) {
  std::vector<uint16_t> guesses(size_t{1} << 16);
  for (size_t cell = 0; cell < guesses.size(); ++cell) {
    const double first = std::bit_cast<double>(static_cast<uint64_t>(cell) << 48);
    size_t bucket = 0;
    if (!std::isnan(first)) {
      const auto above = std::upper_bound(edges.begin(), edges.end(), first);
      bucket = above == edges.begin() ? 0 : static_cast<size_t>(above - edges.begin()) - 1;
      bucket = std::min(bucket, edges.size() - 2);
    }
    guesses[cell] = static_cast<uint16_t>(bucket);
  }
  return guesses;
}

}  // namespace

std::span<const double> DefaultBucketEdges() {
  static const std::vector<double> edges = MakeDefaultEdges();
  return edges;
}

namespace {
const std::vector<uint16_t>& CellGuesses() {
  static const std::vector<uint16_t> guesses = MakeCellGuesses(DefaultBucketEdges());
  return guesses;
}
}  // namespace

HistogramBuilder::HistogramBuilder() : counts_(DefaultBucketEdges().size() - 1, 0) {}

void HistogramBuilder::Add(double value) {
  if (!std::isfinite(value)) {
    ++skipped_;
    return;
  }
  const std::span<const double> edges = DefaultBucketEdges();
  // The bucket b with edges[b] <= value < edges[b + 1]; values below the first edge count in
  // bucket 0, values at or above the last edge in the last bucket.
  size_t bucket = CellGuesses()[Cell(value)];
  while (bucket > 0 && value < edges[bucket]) --bucket;
  while (bucket + 1 < counts_.size() && value >= edges[bucket + 1]) ++bucket;
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
    // A run of empty buckets becomes one (its right limit the run's last), as TensorFlow's
    // Histogram::EncodeToProto does: the same histogram, known by right limits, in far fewer
    // buckets (values spread over [-1, 1] would otherwise keep ~560 mostly empty ones).
    if (counts_[b] == 0 && h.bucket.back() == 0) {
      h.bucket_limit.back() = edges[b + 1];
      continue;
    }
    h.bucket_limit.push_back(edges[b + 1]);
    h.bucket.push_back(static_cast<double>(counts_[b]));
  }
  return h;
}

}  // namespace litmus::tensorboard
