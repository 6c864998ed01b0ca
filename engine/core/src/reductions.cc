// ComputeReduction and StoredReductionValue (reductions.h). One switch on the dtype picks a
// kernel templated on the element loader (reduction_kernels.h), so the per-element loops are
// tight, branch-free and vectorisable; every loop accumulates in double. float32 and float64
// tensors run the AVX2 build of the kernels on CPUs that have it (same results, twice the
// lanes). Pure functions; thread-safe.
#include "litmus/engine/reductions.h"

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#define LITMUS_REDUCTION_ISA portable
#include "reduction_kernels.h"

namespace litmus {
namespace {

using layout::Reduction;
using namespace reduction_kernels::portable;  // NOLINT(google-build-using-namespace): the kernels

// The AVX2 kernels run where they were built (x86-64, LITMUS_AVX2_KERNELS) and the CPU has AVX2.
bool HasAvx2() {
#ifdef LITMUS_AVX2_KERNELS
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
#else
  return false;
#endif
}

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
#ifdef LITMUS_AVX2_KERNELS
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (t.num_elements() > 0 && HasAvx2()) {
      if constexpr (std::is_same_v<T, float>) return reduction_kernels::avx2::ReduceFloat32(p, t.num_elements(), r, abs);
      if constexpr (std::is_same_v<T, double>) return reduction_kernels::avx2::ReduceFloat64(p, t.num_elements(), r, abs);
    }
  }
#endif
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

namespace {

// The float32 pieces of ComputeReductions, from the AVX2 build where the CPU has it.
reduction_kernels::FusedSums Fused(const float* p, int64_t n, bool sum, bool abs_sum, bool abs_max, bool min_max) {
#ifdef LITMUS_AVX2_KERNELS
  if (HasAvx2()) {
    reduction_kernels::FusedSums out;
    reduction_kernels::avx2::FusedFloat32(p, n, sum, abs_sum, abs_max, min_max, &out);
    return out;
  }
#endif
  return FusedFloat32(p, n, sum, abs_sum, abs_max, min_max);
}

double VarianceOf(const float* p, int64_t n, double sum, bool abs) {
#ifdef LITMUS_AVX2_KERNELS
  if (HasAvx2()) return reduction_kernels::avx2::VarianceFloat32FromSum(p, n, sum, abs);
#endif
  if (abs) return VarianceFromSum(n, RealLoader<float, true>{p}, sum);
  return VarianceFromSum(n, RealLoader<float, false>{p}, sum);
}

}  // namespace

namespace {

// ComputeReductions' work, handing result i to emit(StatusOr<double>) in order.
template <typename Emit>
void ComputeReductionsEach(const Tensor& tensor, std::span<const ReductionRequest> requests, TensorStatistics* statistics,
                           Emit&& emit) {
  const int64_t n = tensor.num_elements();
  if (tensor.dtype() != DType::kFloat32 || n == 0) {
    for (const ReductionRequest& r : requests) emit(ComputeReduction(tensor, r.reduction, r.abs));
    if (statistics != nullptr) *statistics = ComputeStatistics(tensor);
    return;
  }
  // Which parts of the fused pass the requests use (the others fall back to their own kernel).
  bool sum = statistics != nullptr, abs_sum = false, abs_max = false, min_max = statistics != nullptr;
  for (const ReductionRequest& r : requests) {
    switch (r.reduction) {
      case Reduction::kSum:
      case Reduction::kMean:
      case Reduction::kVariance:
      case Reduction::kStd: (r.abs ? abs_sum : sum) = true; break;
      case Reduction::kL1: abs_sum = true; break;  // Σ|x| with or without abs
      case Reduction::kMax: abs_max = abs_max || r.abs; break;
      default: break;
    }
  }
  // (The min and max are in the pass only with the statistics: alone, their own kernel is as fast.)
  const float* p = tensor.as<float>().data();
  const reduction_kernels::FusedSums sums =
      (sum || abs_sum || abs_max || min_max) ? Fused(p, n, sum, abs_sum, abs_max, min_max) : reduction_kernels::FusedSums{};
  const double count = static_cast<double>(n);
  for (const ReductionRequest& r : requests) {
    const double total = r.abs ? sums.abs_sum : sums.sum;
    switch (r.reduction) {
      case Reduction::kSum: emit(total); break;
      case Reduction::kMean: emit(total / count); break;
      case Reduction::kVariance: emit(VarianceOf(p, n, total, r.abs)); break;
      case Reduction::kStd: emit(std::sqrt(VarianceOf(p, n, total, r.abs))); break;
      case Reduction::kL1: emit(sums.abs_sum); break;
      default:
        if (r.reduction == Reduction::kMax && r.abs) {
          emit(sums.abs_max);
        } else if ((r.reduction == Reduction::kMin || r.reduction == Reduction::kMax) && !r.abs && min_max) {
          emit(r.reduction == Reduction::kMin ? sums.min : sums.max);
        } else {
          emit(ComputeReduction(tensor, r.reduction, r.abs));
        }
    }
  }
  if (statistics != nullptr) {
    *statistics = TensorStatistics{.elements = n, .mean = sums.sum / count, .min = sums.min, .max = sums.max, .non_finite = {}};
    // (Counting by kind takes another pass: only for data that holds a NaN or an infinity.)
    if (sums.non_finite) statistics->non_finite = CountNonFinite(tensor);
  }
}

}  // namespace

std::vector<StatusOr<double>> ComputeReductions(const Tensor& tensor, std::span<const ReductionRequest> requests,
                                                TensorStatistics* statistics) {
  std::vector<StatusOr<double>> out;
  out.reserve(requests.size());
  ComputeReductionsEach(tensor, requests, statistics, [&out](StatusOr<double> value) { out.push_back(std::move(value)); });
  return out;
}

void ComputeReductionsInto(const Tensor& tensor, std::span<const ReductionRequest> requests, std::span<double> values,
                           std::span<bool> ok, TensorStatistics* statistics) {
  size_t i = 0;
  ComputeReductionsEach(tensor, requests, statistics, [&](const StatusOr<double>& value) {
    ok[i] = value.ok();
    values[i] = value.ok() ? *value : 0.0;
    ++i;
  });
}

namespace {

// float32/float64: the exponent bits all set is a NaN (mantissa != 0) or an infinity. A first
// pass that only counts such elements vectorizes; a tensor without any (the usual case) is done.
template <typename Bits>
NonFiniteCounts CountNonFiniteBits(std::span<const std::byte> bytes, Bits exponent, Bits mantissa, Bits sign) {
  NonFiniteCounts counts;
  const size_t n = bytes.size() / sizeof(Bits);
  const auto* data = reinterpret_cast<const std::byte*>(bytes.data());
  size_t special = 0;
  for (size_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, data + i * sizeof(Bits), sizeof(Bits));
    special += (b & exponent) == exponent;
  }
  if (special == 0) return counts;
  for (size_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, data + i * sizeof(Bits), sizeof(Bits));
    if ((b & exponent) != exponent) continue;
    if ((b & mantissa) != 0) {
      ++counts.nan;
    } else if ((b & sign) != 0) {
      ++counts.neginf;
    } else {
      ++counts.posinf;
    }
  }
  return counts;
}

}  // namespace

NonFiniteCounts CountNonFinite(const Tensor& t) {
  NonFiniteCounts counts;
  if (t.dtype() == DType::kFloat32) {
    return CountNonFiniteBits<uint32_t>(t.bytes(), 0x7f800000u, 0x007fffffu, 0x80000000u);
  }
  if (t.dtype() == DType::kFloat64) {
    return CountNonFiniteBits<uint64_t>(t.bytes(), 0x7ff0000000000000ull, 0x000fffffffffffffull,
                                        0x8000000000000000ull);
  }
  if (!IsFloating(t.dtype()) && !IsComplex(t.dtype())) return counts;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const std::complex<double> z = t.ElementAsComplex(i);
    counts.nan += std::isnan(z.real()) || std::isnan(z.imag());
    counts.posinf += (std::isinf(z.real()) && z.real() > 0) || (std::isinf(z.imag()) && z.imag() > 0);
    counts.neginf += (std::isinf(z.real()) && z.real() < 0) || (std::isinf(z.imag()) && z.imag() < 0);
  }
  return counts;
}

namespace {

// The one pass of ComputeStatistics over real elements (float32 and float64 from the AVX2 build
// where the CPU has it).
template <typename T>
reduction_kernels::SumMinMax StatisticsOf(const T* p, int64_t n) {
#ifdef LITMUS_AVX2_KERNELS
  if (HasAvx2()) {
    if constexpr (std::is_same_v<T, float>) return reduction_kernels::avx2::StatisticsFloat32(p, n);
    if constexpr (std::is_same_v<T, double>) return reduction_kernels::avx2::StatisticsFloat64(p, n);
  }
#endif
  return StatisticsPass(n, RealLoader<T, false>{p});
}

template <typename T>
reduction_kernels::SumMinMax StatisticsOf(const Tensor& t) {
  return StatisticsOf(t.as<T>().data(), t.num_elements());
}

}  // namespace

TensorStatistics ComputeStatistics(const Tensor& t) {
  TensorStatistics out;
  if (t.is_string() || t.dtype() == DType::kInvalid) return out;
  const int64_t n = t.num_elements();
  out.elements = n;
  if (n == 0 || IsComplex(t.dtype())) {
    // (What ComputeReductions gives: mean NaN, min/max errors; complex: errors but for counts.)
    out.mean = out.min = out.max = kNaN;
    out.non_finite = CountNonFinite(t);
    return out;
  }
  reduction_kernels::SumMinMax r;
  switch (t.dtype()) {
    case DType::kFloat32: r = StatisticsOf<float>(t); break;
    case DType::kFloat64: r = StatisticsOf<double>(t); break;
    case DType::kInt32: r = StatisticsOf<int32_t>(t); break;
    case DType::kUInt8: r = StatisticsOf<uint8_t>(t); break;
    case DType::kInt16: r = StatisticsOf<int16_t>(t); break;
    case DType::kInt8: r = StatisticsOf<int8_t>(t); break;
    case DType::kInt64: r = StatisticsOf<int64_t>(t); break;
    case DType::kUInt16: r = StatisticsOf<uint16_t>(t); break;
    case DType::kUInt32: r = StatisticsOf<uint32_t>(t); break;
    case DType::kUInt64: r = StatisticsOf<uint64_t>(t); break;
    case DType::kBool: r = StatisticsPass(n, BoolLoader{t.as<uint8_t>().data()}); break;
    case DType::kFloat16: r = StatisticsPass(n, HalfLoader<false>{t.as<uint16_t>().data()}); break;
    default: return out;  // (complex, strings: above)
  }
  out.mean = r.sum / static_cast<double>(n);
  out.min = r.min;
  out.max = r.max;
  // Counting by kind takes another pass: only for data the pass found a NaN or infinity in.
  if (r.non_finite) out.non_finite = CountNonFinite(t);
  return out;
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
