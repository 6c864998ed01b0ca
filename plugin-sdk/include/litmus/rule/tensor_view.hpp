/// \file
/// litmus/rule/tensor_view.hpp — part of litmus/rule.hpp: TensorView, the borrowed zero-copy view
/// of one tensor value that Tensor::value(step) returns: dtype, shape, typed spans (as<float>()),
/// element access converted to double (at_double, scalar) and NaN/inf counts.
/// Thread-safety: a view is read-only; valid only during the host call that produced it.
#ifndef LITMUS_RULE_TENSOR_VIEW_HPP_
#define LITMUS_RULE_TENSOR_VIEW_HPP_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "litmus/rule/errors.hpp"
#include "litmus/rule/internal.hpp"
#include "litmus/rule/types.hpp"
#include "litmus/rule_abi.h"

namespace litmus {

// ---- Tensor values ------------------------------------------------------------------------------

/// A borrowed, zero-copy view of one tensor value: valid only until the host call in which it was
/// obtained (create, set_required_tensors, invoke_at_step or on_poll) returns. Copy what you keep.
///
/// Reading values: `scalar()` for a one-element tensor (a loss), `at_double(i)` for any numeric
/// dtype, `as<float>()` for a typed span without conversion:
/// \code
/// const litmus::TensorView value = tensor.value(step);
/// double sum = 0;
/// for (int64_t i = 0; i < value.num_elements(); ++i) sum += std::abs(value.at_double(i));
/// \endcode
class TensorView {
 public:
  /// An empty view (no elements).
  TensorView() = default;
  /// Wraps a view the host filled; `name` is the tensor's, for error texts.
  TensorView(const litmus_tensor_view_t& raw, std::string_view name)
      : raw_(raw), name_(std::make_shared<const std::string>(name)) {}
  /// The same with a name shared with its Tensor (what Tensor::value does: no copy of the name).
  TensorView(const litmus_tensor_view_t& raw, std::shared_ptr<const std::string> name)
      : raw_(raw), name_(std::move(name)) {}

  /// The tensor's name.
  const std::string& name() const {
    static const std::string kNone;
    return name_ ? *name_ : kNone;
  }
  /// The element type.
  DType dtype() const { return static_cast<DType>(raw_.dtype); }
  /// The dimensions, outermost first; empty for a 0-d tensor.
  std::span<const int64_t> shape() const {
    if (raw_.shape == nullptr) return {};
    return {raw_.shape, raw_.rank};
  }
  /// The number of dimensions.
  size_t rank() const { return raw_.rank; }
  /// The number of elements (1 for a 0-d tensor).
  int64_t num_elements() const { return raw_.num_elements; }
  /// num_elements() as size_t.
  size_t size() const { return static_cast<size_t>(raw_.num_elements); }
  /// True when the value has no elements.
  bool empty() const { return raw_.num_elements == 0; }
  /// The bytes at data().
  uint64_t byte_size() const { return raw_.byte_size; }
  /// The elements, little-endian in C order; nullptr for strings and empty values.
  const void* data() const { return raw_.data; }
  /// The global step the value was read at.
  int64_t step() const { return raw_.step; }
  /// The mode of that step.
  Mode mode() const { return static_cast<Mode>(raw_.mode); }
  /// The mode step of that step.
  int64_t mode_step() const { return raw_.mode_step; }
  /// True for a string tensor (read it with string_at or strings).
  bool is_string() const { return raw_.dtype == LITMUS_DTYPE_STRING; }
  /// The C view the host filled.
  const litmus_tensor_view_t& raw() const { return raw_; }

  /// Bytes per element of a numeric dtype; 0 for strings and unknown dtypes.
  static size_t ElementSize(DType dtype) {
    switch (dtype) {
      case DType::kInt8:
      case DType::kUInt8:
      case DType::kBool: return 1;
      case DType::kInt16:
      case DType::kUInt16:
      case DType::kFloat16: return 2;
      case DType::kFloat32:
      case DType::kInt32:
      case DType::kUInt32: return 4;
      case DType::kFloat64:
      case DType::kInt64:
      case DType::kUInt64:
      case DType::kComplex64: return 8;
      case DType::kComplex128: return 16;
      case DType::kString: return 0;
    }
    return 0;
  }

  /// The elements as a typed span. T must match the dtype exactly: float (float32), double
  /// (float64), int8_t, uint8_t (also bool tensors: one byte, 0 or 1), int16_t, uint16_t, int32_t,
  /// uint32_t, int64_t, uint64_t. Throws InvalidArgument on a mismatch; use at_double to convert.
  template <class T>
  std::span<const T> as() const {
    static_assert(!std::is_same_v<T, bool>, "read bool tensors with as<uint8_t>()");
    static_assert(DTypeOf<T>() != DType::kString,
                  "as<T>(): T must be float, double or a fixed-width integer type");
    const DType want = DTypeOf<T>();
    if (dtype() != want && !(want == DType::kUInt8 && dtype() == DType::kBool)) {
      throw InvalidArgument("tensor " + name() + ": as<" + std::string(TypeName(want)) +
                            ">() on a value of dtype " + std::to_string(raw_.dtype));
    }
    if (raw_.num_elements == 0) return {};
    return {static_cast<const T*>(raw_.data), size()};
  }

  /// Element i (flattened, C order) converted to double: any numeric dtype, float16 included.
  /// Throws InvalidArgument for strings, complex values or an index out of range.
  double at_double(int64_t i) const {
    if (i < 0 || i >= raw_.num_elements) {
      throw InvalidArgument("tensor " + name() + ": element " + std::to_string(i) +
                            " out of range (" + std::to_string(raw_.num_elements) + " elements)");
    }
    const size_t index = static_cast<size_t>(i);
    switch (dtype()) {
      case DType::kFloat32: return Load<float>(index);
      case DType::kFloat64: return Load<double>(index);
      case DType::kInt8: return Load<int8_t>(index);
      case DType::kUInt8: return Load<uint8_t>(index);
      case DType::kBool: return Load<uint8_t>(index) != 0 ? 1.0 : 0.0;
      case DType::kInt16: return Load<int16_t>(index);
      case DType::kUInt16: return Load<uint16_t>(index);
      case DType::kInt32: return Load<int32_t>(index);
      case DType::kUInt32: return Load<uint32_t>(index);
      case DType::kInt64: return static_cast<double>(Load<int64_t>(index));
      case DType::kUInt64: return static_cast<double>(Load<uint64_t>(index));
      case DType::kFloat16: return internal::HalfToDouble(Load<uint16_t>(index));
      case DType::kComplex64:
      case DType::kComplex128:
      case DType::kString: break;
    }
    throw InvalidArgument("tensor " + name() + ": at_double() on a value of dtype " +
                          std::to_string(raw_.dtype));
  }

  /// The value of a one-element tensor (a scalar such as a loss) as double.
  double scalar() const {
    if (raw_.num_elements != 1) {
      throw InvalidArgument("tensor " + name() + ": scalar() on a value with " +
                            std::to_string(raw_.num_elements) + " elements");
    }
    return at_double(0);
  }

  /// True for NaN, +inf and -inf.
  static bool is_nan_or_inf(double value) { return !std::isfinite(value); }
  /// Counts elements that are NaN or ±inf; 0 for integer, bool and string tensors.
  int64_t count_nan_or_inf() const { return Count([](double v) { return !std::isfinite(v); }); }
  /// Counts NaN elements (a complex element counts once).
  int64_t count_nan() const { return Count([](double v) { return std::isnan(v); }); }
  /// Counts ±inf elements (a complex element counts once).
  int64_t count_inf() const { return Count([](double v) { return std::isinf(v); }); }
  /// True when some element is NaN or ±inf.
  bool any_nan_or_inf() const { return count_nan_or_inf() > 0; }
  /// True when some element is NaN.
  bool any_nan() const { return count_nan() > 0; }
  /// True when some element is ±inf.
  bool any_inf() const { return count_inf() > 0; }

  /// String tensors only: element i, a view into host memory (see the class comment).
  /// InvalidArgument for a numeric tensor or an index out of range.
  std::string_view string_at(int64_t i) const {
    if (!is_string()) throw InvalidArgument("tensor " + name() + ": string_at() on a numeric value");
    if (i < 0 || i >= raw_.num_elements || raw_.strings == nullptr) {
      throw InvalidArgument("tensor " + name() + ": string " + std::to_string(i) +
                            " out of range (" + std::to_string(raw_.num_elements) + " elements)");
    }
    return internal::FromStr(raw_.strings[i]);
  }
  /// String tensors only: every element, views into host memory.
  std::vector<std::string_view> strings() const {
    std::vector<std::string_view> out;
    for (int64_t i = 0; i < raw_.num_elements; ++i) out.push_back(string_at(i));
    return out;
  }

 private:
  template <class T>
  static constexpr DType DTypeOf() {
    if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
    if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
    if constexpr (std::is_same_v<T, int8_t>) return DType::kInt8;
    if constexpr (std::is_same_v<T, uint8_t>) return DType::kUInt8;
    if constexpr (std::is_same_v<T, int16_t>) return DType::kInt16;
    if constexpr (std::is_same_v<T, uint16_t>) return DType::kUInt16;
    if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
    if constexpr (std::is_same_v<T, uint32_t>) return DType::kUInt32;
    if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
    if constexpr (std::is_same_v<T, uint64_t>) return DType::kUInt64;
    return DType::kString;  // "unsupported" for the static_assert above
  }
  static std::string_view TypeName(DType dtype) {
    switch (dtype) {
      case DType::kFloat32: return "float";
      case DType::kFloat64: return "double";
      case DType::kInt8: return "int8_t";
      case DType::kUInt8: return "uint8_t";
      case DType::kInt16: return "int16_t";
      case DType::kUInt16: return "uint16_t";
      case DType::kInt32: return "int32_t";
      case DType::kUInt32: return "uint32_t";
      case DType::kInt64: return "int64_t";
      case DType::kUInt64: return "uint64_t";
      case DType::kBool:
      case DType::kFloat16:
      case DType::kComplex64:
      case DType::kComplex128:
      case DType::kString: break;
    }
    return "?";
  }
  template <class T>
  T Load(size_t index) const {
    T value;
    std::memcpy(&value, static_cast<const unsigned char*>(raw_.data) + index * sizeof(T),
                sizeof(T));
    return value;
  }
  template <class Predicate>
  int64_t Count(Predicate predicate) const {
    int64_t count = 0;
    switch (dtype()) {
      case DType::kFloat32:
        for (const float v : as<float>()) count += predicate(v) ? 1 : 0;
        return count;
      case DType::kFloat64:
        for (const double v : as<double>()) count += predicate(v) ? 1 : 0;
        return count;
      case DType::kFloat16:
        for (int64_t i = 0; i < raw_.num_elements; ++i) count += predicate(at_double(i)) ? 1 : 0;
        return count;
      case DType::kComplex64:
      case DType::kComplex128: {
        const size_t parts = static_cast<size_t>(raw_.num_elements) * 2;
        for (size_t i = 0; i < parts; ++i) {
          const double v = dtype() == DType::kComplex64 ? Load<float>(i) : Load<double>(i);
          if (predicate(v)) {
            ++count;
            i |= 1;  // count each complex element once
          }
        }
        return count;
      }
      case DType::kInt8:
      case DType::kUInt8:
      case DType::kBool:
      case DType::kInt16:
      case DType::kUInt16:
      case DType::kInt32:
      case DType::kUInt32:
      case DType::kInt64:
      case DType::kUInt64:
      case DType::kString: return 0;
    }
    return 0;
  }

  litmus_tensor_view_t raw_{};
  std::shared_ptr<const std::string> name_;  // the Tensor's (null in a default-constructed view)
};

}  // namespace litmus

#endif  // LITMUS_RULE_TENSOR_VIEW_HPP_
