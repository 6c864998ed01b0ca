// litmus::tensorboard::HistogramBuilder (format/tensorboard_histogram.h): TensorFlow's default
// bucket edges, bucket placement checked against a linear scan of the edges, the trimmed layout
// smdebug writes (an empty bucket first, right limits), the moments, and what it leaves out.
#include "litmus/format/tensorboard_histogram.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace litmus::tensorboard {
namespace {

using ::testing::ElementsAre;

// The bucket between DefaultBucketEdges holding v, by a linear scan (numpy's rule: [e_i, e_i+1),
// the last bucket closed), clamped to the outermost buckets.
size_t ReferenceBucket(double v) {
  const std::span<const double> e = DefaultBucketEdges();
  if (v < e[0]) return 0;
  for (size_t i = 0; i + 1 < e.size(); ++i) {
    if (v >= e[i] && v < e[i + 1]) return i;
  }
  return e.size() - 2;
}

double Total(const Histogram& h) { return std::accumulate(h.bucket.begin(), h.bucket.end(), 0.0); }

TEST(TensorBoardHistogram, DefaultEdgesAreTensorFlows) {
  const std::span<const double> e = DefaultBucketEdges();
  ASSERT_EQ(e.size(), 1549u);  // 774 positive, 774 negative, 0
  EXPECT_EQ(e[774], 0.0);
  EXPECT_EQ(e[775], 1e-12);
  EXPECT_EQ(e[773], -1e-12);
  EXPECT_DOUBLE_EQ(e[776], 1.1e-12);
  EXPECT_LT(e.back(), 1e20);
  EXPECT_GT(e.back() * 1.1, 1e20);
  for (size_t i = 0; i + 1 < e.size(); ++i) {
    ASSERT_LT(e[i], e[i + 1]) << i;
    ASSERT_EQ(e[i], -e[e.size() - 1 - i]) << i;
  }
}

TEST(TensorBoardHistogram, KnownTensor) {
  // 0 lies in [0, 1e-12); 1 and 1.0000001 share a bucket; -2 is alone on the negative side.
  HistogramBuilder b;
  for (double v : {1.0, -2.0, 0.0, 1.0000001, 3.0}) b.Add(v);
  const Histogram h = b.Build();
  EXPECT_EQ(h.min, -2.0);
  EXPECT_EQ(h.max, 3.0);
  EXPECT_EQ(h.num, 5);
  EXPECT_DOUBLE_EQ(h.sum, 1.0 - 2.0 + 0.0 + 1.0000001 + 3.0);
  EXPECT_DOUBLE_EQ(h.sum_squares, 1 + 4 + 0 + 1.0000001 * 1.0000001 + 9);
  EXPECT_EQ(Total(h), 5);
  ASSERT_EQ(h.bucket.size(), h.bucket_limit.size());
  // First an empty bucket whose right limit is the left edge of the bucket holding -2.
  const std::span<const double> e = DefaultBucketEdges();
  const size_t first = ReferenceBucket(-2.0);
  EXPECT_EQ(h.bucket[0], 0);
  EXPECT_EQ(h.bucket_limit[0], e[first]);
  EXPECT_EQ(h.bucket[1], 1);
  EXPECT_EQ(h.bucket_limit[1], e[first + 1]);
  EXPECT_LE(e[first], -2.0);
  EXPECT_GT(e[first + 1], -2.0);
  // The last bucket is the one holding 3, by its right limit.
  EXPECT_EQ(h.bucket.back(), 1);
  EXPECT_EQ(h.bucket_limit.back(), e[ReferenceBucket(3.0) + 1]);
  // Bucket of 0: right limit 1e-12, count 1; 1 and 1.0000001 together (1.1^k steps are wider).
  for (size_t i = 0; i < h.bucket.size(); ++i) {
    if (h.bucket_limit[i] == 1e-12) {
      EXPECT_EQ(h.bucket[i], 1);
    }
    if (h.bucket_limit[i] == e[ReferenceBucket(1.0) + 1]) {
      EXPECT_EQ(h.bucket[i], 2);
    }
  }
  EXPECT_EQ(ReferenceBucket(1.0), ReferenceBucket(1.0000001));
}

TEST(TensorBoardHistogram, BucketsMatchALinearScan) {
  std::mt19937 rng(7);
  std::normal_distribution<double> n(0.0, 1.0);
  std::uniform_real_distribution<double> exponent(-14, 22);
  HistogramBuilder b;
  std::vector<double> expected(DefaultBucketEdges().size() - 1, 0);
  for (int i = 0; i < 3000; ++i) {
    const double v = n(rng) * std::pow(10.0, exponent(rng));  // including |v| beyond 1e20
    b.Add(v);
    ++expected[ReferenceBucket(v)];
  }
  // Every edge itself and the doubles just below and above it (the bucket lookup starts from a
  // per-exponent guess and corrects it: the boundaries are where it could go wrong).
  int64_t added = 3000;
  for (double edge : DefaultBucketEdges()) {
    for (double v : {edge, std::nextafter(edge, -1e300), std::nextafter(edge, 1e300)}) {
      b.Add(v);
      ++expected[ReferenceBucket(v)];
      ++added;
    }
  }
  const Histogram h = b.Build();
  EXPECT_EQ(h.num, static_cast<double>(added));
  EXPECT_EQ(Total(h), static_cast<double>(added));
  // Rebuild the full bucket array from the trimmed layout: limit e[k+1] is bucket k.
  const std::span<const double> e = DefaultBucketEdges();
  std::vector<double> got(expected.size(), 0);
  for (size_t i = 1; i < h.bucket.size(); ++i) {
    const auto it = std::find(e.begin(), e.end(), h.bucket_limit[i]);
    ASSERT_NE(it, e.end());
    got[static_cast<size_t>(it - e.begin()) - 1] = h.bucket[i];
  }
  EXPECT_EQ(got, expected);
}

TEST(TensorBoardHistogram, FirstBucketNeedsAnEmptyOneBeforeIt) {
  HistogramBuilder b;
  b.Add(-1e25);  // below every edge: the first bucket
  b.Add(1e25);   // above every edge: the last bucket
  const Histogram h = b.Build();
  const std::span<const double> e = DefaultBucketEdges();
  EXPECT_EQ(h.bucket_limit.front(), e[0]);
  EXPECT_EQ(h.bucket.front(), 0);
  EXPECT_EQ(h.bucket_limit[1], e[1]);
  EXPECT_EQ(h.bucket[1], 1);
  EXPECT_EQ(h.bucket_limit.back(), e.back());
  EXPECT_EQ(h.bucket.back(), 1);
  // The 1546 empty buckets in between are one, known by its right limit.
  ASSERT_EQ(h.bucket.size(), 4u);
  EXPECT_EQ(h.bucket[2], 0);
  EXPECT_EQ(h.bucket_limit[2], e[e.size() - 2]);
  EXPECT_EQ(h.min, -1e25);
  EXPECT_EQ(h.max, 1e25);
}

TEST(TensorBoardHistogram, RunsOfEmptyBucketsAreMerged) {
  HistogramBuilder b;
  for (double v : {1e-10, 1e-10, 1.0, 1.0000001, 2.0}) b.Add(v);
  const Histogram h = b.Build();
  const std::span<const double> e = DefaultBucketEdges();
  const size_t tiny = ReferenceBucket(1e-10), one = ReferenceBucket(1.0), two = ReferenceBucket(2.0);
  // empty | 1e-10 x2 | empty run up to 1.0's bucket | 1.0 x2 | empty run | 2.0
  EXPECT_THAT(h.bucket, ElementsAre(0, 2, 0, 2, 0, 1));
  EXPECT_THAT(h.bucket_limit, ElementsAre(e[tiny], e[tiny + 1], e[one], e[one + 1], e[two], e[two + 1]));
  // Never two empty buckets in a row.
  for (size_t i = 1; i < h.bucket.size(); ++i) EXPECT_FALSE(h.bucket[i] == 0 && h.bucket[i - 1] == 0) << i;
}

TEST(TensorBoardHistogram, NonFiniteValuesAreLeftOut) {
  HistogramBuilder b;
  b.Add(std::numeric_limits<double>::quiet_NaN());
  b.Add(std::numeric_limits<double>::infinity());
  EXPECT_EQ(b.num(), 0);
  EXPECT_EQ(b.skipped(), 2);
  b.Add(-std::numeric_limits<double>::infinity());
  b.Add(0.5);
  const Histogram h = b.Build();
  EXPECT_EQ(b.skipped(), 3);
  EXPECT_EQ(h.num, 1);
  EXPECT_EQ(h.min, 0.5);
  EXPECT_EQ(h.max, 0.5);
  EXPECT_EQ(h.sum, 0.5);
  EXPECT_EQ(h.sum_squares, 0.25);
  EXPECT_THAT(h.bucket, ElementsAre(0, 1));
}

}  // namespace
}  // namespace litmus::tensorboard
