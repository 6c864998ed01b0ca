// The AVX2 build of the reduction kernels (reduction_kernels_avx2.cc) against the portable build
// of the same loops: every reduction, abs or not, float32 and float64, sizes around the block
// and lane boundaries, with NaN, inf, -0.0 and subnormals: the results must be bit-identical,
// since ComputeReduction picks the build by CPU.
#define LITMUS_REDUCTION_ISA test_portable
#include "reduction_kernels.h"

#include <bit>
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

template <typename T>
void CompareBuilds() {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "this CPU has no AVX2: litmus never runs the AVX2 build here";
  uint32_t seed = 1;
  for (int64_t n : {1, 2, 7, 8, 9, 15, 16, 17, 1023, 1024, 1025, 4096 + 3, 262144, 1000003}) {
    std::vector<T> v = Data<T>(n, seed++);
    ExpectSameBits(v, "n=" + std::to_string(n));
    if (n > 9) {
      v[n / 2] = std::numeric_limits<T>::infinity();
      ExpectSameBits(v, "n=" + std::to_string(n) + " with inf");
      v[n / 3] = std::numeric_limits<T>::quiet_NaN();
      ExpectSameBits(v, "n=" + std::to_string(n) + " with NaN");
    }
  }
}

TEST(ReductionKernelsTest, Avx2BuildIsBitIdenticalFloat32) { CompareBuilds<float>(); }
TEST(ReductionKernelsTest, Avx2BuildIsBitIdenticalFloat64) { CompareBuilds<double>(); }
#endif

}  // namespace
}  // namespace litmus
