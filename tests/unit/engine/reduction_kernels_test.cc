// The AVX2 build of the reduction kernels (reduction_kernels_avx2.cc) against the portable build
// of the same loops: every reduction, abs or not, float32 and float64, sizes around the block
// and lane boundaries, with NaN, inf, -0.0 and subnormals: the results must be bit-identical,
// since ComputeReduction picks the build by CPU. Also the float32 fast paths and the fused pass
// against the loops they stand in for.
#define LITMUS_REDUCTION_ISA test_portable
#include "reduction_kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

namespace litmus {
namespace {

using layout::Reduction;

#if defined(__x86_64__)
template <typename T>
std::vector<T> Data(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = static_cast<T>(normal(rng) * std::exp(normal(rng)));
  if (n > 7) {
    v[3] = T(-0.0);
    v[5] = std::numeric_limits<T>::denorm_min();
  }
  return v;
}

template <typename T>
double Avx2(const T* p, int64_t n, Reduction r, bool abs) {
  if constexpr (std::is_same_v<T, float>) {
    return reduction_kernels::avx2::ReduceFloat32(p, n, r, abs);
  } else {
    return reduction_kernels::avx2::ReduceFloat64(p, n, r, abs);
  }
}

template <typename T>
void ExpectSameBits(const std::vector<T>& v, const std::string& what) {
  const int64_t n = static_cast<int64_t>(v.size());
  for (Reduction r : {Reduction::kMin, Reduction::kMax, Reduction::kMean, Reduction::kSum, Reduction::kProd,
                      Reduction::kStd, Reduction::kVariance, Reduction::kL1, Reduction::kL2}) {
    for (bool abs : {false, true}) {
      const double portable = reduction_kernels::test_portable::ReduceRealNonEmpty(v.data(), n, r, abs);
      const double avx2 = Avx2(v.data(), n, r, abs);
      // NaN payloads may differ; NaN-ness may not.
      if (std::isnan(portable)) {
        EXPECT_TRUE(std::isnan(avx2)) << what << " " << layout::ReductionName(r) << " abs=" << abs;
      } else {
        EXPECT_EQ(std::bit_cast<uint64_t>(portable), std::bit_cast<uint64_t>(avx2))
            << what << " " << layout::ReductionName(r) << " abs=" << abs << ": " << portable << " vs " << avx2;
      }
    }
  }
}

// The AVX2 build of the fused float32 pass and of variance's second pass against the portable.
void CompareFusedBuilds(const std::vector<float>& v, const std::string& what) {
  namespace k = reduction_kernels::test_portable;
  const int64_t n = static_cast<int64_t>(v.size());
  const auto same = [&](double a, double b, const std::string& name) {
    if (std::isnan(a)) {
      EXPECT_TRUE(std::isnan(b)) << what << " " << name;
    } else {
      EXPECT_EQ(std::bit_cast<uint64_t>(a), std::bit_cast<uint64_t>(b)) << what << " " << name << ": " << a << " vs " << b;
    }
  };
  for (int which = 1; which < 16; ++which) {  // (every combination of the pass's parts)
    const bool s = (which & 4) != 0, a = (which & 2) != 0, m = (which & 1) != 0, mm = (which & 8) != 0;
    const reduction_kernels::FusedSums portable = k::FusedFloat32(v.data(), n, s, a, m, mm);
    reduction_kernels::FusedSums avx2;
    reduction_kernels::avx2::FusedFloat32(v.data(), n, s, a, m, mm, &avx2);
    const std::string parts = " fused " + std::to_string(which);
    same(portable.sum, avx2.sum, parts + " sum");
    same(portable.abs_sum, avx2.abs_sum, parts + " abs sum");
    same(portable.abs_max, avx2.abs_max, parts + " abs max");
    same(portable.min, avx2.min, parts + " min");
    same(portable.max, avx2.max, parts + " max");
    EXPECT_EQ(portable.non_finite, avx2.non_finite) << what << parts;
  }
  const reduction_kernels::FusedSums portable = k::FusedFloat32(v.data(), n, true, true, true, true);
  for (bool abs : {false, true}) {
    const double total = abs ? portable.abs_sum : portable.sum;
    const double p = abs ? k::VarianceFromSum(n, k::RealLoader<float, true>{v.data()}, total)
                         : k::VarianceFromSum(n, k::RealLoader<float, false>{v.data()}, total);
    same(p, reduction_kernels::avx2::VarianceFloat32FromSum(v.data(), n, total, abs),
         abs ? "abs variance" : "variance");
  }
}

template <typename T>
void CompareBuilds() {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "this CPU has no AVX2: litmus never runs the AVX2 build here";
  uint32_t seed = 1;
  for (int64_t n : {1, 2, 7, 8, 9, 15, 16, 17, 1023, 1024, 1025, 4096 + 3, 262144, 1000003}) {
    std::vector<T> v = Data<T>(n, seed++);
    const auto check = [&v](const std::string& what) {
      ExpectSameBits(v, what);
      if constexpr (std::is_same_v<T, float>) CompareFusedBuilds(v, what);
    };
    check("n=" + std::to_string(n));
    if (n > 9) {
      v[n / 2] = std::numeric_limits<T>::infinity();
      check("n=" + std::to_string(n) + " with inf");
      v[n / 3] = std::numeric_limits<T>::quiet_NaN();
      check("n=" + std::to_string(n) + " with NaN");
    }
  }
}

// The vector-typed float32 loops against the generic ones (reached through a loader that is not
// RealLoader<float>), in the same build: same lanes, same order, same bits.
template <bool kAbs>
void CompareFloatFastPaths(const std::vector<float>& v, const std::string& what) {
  namespace k = reduction_kernels::test_portable;
  const int64_t n = static_cast<int64_t>(v.size());
  const k::RealLoader<float, kAbs> fast{v.data()};
  const auto generic = [p = v.data()](int64_t i) {
    const double d = static_cast<double>(p[i]);
    return kAbs ? std::fabs(d) : d;
  };
  const auto same = [&](double a, double b, const char* name) {
    if (std::isnan(a)) {
      EXPECT_TRUE(std::isnan(b)) << what << " " << name;
    } else {
      EXPECT_EQ(std::bit_cast<uint64_t>(a), std::bit_cast<uint64_t>(b)) << what << " " << name << ": " << a << " vs " << b;
    }
  };
  same(k::PairwiseSum(n, fast), k::PairwiseSum(n, generic), "sum");
  same(k::Extremum<true>(n, fast), k::Extremum<true>(n, generic), "max");
  same(k::Extremum<false>(n, fast), k::Extremum<false>(n, generic), "min");
  same(k::VarianceFromSum(n, fast, 0.25), k::VarianceFromSum(n, generic, 0.25), "variance second pass");
  if constexpr (kAbs) {
    // The fused pass, every combination of its parts, against the kernels it stands in for.
    const double sum = k::PairwiseSum(n, k::RealLoader<float, false>{v.data()});
    const double abs_sum = k::PairwiseSum(n, fast);
    const double abs_max = k::Extremum<true>(n, fast);
    const double min = k::Extremum<false>(n, k::RealLoader<float, false>{v.data()});
    const double max = k::Extremum<true>(n, k::RealLoader<float, false>{v.data()});
    const bool non_finite = std::any_of(v.begin(), v.end(), [](float x) { return !std::isfinite(x); });
    for (int which = 1; which < 16; ++which) {
      const bool s = (which & 4) != 0, a = (which & 2) != 0, m = (which & 1) != 0, mm = (which & 8) != 0;
      const reduction_kernels::FusedSums fused = k::FusedFloat32(v.data(), n, s, a, m, mm);
      const std::string parts = " fused " + std::to_string(which);
      if (s) same(fused.sum, sum, (parts + " sum").c_str());
      if (a) same(fused.abs_sum, abs_sum, (parts + " abs sum").c_str());
      if (m) same(fused.abs_max, abs_max, (parts + " abs max").c_str());
      if (mm) {
        same(fused.min, min, (parts + " min").c_str());
        same(fused.max, max, (parts + " max").c_str());
      }
      if (m || mm) {
        EXPECT_EQ(fused.non_finite, non_finite) << what << parts;
      }
    }
  }
}

TEST(ReductionKernelsTest, Float32FastPathsMatchTheGenericLoops) {
  uint32_t seed = 100;
  for (int64_t n : {1, 3, 8, 9, 1023, 1024, 1025, 5000, 262144 + 5}) {
    std::vector<float> v = Data<float>(n, seed++);
    for (int variant = 0; variant < 5; ++variant) {
      if (variant == 4) {  // only zeros of both signs and negatives: max and abs-min tie on zeros
        for (size_t i = 0; i < v.size(); ++i) v[i] = i % 3 == 0 ? -0.0f : i % 3 == 1 ? 0.0f : -1.0f - static_cast<float>(i % 7);
      }
      if (variant == 1) v[static_cast<size_t>(n) / 2] = -std::numeric_limits<float>::infinity();
      if (variant == 2) v[static_cast<size_t>(n) / 3] = std::numeric_limits<float>::quiet_NaN();
      if (variant == 3) v.back() = std::numeric_limits<float>::quiet_NaN();  // in the scalar tail
      const std::string what = "n=" + std::to_string(n) + " variant " + std::to_string(variant);
      CompareFloatFastPaths<false>(v, what);
      CompareFloatFastPaths<true>(v, what + " abs");
    }
  }
}

TEST(ReductionKernelsTest, Avx2BuildIsBitIdenticalFloat32) { CompareBuilds<float>(); }
TEST(ReductionKernelsTest, Avx2BuildIsBitIdenticalFloat64) { CompareBuilds<double>(); }
#endif

}  // namespace
}  // namespace litmus
