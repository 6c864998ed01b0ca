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

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "litmus/format/trial_layout.h"

namespace litmus::reduction_kernels {

// What one fused pass over float32 data gives (FusedFloat32 below): the sum, the sum of |x|, the
// largest |x|, and the min and the max, each only if asked for; and, with the abs max or the
// min and max, whether an element is infinite or NaN.
struct FusedSums {
  double sum = 0;
  double abs_sum = 0;
  double abs_max = 0;
  double min = 0;
  double max = 0;
  bool non_finite = false;
};

// What one statistics pass gives (StatisticsPass below): the sum, the min and the max, and
// whether an element is infinite or NaN (then min and max are already the exact NaN-aware ones).
struct SumMinMax {
  double sum = 0;
  double min = 0;
  double max = 0;
  bool non_finite = false;
};

// The AVX2 build of ReduceReal for the two floating dtypes and of the float32 fused pass
// (reduction_kernels_avx2.cc); call only when the CPU has AVX2 and n >= 1.
namespace avx2 {
double ReduceFloat32(const float* p, int64_t n, layout::Reduction reduction, bool abs);
double ReduceFloat64(const double* p, int64_t n, layout::Reduction reduction, bool abs);
void FusedFloat32(const float* p, int64_t n, bool sum, bool abs_sum, bool abs_max, bool min_max, FusedSums* out);
double VarianceFloat32FromSum(const float* p, int64_t n, double sum, bool abs);
SumMinMax StatisticsFloat32(const float* p, int64_t n);
SumMinMax StatisticsFloat64(const double* p, int64_t n);
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

// Sums are computed in blocks of kPairwiseBlock elements, and the block sums are combined
// pairwise (a binary-counter cascade), so the error grows like log(n), as numpy's pairwise sum.
// PairwiseCombiner is that cascade: Add each block's sum in order, then Total.
constexpr int64_t kPairwiseBlock = 1024;
struct PairwiseCombiner {
  double stack[64];
  int top = 0;
  uint64_t blocks = 0;
  void Add(double s) {
    // Merge equal-sized partial sums: after block k, the stack holds one sum per set bit of k+1.
    for (uint64_t k = blocks; k & 1; k >>= 1) s = stack[--top] + s;
    stack[top++] = s;
    ++blocks;
  }
  double Total() const {
    double total = 0;
    for (int k = top - 1; k >= 0; --k) total = stack[k] + total;
    return total;
  }
};

// The pairwise sum of the blocks of [0, n), block_sum(begin, end) giving one block's sum.
template <typename BlockSum>
double PairwiseOverBlocks(int64_t n, const BlockSum& block_sum) {
  PairwiseCombiner sums;
  for (int64_t begin = 0; begin < n; begin += kPairwiseBlock) sums.Add(block_sum(begin, std::min(n, begin + kPairwiseBlock)));
  return sums.Total();
}

// Sum of f(i) for i in [0, n): each block summed with kLanes independent accumulators
// (vectorisable, ~kPairwiseBlock/kLanes additions per accumulator), the blocks pairwise.
template <typename F>
double PairwiseSum(int64_t n, const F& f) {
  constexpr int64_t kLanes = 8;
  return PairwiseOverBlocks(n, [&f](int64_t begin, int64_t end) {
    double acc[kLanes] = {};
    int64_t i = begin;
    for (; i + kLanes <= end; i += kLanes) {
      Unrolled<kLanes>([&](size_t j) { acc[j] += f(i + static_cast<int64_t>(j)); });
    }
    double s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < end; ++i) s += f(i);
    return s;
  });
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
#if defined(__AVX__)
  // One vcvtps2pd from memory per four floats: GCC 12 lowers __builtin_convertvector(V4f, V4d)
  // to two 128-bit conversions and an insert per vector (twice the instructions of the loop).
  *lo = reinterpret_cast<V4d>(_mm256_cvtps_pd(_mm_loadu_ps(p)));
  *hi = reinterpret_cast<V4d>(_mm256_cvtps_pd(_mm_loadu_ps(p + 4)));
#else
  V4f a, b;
  std::memcpy(&a, p, sizeof(a));
  std::memcpy(&b, p + 4, sizeof(b));
  *lo = __builtin_convertvector(a, V4d);
  *hi = __builtin_convertvector(b, V4d);
#endif
  if constexpr (kAbs) {
    const V4i no_sign = V4i{} + INT64_MAX;
    *lo = reinterpret_cast<V4d>(reinterpret_cast<V4i>(*lo) & no_sign);
    *hi = reinterpret_cast<V4d>(reinterpret_cast<V4i>(*hi) & no_sign);
  }
}

// (The lanes of a block, its two vectors reduced in the generic loop's order.)
inline double SumOfLanes(const V4d& lo, const V4d& hi) {
  return ((lo[0] + lo[1]) + (lo[2] + lo[3])) + ((hi[0] + hi[1]) + (hi[2] + hi[3]));
}

// One step of the float32 extremum loops: lane j keeps the better of x[j] and best[j].
// (By reference: passing 32-byte vectors by value changes the ABI between builds.)
template <bool kMax>
inline void Better8(const V8f& x, V8f& best) {
#if defined(__AVX__)
  // vmaxps/vminps return their second operand unless the first is strictly greater / less (a
  // NaN on either side, or equal values such as -0.0 and +0.0, keep `best`): the selection
  // below in one instruction instead of a compare and a blend.
  best = reinterpret_cast<V8f>(kMax ? _mm256_max_ps(reinterpret_cast<__m256>(x), reinterpret_cast<__m256>(best))
                                    : _mm256_min_ps(reinterpret_cast<__m256>(x), reinterpret_cast<__m256>(best)));
#else
  const V8i take = kMax ? x > best : x < best;
  best = reinterpret_cast<V8f>((reinterpret_cast<V8i>(x) & take) | (reinterpret_cast<V8i>(best) & ~take));
#endif
}

// Eight floats from p, |x| when kAbs (clearing the sign bit).
template <bool kAbs>
inline void LoadEightFloats(const float* p, V8f& v) {
  std::memcpy(&v, p, sizeof(v));
  if constexpr (kAbs) v = reinterpret_cast<V8f>(reinterpret_cast<V8i>(v) & (V8i{} + INT32_MAX));
}

// Every lane of an extremum's start: the first element itself (not V8f{} + first, which turns
// -0.0 into +0.0).
template <bool kAbs>
inline void FirstInEveryLane(const float* p, V8f& lanes) {
  const float first = kAbs ? std::fabs(p[0]) : p[0];
  lanes = V8f{first, first, first, first, first, first, first, first};
}

// The end of a float32 extremum whose vector loop covered the elements before n - n % 8: the
// scalar tail into lane 0, the lanes combined in order, and the exact NaN-tracking pass if an
// element was infinite or NaN (as Extremum over the generic loader does).
template <bool kMax, bool kAbs>
double FinishExtremum(const V8f& best_f, const V8f& special_f, int64_t n, const RealLoader<float, kAbs>& f) {
  auto better = [](double x, double best) { return (kMax ? x > best : x < best) ? x : best; };
  double best[8], special[8];
  for (int j = 0; j < 8; ++j) {
    best[j] = best_f[j];
    special[j] = special_f[j];
  }
  for (int64_t i = n - n % 8; i < n; ++i) {
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

template <bool kMax, bool kAbs>
double Extremum(int64_t n, const RealLoader<float, kAbs>& f) {
  // On the floats themselves, eight lanes per vector (lane j takes elements i + j, as in the
  // generic loop): widening a float to double is exact and keeps the order, so comparing the
  // floats selects the same element in every lane, and x - x is 0 for a finite float exactly
  // when it is for its double. (Half the vector width of working in doubles, and no widening.)
  V8f best;
  FirstInEveryLane<kAbs>(f.p, best);
  V8f special = {};
  for (int64_t i = 0; i + 8 <= n; i += 8) {
    V8f a;
    LoadEightFloats<kAbs>(f.p + i, a);
    special += a - a;
    Better8<kMax>(a, best);
  }
  return FinishExtremum<kMax>(best, special, n, f);
}

// The sum, the sum of |x|, the largest |x|, and the min and max of float32 elements in one pass
// over the data (the flags pick which; the others stay 0; n >= 1 when kAbsMax or kMinMax). Each
// is bit-identical to the generic loops (PairwiseSum, Extremum over x or |x|): the pass keeps
// their blocks, lanes and order of operations, in vector types, and loads each element once for
// all of them. Rules ask for these together (mean |x|, max |x|, the mean inside a variance), the
// HTML report for the mean, min and max (reductions.h's ComputeStatistics) of the same values,
// and on tensors that have left the CPU caches one pass is most of the cost. The float32
// PairwiseSum is this pass too.
template <bool kSum, bool kAbsSum, bool kAbsMax, bool kMinMax = false>
FusedSums FusedPass(const float* p, int64_t n) {
  PairwiseCombiner sums, abs_sums;
  V8f best = {}, lowest = {}, highest = {};
  if constexpr (kAbsMax) FirstInEveryLane<true>(p, best);  // (n >= 1 only when it is asked for)
  if constexpr (kMinMax) {
    FirstInEveryLane<false>(p, lowest);
    FirstInEveryLane<false>(p, highest);
  }
  V8f special = {};
  // With a sum in the pass, an infinite or NaN element is one whose sum is not finite (no sum of
  // float32 values overflows a double): the loop need not track x - x.
  constexpr bool kSpecialFromSums = kSum || kAbsSum;
  const V4i no_sign = V4i{} + INT64_MAX;
  int64_t begin = 0;
  if constexpr (!kAbsMax && !kMinMax) {
    // Sums only: two whole blocks at a time, each with its own lanes. Each lane's additions
    // depend on its previous one, and one block's lanes alone keep the adders waiting; the two
    // blocks' chains interleave (each block's sum is the same, added in the same order). (~13 %
    // faster on 1 MiB of float32 in L2; with extremums in the pass the loop is bound by its
    // instructions, not these chains.)
    for (; begin + 2 * kPairwiseBlock <= n; begin += 2 * kPairwiseBlock) {
      V4d lo[2] = {}, hi[2] = {}, abs_lo[2] = {}, abs_hi[2] = {};
      for (int64_t i = begin; i < begin + kPairwiseBlock; i += 8) {
        for (int b = 0; b < 2; ++b) {
          V4d x, y;
          LoadEight<false>(p + i + b * kPairwiseBlock, &x, &y);
          if constexpr (kSum) {
            lo[b] += x;
            hi[b] += y;
          }
          if constexpr (kAbsSum) {
            abs_lo[b] += reinterpret_cast<V4d>(reinterpret_cast<V4i>(x) & no_sign);
            abs_hi[b] += reinterpret_cast<V4d>(reinterpret_cast<V4i>(y) & no_sign);
          }
        }
      }
      for (int b = 0; b < 2; ++b) {
        if constexpr (kSum) sums.Add(SumOfLanes(lo[b], hi[b]));
        if constexpr (kAbsSum) abs_sums.Add(SumOfLanes(abs_lo[b], abs_hi[b]));
      }
    }
  }
  for (; begin < n; begin += kPairwiseBlock) {
    const int64_t end = std::min(n, begin + kPairwiseBlock);
    V4d lo = {}, hi = {}, abs_lo = {}, abs_hi = {};
    int64_t i = begin;
    for (; i + 8 <= end; i += 8) {
      if constexpr (kSum || kAbsSum) {
        V4d a, b;
        LoadEight<false>(p + i, &a, &b);
        if constexpr (kSum) {
          lo += a;
          hi += b;
        }
        if constexpr (kAbsSum) {
          abs_lo += reinterpret_cast<V4d>(reinterpret_cast<V4i>(a) & no_sign);
          abs_hi += reinterpret_cast<V4d>(reinterpret_cast<V4i>(b) & no_sign);
        }
      }
      if constexpr (kAbsMax || kMinMax) {
        V8f a;
        LoadEightFloats<false>(p + i, a);
        if constexpr (!kSpecialFromSums) special += a - a;  // (the same for x and |x|)
        if constexpr (kMinMax) {
          Better8<false>(a, lowest);
          Better8<true>(a, highest);
        }
        if constexpr (kAbsMax) {
          a = reinterpret_cast<V8f>(reinterpret_cast<V8i>(a) & (V8i{} + INT32_MAX));
          Better8<true>(a, best);
        }
      }
    }
    double s = SumOfLanes(lo, hi);
    double abs_s = SumOfLanes(abs_lo, abs_hi);
    for (; i < end; ++i) {
      const double d = static_cast<double>(p[i]);
      s += d;
      abs_s += std::fabs(d);
    }
    if constexpr (kSum) sums.Add(s);
    if constexpr (kAbsSum) abs_sums.Add(abs_s);
  }
  FusedSums out;
  if constexpr (kSum) out.sum = sums.Total();
  if constexpr (kAbsSum) out.abs_sum = abs_sums.Total();
  if constexpr (kSpecialFromSums && (kAbsMax || kMinMax)) {
    // (The sums covered every element, the tail included; the extremums' ends only need to know
    // whether any element was special: lane 0 says so.)
    if (!std::isfinite(kSum ? out.sum : out.abs_sum)) special[0] = 1;
  }
  if constexpr (kAbsMax) out.abs_max = FinishExtremum<true>(best, special, n, RealLoader<float, true>{p});
  if constexpr (kMinMax) {
    out.min = FinishExtremum<false>(lowest, special, n, RealLoader<float, false>{p});
    out.max = FinishExtremum<true>(highest, special, n, RealLoader<float, false>{p});
  }
  if constexpr (kAbsMax || kMinMax) {
    float any_special = 0;
    for (int j = 0; j < 8; ++j) any_special += special[j];
    if constexpr (!kSpecialFromSums) {
      for (int64_t i = n - n % 8; i < n; ++i) any_special += p[i] - p[i];
    }
    out.non_finite = any_special != 0;
  }
  return out;
}

// The float32 sum (of |x| when kAbs) is the fused pass's.
template <bool kAbs>
double PairwiseSum(int64_t n, const RealLoader<float, kAbs>& f) {
  if constexpr (kAbs) return FusedPass<false, true, false>(f.p, n).abs_sum;
  return FusedPass<true, false, false>(f.p, n).sum;
}

// FusedPass with run-time flags.
inline FusedSums FusedFloat32(const float* p, int64_t n, bool sum, bool abs_sum, bool abs_max, bool min_max = false) {
  const int which = (min_max ? 8 : 0) | (sum ? 4 : 0) | (abs_sum ? 2 : 0) | (abs_max ? 1 : 0);
  switch (which) {
    case 1: return FusedPass<false, false, true>(p, n);
    case 2: return FusedPass<false, true, false>(p, n);
    case 3: return FusedPass<false, true, true>(p, n);
    case 4: return FusedPass<true, false, false>(p, n);
    case 5: return FusedPass<true, false, true>(p, n);
    case 6: return FusedPass<true, true, false>(p, n);
    case 7: return FusedPass<true, true, true>(p, n);
    case 8: return FusedPass<false, false, false, true>(p, n);
    case 9: return FusedPass<false, false, true, true>(p, n);
    case 10: return FusedPass<false, true, false, true>(p, n);
    case 11: return FusedPass<false, true, true, true>(p, n);
    case 12: return FusedPass<true, false, false, true>(p, n);
    case 13: return FusedPass<true, false, true, true>(p, n);
    case 14: return FusedPass<true, true, false, true>(p, n);
    case 15: return FusedPass<true, true, true, true>(p, n);
    default: return {};
  }
}

// The sum, min and max of f(i) over n >= 1 elements in one pass: PairwiseSum's blocks and lanes
// and Extremum's lanes in one loop (the blocks are a multiple of the lanes, so the lanes of the
// extremum see the same elements in the same order), so each result is bit-identical to its own
// loop. Only when an element is infinite or NaN do min and max take ExtremumWithNaN's passes.
template <typename F>
SumMinMax StatisticsPass(int64_t n, const F& f) {
  constexpr int64_t kLanes = 8;
  static_assert(kPairwiseBlock % kLanes == 0);
  PairwiseCombiner sums;
  double lo[kLanes], hi[kLanes];
  double special[kLanes] = {};
  for (int j = 0; j < kLanes; ++j) lo[j] = hi[j] = f(0);
  for (int64_t begin = 0; begin < n; begin += kPairwiseBlock) {
    const int64_t end = std::min(n, begin + kPairwiseBlock);
    double acc[kLanes] = {};
    int64_t i = begin;
    for (; i + kLanes <= end; i += kLanes) {
      Unrolled<kLanes>([&](size_t j) {
        const double x = f(i + static_cast<int64_t>(j));
        acc[j] += x;
        special[j] += x - x;
        lo[j] = x < lo[j] ? x : lo[j];
        hi[j] = x > hi[j] ? x : hi[j];
      });
    }
    double s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < end; ++i) {  // (only in the last block: Extremum's tail, into lane 0)
      const double x = f(i);
      s += x;
      special[0] += x - x;
      lo[0] = x < lo[0] ? x : lo[0];
      hi[0] = x > hi[0] ? x : hi[0];
    }
    sums.Add(s);
  }
  SumMinMax out;
  out.sum = sums.Total();
  double any_special = special[0];
  out.min = lo[0];
  out.max = hi[0];
  for (int j = 1; j < kLanes; ++j) {
    out.min = lo[j] < out.min ? lo[j] : out.min;
    out.max = hi[j] > out.max ? hi[j] : out.max;
    any_special += special[j];
  }
  if (any_special != 0) {
    out.non_finite = true;
    out.min = ExtremumWithNaN<false>(n, f);
    out.max = ExtremumWithNaN<true>(n, f);
  }
  return out;
}

// The float32 pass is FusedPass's (sum, min and max in one loop over the floats).
inline SumMinMax StatisticsPass(int64_t n, const RealLoader<float, false>& f) {
  const FusedSums r = FusedPass<true, false, false, true>(f.p, n);
  return {r.sum, r.min, r.max, r.non_finite};
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

// Population variance by two passes (mean, then the sum of squared deviations), both pairwise;
// VarianceFromSum is the second pass, given the first pass's sum = PairwiseSum(n, f).
template <typename F>
double VarianceFromSum(int64_t n, const F& f, double sum) {
  const double mean = sum / static_cast<double>(n);
  const double ss = PairwiseSum(n, [&f, mean](int64_t i) {
    const double d = f(i) - mean;
    return d * d;
  });
  return ss / static_cast<double>(n);
}

// The float32 second pass in vector types: the generic loop's lanes and order, so the same bits.
template <bool kAbs>
double VarianceFromSum(int64_t n, const RealLoader<float, kAbs>& f, double sum) {
  const double mean = sum / static_cast<double>(n);
  const double ss = PairwiseOverBlocks(n, [&f, mean](int64_t begin, int64_t end) {
    const V4d means = V4d{} + mean;
    V4d lo = {}, hi = {};
    int64_t i = begin;
    for (; i + 8 <= end; i += 8) {
      V4d a, b;
      LoadEight<kAbs>(f.p + i, &a, &b);
      a -= means;
      b -= means;
      lo += a * a;
      hi += b * b;
    }
    double s = SumOfLanes(lo, hi);
    for (; i < end; ++i) {
      const double d = f(i) - mean;
      s += d * d;
    }
    return s;
  });
  return ss / static_cast<double>(n);
}

template <typename F>
double Variance(int64_t n, const F& f) {
  if (n == 0) return kNaN;
  return VarianceFromSum(n, f, PairwiseSum(n, f));
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
