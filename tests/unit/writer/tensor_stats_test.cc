// Statistics behind stored reductions: population variance, element-wise norms, NaN propagation,
// abs in the double domain, complex magnitudes, float16 and bool.
#include "tensor_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

namespace litmus::writer::internal {
namespace {

using layout::Reduction;

template <typename T>
TensorStats Stats(const std::vector<T>& v, DType dtype, bool abs = false) {
  auto s = ComputeStats(dtype, std::as_bytes(std::span(v)), static_cast<int64_t>(v.size()), abs);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : TensorStats{};
}

TEST(TensorStatsTest, Float32Basics) {
  const auto s = Stats<float>({1, -2, 3, 4}, DType::kFloat32);
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kMin), -2);
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kMax), 4);
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kSum), 6);
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kMean), 1.5);
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kProd), -24);
  // Population variance: ((-.5)^2 + 3.5^2 + 1.5^2 + 2.5^2) / 4 = 5.25.
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kVariance), 5.25);
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kStd), std::sqrt(5.25));
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kL1), 10);
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kL2), std::sqrt(30.0));
  const auto a = Stats<float>({1, -2, 3, 4}, DType::kFloat32, true);
  EXPECT_DOUBLE_EQ(a.Get(Reduction::kMin), 1);
  EXPECT_DOUBLE_EQ(a.Get(Reduction::kSum), 10);
}

TEST(TensorStatsTest, NanPropagatesThroughMinMax) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto s = Stats<float>({1, nan, 3}, DType::kFloat32);
  EXPECT_TRUE(std::isnan(s.Get(Reduction::kMin)));
  EXPECT_TRUE(std::isnan(s.Get(Reduction::kMax)));
  EXPECT_TRUE(std::isnan(s.Get(Reduction::kMean)));
  const auto inf = Stats<float>({1, std::numeric_limits<float>::infinity()}, DType::kFloat32);
  EXPECT_TRUE(std::isinf(inf.Get(Reduction::kMax)));
  EXPECT_DOUBLE_EQ(inf.Get(Reduction::kMin), 1);
}

TEST(TensorStatsTest, IntAbsDoesNotWrap) {
  const auto s = Stats<int32_t>({INT32_MIN, 1}, DType::kInt32, true);
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kMax), 2147483648.0);
  const auto u = Stats<uint64_t>({UINT64_MAX}, DType::kUInt64);
  EXPECT_DOUBLE_EQ(u.Get(Reduction::kMax), static_cast<double>(UINT64_MAX));
  const auto i8 = Stats<int8_t>({-128, 127}, DType::kInt8);
  EXPECT_DOUBLE_EQ(i8.Get(Reduction::kMin), -128);
}

TEST(TensorStatsTest, BoolCountsAsZeroOne) {
  const auto s = Stats<uint8_t>({1, 0, 1, 1}, DType::kBool);
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kSum), 3);
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kMean), 0.75);
}

TEST(TensorStatsTest, Float16) {
  // 1.0 = 0x3C00, -2.0 = 0xC000.
  const auto s = Stats<uint16_t>({0x3C00, 0xC000}, DType::kFloat16);
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kSum), -1);
  EXPECT_DOUBLE_EQ(s.Get(Reduction::kMin), -2);
}

TEST(TensorStatsTest, ComplexOnlyOverMagnitudes) {
  const std::vector<std::complex<double>> v = {{3, 4}, {0, -1}};
  const auto a = Stats(v, DType::kComplex128, true);
  EXPECT_DOUBLE_EQ(a.Get(Reduction::kMax), 5);
  EXPECT_DOUBLE_EQ(a.Get(Reduction::kSum), 6);
  const std::vector<std::complex<float>> f = {{3, 4}};
  EXPECT_DOUBLE_EQ(Stats(f, DType::kComplex64, true).Get(Reduction::kL2), 5);
  auto plain = ComputeStats(DType::kComplex128, std::as_bytes(std::span(v)), 2, false);
  EXPECT_EQ(plain.status().code(), StatusCode::kUnimplemented);
}

TEST(TensorStatsTest, StringsHaveNoStats) {
  EXPECT_EQ(ComputeStats(DType::kInvalid, {}, 1, true).status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace litmus::writer::internal
