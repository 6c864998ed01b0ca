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

template <class A, class B>
bool SpansClose(std::span<const A> a, std::span<const B> b, const Tolerance& tolerance) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (!IsClose(static_cast<double>(a[i]), static_cast<double>(b[i]), tolerance)) return false;
  }
  return true;
}

}  // namespace internal

// Compares `a` with the reference `b`. float32 and float64 pairs run on typed spans; every other
// numeric dtype (and mixed dtypes) element by element as double. Stops at the first pair that is
// not close.
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
  bool close = true;
  if (a.dtype() == litmus::DType::kFloat32 && b.dtype() == litmus::DType::kFloat32) {
    close = internal::SpansClose(a.as<float>(), b.as<float>(), tolerance);
  } else if (a.dtype() == litmus::DType::kFloat64 && b.dtype() == litmus::DType::kFloat64) {
    close = internal::SpansClose(a.as<double>(), b.as<double>(), tolerance);
  } else {
    for (int64_t i = 0; i < a.num_elements() && close; ++i) {
      close = IsClose(a.at_double(i), b.at_double(i), tolerance);
    }
  }
  return close ? Comparison::kClose : Comparison::kDifferent;
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
