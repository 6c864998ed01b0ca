// numpy.allclose over two tensor values, shared by UnchangedTensor and SimilarAcrossRuns
// (docs/rules/UnchangedTensor.md, SimilarAcrossRuns.md): elementwise |a - b| <= atol + rtol * |b|
// (b is the reference), equal infinities are close and other infinities are not, NaN is close only
// to NaN and only with equal_nan. Unlike numpy nothing is broadcast: values of different shapes are
// different. Header-only on the public SDK; stateless and thread-safe.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>

#include "litmus/rule.hpp"

namespace litmus_builtin {

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-8;
  bool equal_nan = false;
};

// numpy.isclose(a, b) for one pair of elements, computed in double.
inline bool IsClose(double a, double b, const Tolerance& tolerance) {
  if (a == b) return true;  // also equal infinities
  if (std::isnan(a) || std::isnan(b)) return tolerance.equal_nan && std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return false;
  return std::fabs(a - b) <= tolerance.atol + tolerance.rtol * std::fabs(b);
}

enum class Comparison {
  kClose,         // same shape, every element pair close (strings: equal)
  kDifferent,     // different shapes, a pair that is not close, or strings against numbers
  kIncomparable,  // complex values: the SDK has no typed access to them
};

namespace internal {

inline bool IsComplex(const litmus::TensorView& view) {
  return view.dtype() == litmus::DType::kComplex64 || view.dtype() == litmus::DType::kComplex128;
}

// Every pair close (IsClose). Blocks of elements are checked without branches, each test as a
// 0/1 integer (GCC vectorizes that form, not one with bools); the scan stops after the block
// holding the first pair that is not close. Blocks start small and double: values that differ
// usually differ from their first elements on (a weight after an update).
template <class A, class B>
bool SpansClose(std::span<const A> a, std::span<const B> b, const Tolerance& tolerance) {
  constexpr size_t kFirstBlock = 8, kLargestBlock = 512;
  const double atol = tolerance.atol, rtol = tolerance.rtol;
  const int64_t nan_is_close = tolerance.equal_nan ? 1 : 0;
  const A* pa = a.data();
  const B* pb = b.data();
  size_t block = kFirstBlock;
  for (size_t start = 0; start < a.size(); start += block, block = std::min(2 * block, kLargestBlock)) {
    const size_t end = std::min(a.size(), start + block);
    int64_t not_close = 0;
    for (size_t i = start; i < end; ++i) {
      const double x = static_cast<double>(pa[i]), y = static_cast<double>(pb[i]);
      const int64_t equal = x == y;  // (equal infinities too)
      const int64_t finite = (std::fabs(x) < HUGE_VAL) & (std::fabs(y) < HUGE_VAL);  // (NaN: not)
      const int64_t within = std::fabs(x - y) <= atol + rtol * std::fabs(y);
      const int64_t both_nan = (x != x) & (y != y) & nan_is_close;
      not_close += 1 - (equal | (finite & within) | both_nan);
    }
    if (not_close != 0) return false;
  }
  return true;
}

// max |a_i - b_i| over the pairs, NaN if a pair holds one (see MaxAbsDifference).
template <class A, class B>
double SpansMaxAbsDifference(std::span<const A> a, std::span<const B> b) {
  double max = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = static_cast<double>(a[i]), y = static_cast<double>(b[i]);
    if (std::isnan(x) || std::isnan(y)) return std::nan("");
    const double difference = x == y ? 0.0 : std::fabs(x - y);  // (equal infinities: 0)
    if (difference > max) max = difference;
  }
  return max;
}

// Calls f(a.as<T>(), b.as<T>()) when both views hold the same dtype with a typed span (float32,
// float64, the fixed-width integers) and returns its result; nullopt for any other pair.
template <class F>
auto WithSameTypedSpans(const litmus::TensorView& a, const litmus::TensorView& b, F&& f)
    -> std::optional<decltype(f(std::span<const float>(), std::span<const float>()))> {
  if (a.dtype() != b.dtype()) return std::nullopt;
  switch (a.dtype()) {
    case litmus::DType::kFloat32: return f(a.as<float>(), b.as<float>());
    case litmus::DType::kFloat64: return f(a.as<double>(), b.as<double>());
    case litmus::DType::kInt8: return f(a.as<int8_t>(), b.as<int8_t>());
    case litmus::DType::kUInt8: return f(a.as<uint8_t>(), b.as<uint8_t>());
    case litmus::DType::kInt16: return f(a.as<int16_t>(), b.as<int16_t>());
    case litmus::DType::kUInt16: return f(a.as<uint16_t>(), b.as<uint16_t>());
    case litmus::DType::kInt32: return f(a.as<int32_t>(), b.as<int32_t>());
    case litmus::DType::kUInt32: return f(a.as<uint32_t>(), b.as<uint32_t>());
    case litmus::DType::kInt64: return f(a.as<int64_t>(), b.as<int64_t>());
    case litmus::DType::kUInt64: return f(a.as<uint64_t>(), b.as<uint64_t>());
    default: return std::nullopt;  // (bool, float16: through at_double)
  }
}

}  // namespace internal

// Compares `a` with the reference `b`. Pairs of one dtype with typed spans (float32, float64, the
// fixed-width integers) run on them; bool, float16 and mixed dtypes element by element as double.
// Stops soon after the first pair that is not close.
inline Comparison CompareValues(const litmus::TensorView& a, const litmus::TensorView& b,
                                const Tolerance& tolerance) {
  if (internal::IsComplex(a) || internal::IsComplex(b)) return Comparison::kIncomparable;
  const std::span<const int64_t> shape_a = a.shape(), shape_b = b.shape();
  if (!std::equal(shape_a.begin(), shape_a.end(), shape_b.begin(), shape_b.end()) ||
      a.num_elements() != b.num_elements()) {
    return Comparison::kDifferent;
  }
  if (a.is_string() || b.is_string()) {
    if (!a.is_string() || !b.is_string()) return Comparison::kDifferent;
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      if (a.string_at(i) != b.string_at(i)) return Comparison::kDifferent;
    }
    return Comparison::kClose;
  }
  std::optional<bool> close = internal::WithSameTypedSpans(
      a, b, [&](auto x, auto y) { return internal::SpansClose(x, y, tolerance); });
  if (!close) {
    close = true;
    for (int64_t i = 0; i < a.num_elements() && *close; ++i) {
      close = IsClose(a.at_double(i), b.at_double(i), tolerance);
    }
  }
  return *close ? Comparison::kClose : Comparison::kDifferent;
}

// max |a_i - b_i| of two numeric values of the same shape: NaN if any pair holds a NaN, an
// infinity if a pair differs by one (equal infinities differ by 0). nullopt for strings, complex
// values or different shapes.
inline std::optional<double> MaxAbsDifference(const litmus::TensorView& a,
                                              const litmus::TensorView& b) {
  if (internal::IsComplex(a) || internal::IsComplex(b) || a.is_string() || b.is_string()) {
    return std::nullopt;
  }
  const std::span<const int64_t> shape_a = a.shape(), shape_b = b.shape();
  if (!std::equal(shape_a.begin(), shape_a.end(), shape_b.begin(), shape_b.end()) ||
      a.num_elements() != b.num_elements()) {
    return std::nullopt;
  }
  const std::optional<double> typed =
      internal::WithSameTypedSpans(a, b, [](auto x, auto y) { return internal::SpansMaxAbsDifference(x, y); });
  if (typed) return typed;
  double max = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    const double x = a.at_double(i), y = b.at_double(i);
    if (std::isnan(x) || std::isnan(y)) return std::nan("");
    const double difference = x == y ? 0.0 : std::fabs(x - y);
    if (difference > max) max = difference;
  }
  return max;
}

}  // namespace litmus_builtin
