// ComputeReduction and StoredReductionValue (reductions.h). One switch on the dtype picks a
// kernel templated on the element loader, so the per-element loops are tight, branch-free and
// vectorisable; every loop accumulates in double. Pure functions; thread-safe.
#include "litmus/engine/reductions.h"

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace litmus {
namespace {

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
// select has minsd/maxsd semantics (drops NaN), so NaNs are counted in separate integer lanes.
template <bool kMax, typename F>
double Extremum(int64_t n, const F& f) {
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

// `f` already applies |x| for abs reductions and gives magnitudes for complex tensors.
template <typename F>
StatusOr<double> Reduce(int64_t n, const F& f, Reduction reduction, const std::string& what) {
  switch (reduction) {
    case Reduction::kMin:
    case Reduction::kMax:
      if (n == 0) return InvalidArgumentError(what + ": reduction undefined on empty tensor");
      return reduction == Reduction::kMin ? Extremum<false>(n, f) : Extremum<true>(n, f);
    case Reduction::kMean:
      return n == 0 ? kNaN : PairwiseSum(n, f) / static_cast<double>(n);
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
  return InternalError(what + ": unknown reduction");
}

template <typename T>
StatusOr<double> ReduceReal(const Tensor& t, Reduction r, bool abs, const std::string& what) {
  const T* p = t.as<T>().data();
  if (abs) return Reduce(t.num_elements(), RealLoader<T, true>{p}, r, what);
  return Reduce(t.num_elements(), RealLoader<T, false>{p}, r, what);
}

}  // namespace

StatusOr<double> ComputeReduction(const Tensor& tensor, Reduction reduction, bool abs) {
  std::string what = std::string(abs ? "abs_" : "") + std::string(layout::ReductionName(reduction));
  const int64_t n = tensor.num_elements();
  switch (tensor.dtype()) {
    case DType::kFloat32: return ReduceReal<float>(tensor, reduction, abs, what);
    case DType::kFloat64: return ReduceReal<double>(tensor, reduction, abs, what);
    case DType::kInt32: return ReduceReal<int32_t>(tensor, reduction, abs, what);
    case DType::kUInt8: return ReduceReal<uint8_t>(tensor, reduction, abs, what);
    case DType::kInt16: return ReduceReal<int16_t>(tensor, reduction, abs, what);
    case DType::kInt8: return ReduceReal<int8_t>(tensor, reduction, abs, what);
    case DType::kInt64: return ReduceReal<int64_t>(tensor, reduction, abs, what);
    case DType::kUInt16: return ReduceReal<uint16_t>(tensor, reduction, abs, what);
    case DType::kUInt32: return ReduceReal<uint32_t>(tensor, reduction, abs, what);
    case DType::kUInt64: return ReduceReal<uint64_t>(tensor, reduction, abs, what);
    case DType::kBool:
      return Reduce(n, BoolLoader{tensor.as<uint8_t>().data()}, reduction, what);
    case DType::kFloat16: {
      const uint16_t* p = tensor.as<uint16_t>().data();
      if (abs) return Reduce(n, HalfLoader<true>{p}, reduction, what);
      return Reduce(n, HalfLoader<false>{p}, reduction, what);
    }
    case DType::kComplex64:
    case DType::kComplex128:
      // Only reductions over magnitudes are defined. l1 and l2 are allowed without abs because
      // the norms of a complex vector are Σ|z| and sqrt(Σ|z|²) either way (numpy agrees for 1-D).
      if (!abs && reduction != Reduction::kL1 && reduction != Reduction::kL2) {
        return InvalidArgumentError(what + " is unsupported for complex tensors (use abs_" +
                                    std::string(layout::ReductionName(reduction)) + ")");
      }
      if (tensor.dtype() == DType::kComplex64) {
        return Reduce(n, MagnitudeLoader<float>{reinterpret_cast<const float*>(tensor.bytes().data())},
                      reduction, what);
      }
      return Reduce(n, MagnitudeLoader<double>{reinterpret_cast<const double*>(tensor.bytes().data())},
                    reduction, what);
    case DType::kInvalid:
    case DType::kString: break;
  }
  return InvalidArgumentError(what + " is unsupported for string tensors");
}

StatusOr<double> StoredReductionValue(const Tensor& stored) {
  if (stored.is_string()) {
    return InvalidArgumentError("stored reduction holds strings, not a number");
  }
  if (IsComplex(stored.dtype())) {
    return InvalidArgumentError("stored reduction has complex dtype " +
                                std::string(DTypeName(stored.dtype())));
  }
  if (stored.num_elements() != 1) {
    return InvalidArgumentError("stored reduction holds " + std::to_string(stored.num_elements()) +
                                " elements, expected exactly one");
  }
  return stored.ElementAsDouble(0);
}

}  // namespace litmus
