// Element-wise statistics for stored reductions; see tensor_stats.h. Thread-safe.
#include "tensor_stats.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>

namespace litmus::writer::internal {
namespace {

template <typename T>
T LoadAt(std::span<const std::byte> data, int64_t i) {
  T value;
  std::memcpy(&value, data.data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return value;
}

// Two passes: sums, extremes and norms first, then the centred second moment (more accurate
// than the one-pass sum-of-squares formula for data with a large mean).
template <typename Load>
TensorStats Accumulate(int64_t count, Load load) {
  TensorStats s;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -std::numeric_limits<double>::infinity();
  bool saw_nan = false;
  double sum_sq = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double v = load(i);
    if (std::isnan(v)) {
      saw_nan = true;
    } else {
      if (v < s.min) s.min = v;
      if (v > s.max) s.max = v;
    }
    s.sum += v;
    s.prod *= v;
    s.l1 += std::fabs(v);
    sum_sq += v * v;
  }
  if (saw_nan) s.min = s.max = std::numeric_limits<double>::quiet_NaN();
  s.mean = s.sum / static_cast<double>(count);
  s.l2 = std::sqrt(sum_sq);
  double centred = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = load(i) - s.mean;
    centred += d * d;
  }
  s.variance = centred / static_cast<double>(count);
  return s;
}

template <typename T>
TensorStats AccumulateReal(std::span<const std::byte> data, int64_t count, bool abs) {
  return Accumulate(count, [&](int64_t i) {
    const double v = static_cast<double>(LoadAt<T>(data, i));
    return abs ? std::fabs(v) : v;
  });
}

template <typename T>
TensorStats AccumulateMagnitude(std::span<const std::byte> data, int64_t count) {
  return Accumulate(count, [&](int64_t i) {
    const T re = LoadAt<T>(data, 2 * i);
    const T im = LoadAt<T>(data, 2 * i + 1);
    return std::abs(std::complex<double>(re, im));
  });
}

}  // namespace

double TensorStats::Get(layout::Reduction r) const {
  switch (r) {
    case layout::Reduction::kMin: return min;
    case layout::Reduction::kMax: return max;
    case layout::Reduction::kMean: return mean;
    case layout::Reduction::kStd: return std::sqrt(variance);
    case layout::Reduction::kVariance: return variance;
    case layout::Reduction::kSum: return sum;
    case layout::Reduction::kProd: return prod;
    case layout::Reduction::kL1: return l1;
    case layout::Reduction::kL2: return l2;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

StatusOr<TensorStats> ComputeStats(DType dtype, std::span<const std::byte> data, int64_t count,
                                   bool abs) {
  switch (dtype) {
    case DType::kFloat32: return AccumulateReal<float>(data, count, abs);
    case DType::kFloat64: return AccumulateReal<double>(data, count, abs);
    case DType::kInt8: return AccumulateReal<int8_t>(data, count, abs);
    case DType::kInt16: return AccumulateReal<int16_t>(data, count, abs);
    case DType::kInt32: return AccumulateReal<int32_t>(data, count, abs);
    case DType::kInt64: return AccumulateReal<int64_t>(data, count, abs);
    case DType::kUInt8: return AccumulateReal<uint8_t>(data, count, abs);
    case DType::kUInt16: return AccumulateReal<uint16_t>(data, count, abs);
    case DType::kUInt32: return AccumulateReal<uint32_t>(data, count, abs);
    case DType::kUInt64: return AccumulateReal<uint64_t>(data, count, abs);
    case DType::kBool: return AccumulateReal<uint8_t>(data, count, abs);
    case DType::kFloat16:
      return Accumulate(count, [&](int64_t i) {
        const double v = HalfToFloat(LoadAt<uint16_t>(data, i));
        return abs ? std::fabs(v) : v;
      });
    case DType::kComplex64:
    case DType::kComplex128:
      if (!abs) {
        return UnimplementedError(
            "only abs_ reductions and abs norms are defined for complex tensors");
      }
      return dtype == DType::kComplex64 ? AccumulateMagnitude<float>(data, count)
                                        : AccumulateMagnitude<double>(data, count);
    case DType::kInvalid:
    case DType::kString:
      return UnimplementedError("reductions are not defined for string tensors");
  }
  return UnimplementedError("reductions are not defined for dtype " +
                            std::to_string(static_cast<int32_t>(dtype)));
}

}  // namespace litmus::writer::internal
