// Unit tests of `litmus inspect`'s pieces: step ranges (--step), compact step lists (the
// overview), the one-line value descriptions of --values, and CountNonFinite.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "litmus/engine/reductions.h"
#include "litmus/engine/trial_selection.h"
#include "litmus/engine/trial_summary.h"
#include "litmus/engine/trial_values.h"

namespace litmus {
namespace {

template <typename T>
TensorPtr MakeTensor(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  auto owner = std::make_shared<std::vector<T>>(values);
  const std::span<const std::byte> bytes = std::as_bytes(std::span<const T>(*owner));
  return std::make_shared<const Tensor>(dtype, std::move(shape), bytes, owner);
}

TEST(ParseStepRange, AcceptsTheFourForms) {
  auto r = ParseStepRange("5");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->begin, 5);
  EXPECT_EQ(r->end, 6);
  r = ParseStepRange("10:20");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->Contains(10));
  EXPECT_TRUE(r->Contains(19));
  EXPECT_FALSE(r->Contains(20));
  r = ParseStepRange("10:");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->Contains(int64_t{1} << 50));
  EXPECT_FALSE(r->Contains(9));
  r = ParseStepRange(":3");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->Contains(0));
  EXPECT_FALSE(r->Contains(3));
  for (const char* text : {"5", "10:20", "10:", ":3"}) {
    EXPECT_EQ(StepRangeText(*ParseStepRange(text)), text);
  }
}

TEST(ParseStepRange, RejectsEverythingElse) {
  for (const char* text : {"", ":", "a", "1.5", "-1", "1:-2", "5:5", "6:5", "1:2:3", " 1", "1 ", "0x10",
                           "99999999999999999999"}) {
    EXPECT_FALSE(ParseStepRange(text).ok()) << text;
  }
}

TEST(TrialSelection, Describe) {
  TrialSelection s;
  EXPECT_TRUE(s.SelectsEverything());
  EXPECT_EQ(s.Describe(), "");
  s.tensor_regex = {"fc1", "it's"};
  s.collections = {"weights"};
  s.mode = Mode::kTrain;
  s.steps = *ParseStepRange("0:10");
  EXPECT_EQ(s.Describe(), "--tensor 'fc1' --tensor 'it'\\''s' --collection weights --mode TRAIN --step 0:10");
}

std::vector<int64_t> Iota(int64_t first, int64_t count, int64_t stride = 1) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < count; ++i) v.push_back(first + i * stride);
  return v;
}

TEST(CompactSteps, RunsOfOneStride) {
  EXPECT_EQ(CompactSteps({}), "none");
  EXPECT_EQ(CompactSteps({7}), "7");
  EXPECT_EQ(CompactSteps({4, 5}), "4-5");
  EXPECT_EQ(CompactSteps(Iota(0, 14)), "0-13");
  EXPECT_EQ(CompactSteps(Iota(0, 6000, 2)), "0-11998 every 2");
  EXPECT_EQ(CompactSteps({0, 1, 2, 5, 7, 9}), "0-2, 5-9 every 2");
  EXPECT_EQ(CompactSteps({3, 7}), "3, 7");
  EXPECT_EQ(CompactSteps({3, 7, 11, 15, 16}), "3-15 every 4, 16");
  EXPECT_EQ(CompactSteps({0, 1, 2, 4}), "0-2, 4");
}

TEST(CompactSteps, ManyRunsAreCut) {
  std::vector<int64_t> steps;
  for (int64_t block = 0; block < 50; ++block) {
    for (int64_t i = 0; i < 10; ++i) steps.push_back(block * 20 + i);
  }
  EXPECT_EQ(CompactSteps(steps), "0-9, 20-29, 40-49, 60-69, 80-89, 100-109, ..., 980-989 (50 ranges)");
  // At most max_runs runs: all shown.
  steps.resize(80);
  EXPECT_EQ(CompactSteps(steps), "0-9, 20-29, 40-49, 60-69, 80-89, 100-109, 120-129, 140-149");
  // Bounded whatever the number of steps.
  std::vector<int64_t> scattered;
  for (int64_t i = 0; i < 100000; ++i) scattered.push_back(i * i);
  EXPECT_LT(CompactSteps(scattered).size(), 200u);
}

TEST(CountNonFinite, FloatAndComplex) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const NonFiniteCounts f = CountNonFinite(*MakeTensor<float>(DType::kFloat32, {5}, {1, nan, inf, -inf, inf}));
  EXPECT_EQ(f.nan, 1);
  EXPECT_EQ(f.posinf, 2);
  EXPECT_EQ(f.neginf, 1);
  const NonFiniteCounts i = CountNonFinite(*MakeTensor<int32_t>(DType::kInt32, {2}, {1, 2}));
  EXPECT_EQ(i.nan + i.posinf + i.neginf, 0);
  // float64 (a typed fast path like float32's), a negative NaN, the largest finite values, and
  // a tensor without any non-finite value.
  const double dnan = std::numeric_limits<double>::quiet_NaN(), dinf = std::numeric_limits<double>::infinity();
  const NonFiniteCounts d = CountNonFinite(*MakeTensor<double>(
      DType::kFloat64, {6}, {-dnan, dinf, -dinf, std::numeric_limits<double>::max(), -dinf, 0.0}));
  EXPECT_EQ(d.nan, 1);
  EXPECT_EQ(d.posinf, 1);
  EXPECT_EQ(d.neginf, 2);
  const NonFiniteCounts finite = CountNonFinite(*MakeTensor<float>(
      DType::kFloat32, {3}, {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 0.0f}));
  EXPECT_EQ(finite.nan + finite.posinf + finite.neginf, 0);
}

TEST(DescribeTensorValue, SmallInFullLargeAsStatistics) {
  EXPECT_EQ(DescribeTensorValue(*MakeTensor<float>(DType::kFloat32, {3}, {0.1f, -2.0f, 1e-8f})),
            "float32 (3,) [0.1, -2, 1e-08]");
  EXPECT_EQ(DescribeTensorValue(*MakeTensor<double>(DType::kFloat64, {}, {0.1})), "float64 () [0.1]");
  EXPECT_EQ(DescribeTensorValue(*MakeTensor<int64_t>(DType::kInt64, {2, 1}, {-3, 4})), "int64 (2, 1) [-3, 4]");
  std::vector<float> big(17);
  std::iota(big.begin(), big.end(), 1.0f);  // 1..17: mean 9
  EXPECT_EQ(DescribeTensorValue(*MakeTensor<float>(DType::kFloat32, {17}, big)),
            "float32 (17,) 17 elements: min 1 max 17 mean 9, nan 0, +inf 0, -inf 0");
  big[16] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(DescribeTensorValue(*MakeTensor<float>(DType::kFloat32, {17}, big)),
            "float32 (17,) 17 elements: min 1 max inf mean inf, nan 0, +inf 1, -inf 0");
  std::vector<int32_t> ints(20, 2);
  ints[0] = -1;
  EXPECT_EQ(DescribeTensorValue(*MakeTensor<int32_t>(DType::kInt32, {4, 5}, ints)),
            "int32 (4, 5) 20 elements: min -1 max 2 mean 1.85");
  // The limit is a parameter.
  EXPECT_EQ(DescribeTensorValue(*MakeTensor<float>(DType::kFloat32, {2}, {1, 2}), 1),
            "float32 (2,) 2 elements: min 1 max 2 mean 1.5, nan 0, +inf 0, -inf 0");
}

}  // namespace
}  // namespace litmus
