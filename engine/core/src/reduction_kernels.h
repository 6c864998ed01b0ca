// Reduction kernels (reductions.h): element loaders and the loops of every reduction, as
// templates over the loader. This header is compiled once per instruction set, each time in its
// own namespace litmus::reduction_kernels::LITMUS_REDUCTION_ISA (defined by the including file),
// so that the AVX2 build of the loops (reduction_kernels_avx2.cc) and the portable one
// (reductions.cc) never share a symbol: the linker cannot hand AVX2 code to a CPU without it.
// The loops fix the order of every addition, so both builds give bit-identical results
// (no FMA contraction: see engine/core/CMakeLists.txt). Pure functions; thread-safe.
// Deliberately no include guard: each file includes it exactly once, after defining the ISA.
#ifndef LITMUS_REDUCTION_ISA
#error "define LITMUS_REDUCTION_ISA (the namespace of this build of the kernels) before including"
#endif

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "litmus/format/trial_layout.h"

namespace litmus::reduction_kernels {

// The AVX2 build of ReduceReal for the two floating dtypes (reduction_kernels_avx2.cc); call
// only when the CPU has AVX2 and n >= 1.
namespace avx2 {
double ReduceFloat32(const float* p, int64_t n, layout::Reduction reduction, bool abs);
double ReduceFloat64(const double* p, int64_t n, layout::Reduction reduction, bool abs);
}  // namespace avx2

namespace LITMUS_REDUCTION_ISA {

using layout::Reduction;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Runs step(j) for j = 0..N-1 as straight-line code: the lanes of the loops below are unrolled
// even at -O2 (which does not fully unroll inner loops), so the SLP vectoriser sees them.
template <typename Step, size_t... J>
inline void UnrolledImpl(const Step& step, std::index_sequence<J...>) {
  (step(J), ...);
}
template <size_t N, typename Step>
inline void Unrolled(const Step& step) {
  UnrolledImpl(step, std::make_index_sequence<N>());
}

// IEEE half -> float with integer masks instead of branches, so that float16 loops vectorise,
// and without float denormal arithmetic (a microcode assist each). Bit-identical to
// litmus::HalfToFloat (the tests compare all 65536 patterns).
inline float HalfBitsToFloat(uint16_t half) {
  const uint32_t h = half;
  const uint32_t em = (h & 0x7fffu) << 13;  // exponent and mantissa in float position
  const uint32_t exp = em & 0x0f800000u;
  const uint32_t subnormal = 0u - static_cast<uint32_t>(exp == 0);           // all ones or 0
  const uint32_t inf_nan = 0u - static_cast<uint32_t>(exp == 0x0f800000u);  // all ones or 0
  // Rebias 15 -> 127; inf/NaN go on to exponent 255 (payload kept); a subnormal m becomes
  // 2^-14 * (1 + m/1024), from which subtracting 2^-14 (0x38800000) leaves m * 2^-24 exactly.
  const uint32_t bits = em + (112u << 23) + (inf_nan & (112u << 23)) + (subnormal & (1u << 23));
  const float f = std::bit_cast<float>(bits) - std::bit_cast<float>(subnormal & 0x38800000u);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | ((h & 0x8000u) << 16));
}

// Element loaders: `double operator()(int64_t i)` gives element i as double, |x| when kAbs.
// They read through typed pointers: Tensor requires its bytes aligned to the element size.
template <typename T, bool kAbs>
struct RealLoader {
  const T* p;
  double operator()(int64_t i) const {
    const double d = static_cast<double>(p[i]);
    return kAbs ? std::fabs(d) : d;
  }
};

template <bool kAbs>
struct HalfLoader {
  const uint16_t* p;
  double operator()(int64_t i) const {
    const double d = HalfBitsToFloat(p[i]);
    return kAbs ? std::fabs(d) : d;
  }
};

// bool bytes: anything non-zero is true (numpy's view of a bool buffer); |b| = b.
struct BoolLoader {
  const uint8_t* p;
  double operator()(int64_t i) const { return p[i] != 0 ? 1.0 : 0.0; }
};

// Complex elements load as their magnitude |z| (hypot, as numpy's np.absolute).
template <typename T>
struct MagnitudeLoader {
  const T* p;  // interleaved re, im
  double operator()(int64_t i) const {
    return std::hypot(static_cast<double>(p[2 * i]), static_cast<double>(p[2 * i + 1]));
  }
};

// Sum of f(i) for i in [0, n): blocks of kBlock elements summed with kLanes independent
// accumulators (vectorisable, ~kBlock/kLanes additions per accumulator), and the block sums
// combined pairwise (a binary-counter cascade), so the error grows like log(n), as numpy's
// pairwise sum.
template <typename F>
double PairwiseSum(int64_t n, const F& f) {
  constexpr int64_t kBlock = 1024;
  constexpr int64_t kLanes = 8;
  double stack[64];
  int top = 0;
  uint64_t blocks = 0;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t end = std::min(n, begin + kBlock);
    double acc[kLanes] = {};
    int64_t i = begin;
    for (; i + kLanes <= end; i += kLanes) {
      Unrolled<kLanes>([&](size_t j) { acc[j] += f(i + static_cast<int64_t>(j)); });
    }
    double s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < end; ++i) s += f(i);
    // Merge equal-sized partial sums: after block k, the stack holds one sum per set bit of k+1.
    for (uint64_t k = blocks; k & 1; k >>= 1) s = stack[--top] + s;
    stack[top++] = s;
    ++blocks;
  }
  double total = 0;
  while (top > 0) total = stack[--top] + total;
  return total;
}

// min or max of f(i) over n >= 1 elements; NaN if any element is NaN (numpy amin/amax). The
// select has minsd/maxsd semantics (drops NaN), so NaNs are tracked per lane separately. Scalar
// code (compilers do not vectorise the NaN tracking); Extremum runs it only for data that holds
// an infinity or a NaN.
template <bool kMax, typename F>
double ExtremumWithNaN(int64_t n, const F& f) {
  constexpr int64_t kLanes = 8;
  auto better = [](double x, double best) { return (kMax ? x > best : x < best) ? x : best; };
  double best[kLanes];
  uint64_t nan[kLanes] = {};
  for (int j = 0; j < kLanes; ++j) best[j] = f(0);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Unrolled<kLanes>([&](size_t j) {
      const double x = f(i + static_cast<int64_t>(j));
      nan[j] |= 0u - static_cast<uint64_t>(x != x);
      best[j] = better(x, best[j]);
    });
  }
  for (; i < n; ++i) {
    const double x = f(i);
    nan[0] |= 0u - static_cast<uint64_t>(x != x);
    best[0] = better(x, best[0]);
  }
  double r = best[0];
  uint64_t any_nan = nan[0];
  for (int j = 1; j < kLanes; ++j) {
    r = better(best[j], r);
    any_nan |= nan[j];
  }
  return any_nan != 0 ? kNaN : r;
}

// The same result: a vectorisable pass of plain selects that also sums x - x per lane (0 for
// every finite x, NaN as soon as one x is infinite or NaN); only when that sum is not 0 does
// the exact NaN-tracking pass above run.
template <bool kMax, typename F>
double Extremum(int64_t n, const F& f) {
  constexpr int64_t kLanes = 8;
  auto better = [](double x, double best) { return (kMax ? x > best : x < best) ? x : best; };
  double best[kLanes];
  double special[kLanes] = {};
  for (int j = 0; j < kLanes; ++j) best[j] = f(0);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Unrolled<kLanes>([&](size_t j) {
      const double x = f(i + static_cast<int64_t>(j));
      special[j] += x - x;
      best[j] = better(x, best[j]);
    });
  }
  for (; i < n; ++i) {
    const double x = f(i);
    special[0] += x - x;
    best[0] = better(x, best[0]);
  }
  double r = best[0];
  double any_special = special[0];
  for (int j = 1; j < kLanes; ++j) {
    r = better(best[j], r);
    any_special += special[j];
  }
  return any_special == 0 ? r : ExtremumWithNaN<kMax>(n, f);
}

// Fast paths for float32 data, the dtype of nearly every tensor: exactly the lanes and the
// order of operations of the generic loops above (lanes 0-3 and 4-7 of each group of 8 are one
// vector each), written with vector types so that they compile to packed instructions, which
// the compilers do not produce from the generic code. Results are bit-identical.
using V4f = float __attribute__((vector_size(16)));
using V4d = double __attribute__((vector_size(32)));
using V4i = int64_t __attribute__((vector_size(32)));
using V8f = float __attribute__((vector_size(32)));
using V8i = int32_t __attribute__((vector_size(32)));

// Elements p[0..7] as two vectors of doubles, |x| when kAbs (clearing the sign bit is fabs).
template <bool kAbs>
inline void LoadEight(const float* p, V4d* lo, V4d* hi) {
  V4f a, b;
  std::memcpy(&a, p, sizeof(a));
  std::memcpy(&b, p + 4, sizeof(b));
  *lo = __builtin_convertvector(a, V4d);
  *hi = __builtin_convertvector(b, V4d);
  if constexpr (kAbs) {
    const V4i no_sign = V4i{} + INT64_MAX;
    *lo = reinterpret_cast<V4d>(reinterpret_cast<V4i>(*lo) & no_sign);
    *hi = reinterpret_cast<V4d>(reinterpret_cast<V4i>(*hi) & no_sign);
  }
}

template <bool kAbs>
double PairwiseSum(int64_t n, const RealLoader<float, kAbs>& f) {
  constexpr int64_t kBlock = 1024;
  double stack[64];
  int top = 0;
  uint64_t blocks = 0;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t end = std::min(n, begin + kBlock);
    V4d lo = {}, hi = {};
    int64_t i = begin;
    for (; i + 8 <= end; i += 8) {
      V4d a, b;
      LoadEight<kAbs>(f.p + i, &a, &b);
      lo += a;
      hi += b;
    }
    double s = ((lo[0] + lo[1]) + (lo[2] + lo[3])) + ((hi[0] + hi[1]) + (hi[2] + hi[3]));
    for (; i < end; ++i) s += f(i);
    for (uint64_t k = blocks; k & 1; k >>= 1) s = stack[--top] + s;
    stack[top++] = s;
    ++blocks;
  }
  double total = 0;
  while (top > 0) total = stack[--top] + total;
  return total;
}

template <bool kMax, bool kAbs>
double Extremum(int64_t n, const RealLoader<float, kAbs>& f) {
  // On the floats themselves, eight lanes per vector (lane j takes elements i + j, as in the
  // generic loop): widening a float to double is exact and keeps the order, so comparing the
  // floats selects the same element in every lane, and x - x is 0 for a finite float exactly
  // when it is for its double. (Half the vector width of working in doubles, and no widening.)
  auto better = [](double x, double best) { return (kMax ? x > best : x < best) ? x : best; };
  // (By reference: passing 32-byte vectors by value changes the ABI between builds.)
  auto better8 = [](const V8f& x, V8f& best) {
    const V8i take = kMax ? x > best : x < best;
    best = reinterpret_cast<V8f>((reinterpret_cast<V8i>(x) & take) | (reinterpret_cast<V8i>(best) & ~take));
  };
  auto load8 = [&f](int64_t i, V8f& v) {
    std::memcpy(&v, f.p + i, sizeof(v));
    if constexpr (kAbs) v = reinterpret_cast<V8f>(reinterpret_cast<V8i>(v) & (V8i{} + INT32_MAX));
  };
  const float first = kAbs ? std::fabs(f.p[0]) : f.p[0];
  // (Every lane set to the first element; not V8f{} + first, which turns -0.0 into +0.0.)
  V8f best_f = {first, first, first, first, first, first, first, first};
  V8f special_f = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    V8f a;
    load8(i, a);
    special_f += a - a;
    better8(a, best_f);
  }
  double best[8], special[8];
  for (int j = 0; j < 8; ++j) {
    best[j] = best_f[j];
    special[j] = special_f[j];
  }
  for (; i < n; ++i) {
    const double x = f(i);
    special[0] += x - x;
    best[0] = better(x, best[0]);
  }
  double r = best[0];
  double any_special = special[0];
  for (int j = 1; j < 8; ++j) {
    r = better(best[j], r);
    any_special += special[j];
  }
  return any_special == 0 ? r : ExtremumWithNaN<kMax>(n, f);
}

template <typename F>
double Product(int64_t n, const F& f) {
  constexpr int64_t kLanes = 4;
  double acc[kLanes] = {1, 1, 1, 1};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Unrolled<kLanes>([&](size_t j) { acc[j] *= f(i + static_cast<int64_t>(j)); });
  }
  double r = (acc[0] * acc[1]) * (acc[2] * acc[3]);
  for (; i < n; ++i) r *= f(i);
  return r;
}

// Population variance by two passes (mean, then the sum of squared deviations), both pairwise.
template <typename F>
double Variance(int64_t n, const F& f) {
  if (n == 0) return kNaN;
  const double mean = PairwiseSum(n, f) / static_cast<double>(n);
  const double ss = PairwiseSum(n, [&f, mean](int64_t i) {
    const double d = f(i) - mean;
    return d * d;
  });
  return ss / static_cast<double>(n);
}


// The value of `reduction` over n >= 1 elements; `f` already applies |x| for abs reductions.
// (Empty tensors and invalid requests are the caller's business.)
template <typename F>
double ReduceNonEmpty(int64_t n, const F& f, Reduction reduction) {
  switch (reduction) {
    case Reduction::kMin: return Extremum<false>(n, f);
    case Reduction::kMax: return Extremum<true>(n, f);
    case Reduction::kMean: return PairwiseSum(n, f) / static_cast<double>(n);
    case Reduction::kSum: return PairwiseSum(n, f);
    case Reduction::kProd: return Product(n, f);
    case Reduction::kStd: return std::sqrt(Variance(n, f));
    case Reduction::kVariance: return Variance(n, f);
    case Reduction::kL1: return PairwiseSum(n, [&f](int64_t i) { return std::fabs(f(i)); });
    case Reduction::kL2:
      return std::sqrt(PairwiseSum(n, [&f](int64_t i) {
        const double x = f(i);
        return x * x;
      }));
  }
  return kNaN;
}

template <typename T>
double ReduceRealNonEmpty(const T* p, int64_t n, Reduction reduction, bool abs) {
  if (abs) return ReduceNonEmpty(n, RealLoader<T, true>{p}, reduction);
  return ReduceNonEmpty(n, RealLoader<T, false>{p}, reduction);
}

}  // namespace LITMUS_REDUCTION_ISA
}  // namespace litmus::reduction_kernels
