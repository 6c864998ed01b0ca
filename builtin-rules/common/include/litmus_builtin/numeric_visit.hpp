// Typed, loop-friendly access to a tensor's elements whatever its numeric dtype (the SDK hands a
// rule tensors of any dtype). VisitNumeric calls `f` once with a std::span<const T> of the
// elements, T being the stored type, so hot loops run without TensorView::at_double's per-element
// dtype switch. Header-only on the public SDK; stateless and thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "litmus/rule.hpp"

namespace litmus_builtin {

// Calls f(std::span<const T>) with the elements of `view` in C order and returns true; float16 is
// widened to float and bool arrives as uint8_t (0 or 1). Returns false without calling f when the
// elements are not real numbers (string or complex dtypes).
template <class F>
bool VisitNumeric(const litmus::TensorView& view, F&& f) {
  using litmus::DType;
  switch (view.dtype()) {
    case DType::kFloat32: f(view.as<float>()); return true;
    case DType::kFloat64: f(view.as<double>()); return true;
    case DType::kInt8: f(view.as<int8_t>()); return true;
    case DType::kUInt8:
    case DType::kBool: f(view.as<uint8_t>()); return true;
    case DType::kInt16: f(view.as<int16_t>()); return true;
    case DType::kUInt16: f(view.as<uint16_t>()); return true;
    case DType::kInt32: f(view.as<int32_t>()); return true;
    case DType::kUInt32: f(view.as<uint32_t>()); return true;
    case DType::kInt64: f(view.as<int64_t>()); return true;
    case DType::kUInt64: f(view.as<uint64_t>()); return true;
    case DType::kFloat16: {
      std::vector<float> widened(view.size());
      for (size_t i = 0; i < widened.size(); ++i) {
        widened[i] = static_cast<float>(view.at_double(static_cast<int64_t>(i)));
      }
      f(std::span<const float>(widened));
      return true;
    }
    case DType::kComplex64:
    case DType::kComplex128:
    case DType::kString: return false;
  }
  return false;
}

}  // namespace litmus_builtin
