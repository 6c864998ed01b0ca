// Statistics of a numeric tensor's elements, computed in double, from which the writer takes the
// stored reductions (docs/trial-format.md §7.4): population std/variance (ddof = 0), element-wise
// l1/l2 norms, NaN-propagating min/max, |x| in the double domain (|INT32_MIN| = 2147483648),
// magnitudes for complex. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "litmus/format/dtype.h"
#include "litmus/format/trial_layout.h"
#include "litmus/status.h"

namespace litmus::writer::internal {

struct TensorStats {
  double min = 0, max = 0, mean = 0, variance = 0, sum = 0, prod = 1, l1 = 0, l2 = 0;
  double Get(layout::Reduction r) const;
};

// Statistics of the `count` elements in `data` (DTypeSize(dtype) bytes each, little-endian), or
// of their absolute values when `abs` is set. REQUIRES: count >= 1, data.size() == count * size.
// Unimplemented for strings, and for complex without `abs` (only reductions over magnitudes are
// defined for complex tensors).
StatusOr<TensorStats> ComputeStats(DType dtype, std::span<const std::byte> data, int64_t count,
                                   bool abs);

// Calls f(double) with each of the `count` elements of `data` (DTypeSize(dtype) bytes each,
// little-endian) as a real number: float16 widened, integers converted, bool as 0 or 1. Returns
// false, calling nothing, for complex and string dtypes (no single real value per element).
// REQUIRES: data.size() == count * DTypeSize(dtype).
template <typename F>
bool ForEachReal(DType dtype, std::span<const std::byte> data, int64_t count, F&& f) {
  struct Half {  // float16 bits, a type of its own so that uint16 stays an integer
    uint16_t bits;
  };
  const auto each = [&]<typename T>(T*) {
    for (int64_t i = 0; i < count; ++i) {
      T value;
      std::memcpy(&value, data.data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
      if constexpr (std::is_same_v<T, Half>) {
        f(static_cast<double>(HalfToFloat(value.bits)));
      } else {
        f(static_cast<double>(value));
      }
    }
    return true;
  };
  switch (dtype) {
    case DType::kFloat32: return each(static_cast<float*>(nullptr));
    case DType::kFloat64: return each(static_cast<double*>(nullptr));
    case DType::kFloat16: return each(static_cast<Half*>(nullptr));
    case DType::kInt8: return each(static_cast<int8_t*>(nullptr));
    case DType::kInt16: return each(static_cast<int16_t*>(nullptr));
    case DType::kInt32: return each(static_cast<int32_t*>(nullptr));
    case DType::kInt64: return each(static_cast<int64_t*>(nullptr));
    case DType::kUInt8: return each(static_cast<uint8_t*>(nullptr));
    case DType::kBool: return each(static_cast<uint8_t*>(nullptr));
    case DType::kUInt16: return each(static_cast<uint16_t*>(nullptr));
    case DType::kUInt32: return each(static_cast<uint32_t*>(nullptr));
    case DType::kUInt64: return each(static_cast<uint64_t*>(nullptr));
    case DType::kComplex64:
    case DType::kComplex128:
    case DType::kInvalid:
    case DType::kString:
      break;
  }
  return false;
}

}  // namespace litmus::writer::internal
