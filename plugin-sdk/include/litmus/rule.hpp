// litmus/rule.hpp — the header-only C++20 layer for writing litmus rule plugins over the C ABI in
// litmus/rule_abi.h: Rule base class, Trial/Tensor/TensorView handles, typed parameters,
// RequiredTensors, logging and reports, on_poll and add_action (ABI 1.1), and LITMUS_RULE_PLUGIN,
// which emits the plugin's only export.
// Thread-safety: a Rule and every handle it hands out are used by one thread at a time (the host
// calls an instance from one thread at a time); host access works only during a host call.
#ifndef LITMUS_RULE_HPP_
#define LITMUS_RULE_HPP_

#if !defined(__cplusplus) || __cplusplus < 202002L
#error "litmus/rule.hpp needs C++20"
#endif

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "litmus/rule_abi.h"

// Naming note: the rule-facing API keeps smdebug's snake_case method names (invoke_at_step,
// base_trial, reduction_value, req_tensors ...) so that a rule ported from Python reads the same;
// everything else follows the house style.

namespace litmus {

// ---- Enumerations mirroring the ABI's frozen values -------------------------------------------

enum class Mode : int32_t {
  kTrain = LITMUS_MODE_TRAIN,
  kEval = LITMUS_MODE_EVAL,
  kPredict = LITMUS_MODE_PREDICT,
  kGlobal = LITMUS_MODE_GLOBAL,
};

enum class DType : int32_t {
  kFloat32 = LITMUS_DTYPE_FLOAT32,
  kFloat64 = LITMUS_DTYPE_FLOAT64,
  kInt32 = LITMUS_DTYPE_INT32,
  kUInt8 = LITMUS_DTYPE_UINT8,
  kInt16 = LITMUS_DTYPE_INT16,
  kInt8 = LITMUS_DTYPE_INT8,
  kString = LITMUS_DTYPE_STRING,
  kComplex64 = LITMUS_DTYPE_COMPLEX64,
  kInt64 = LITMUS_DTYPE_INT64,
  kBool = LITMUS_DTYPE_BOOL,
  kUInt16 = LITMUS_DTYPE_UINT16,
  kComplex128 = LITMUS_DTYPE_COMPLEX128,
  kFloat16 = LITMUS_DTYPE_FLOAT16,
  kUInt32 = LITMUS_DTYPE_UINT32,
  kUInt64 = LITMUS_DTYPE_UINT64,
};

enum class Reduction : int32_t {
  kMin = LITMUS_REDUCTION_MIN,
  kMax = LITMUS_REDUCTION_MAX,
  kMean = LITMUS_REDUCTION_MEAN,
  kStd = LITMUS_REDUCTION_STD,
  kVariance = LITMUS_REDUCTION_VARIANCE,
  kSum = LITMUS_REDUCTION_SUM,
  kProd = LITMUS_REDUCTION_PROD,
  kL1 = LITMUS_REDUCTION_L1,
  kL2 = LITMUS_REDUCTION_L2,
};

enum class LogLevel : int32_t {
  kTrace = LITMUS_LOG_TRACE,
  kDebug = LITMUS_LOG_DEBUG,
  kInfo = LITMUS_LOG_INFO,
  kWarning = LITMUS_LOG_WARNING,
  kError = LITMUS_LOG_ERROR,
};

// smdebug's ModeKeys names ("TRAIN", ...), as its exception texts print them.
inline std::string_view ModeName(Mode mode) {
  switch (mode) {
    case Mode::kTrain: return "TRAIN";
    case Mode::kEval: return "EVAL";
    case Mode::kPredict: return "PREDICT";
    case Mode::kGlobal: return "GLOBAL";
  }
  return "UNKNOWN_MODE";
}

// smdebug's reduction names: min max mean std variance sum prod l1 l2. nullopt for anything else.
inline std::optional<Reduction> ParseReduction(std::string_view name) {
  static constexpr std::pair<std::string_view, Reduction> kNames[] = {
      {"min", Reduction::kMin},   {"max", Reduction::kMax},           {"mean", Reduction::kMean},
      {"std", Reduction::kStd},   {"variance", Reduction::kVariance}, {"sum", Reduction::kSum},
      {"prod", Reduction::kProd}, {"l1", Reduction::kL1},             {"l2", Reduction::kL2},
  };
  for (const auto& [text, reduction] : kNames) {
    if (text == name) return reduction;
  }
  return std::nullopt;
}

// ---- Exceptions: what smdebug raises, mapped to ABI statuses by the SDK thunks -----------------
// Throw them from rule code (or let the SDK throw them from host calls); the thunk that called the
// rule turns them into the status below and passes the text to host->set_error. Any other
// exception becomes LITMUS_INTERNAL with its what() text. Nothing ever crosses the C boundary.

class Error : public std::runtime_error {
 public:
  // A generic rule failure: LITMUS_INTERNAL.
  explicit Error(const std::string& message) : Error(message, LITMUS_INTERNAL) {}

  litmus_status_t status() const noexcept { return status_; }
  // True when the text was already recorded by the host (the exception comes unchanged from a
  // failed host call): the thunk then leaves the host's own, usually more precise, message alone.
  bool host_reported() const noexcept { return host_reported_; }

 protected:
  Error(const std::string& message, litmus_status_t status)
      : std::runtime_error(message), status_(status) {}

 private:
  friend class Rule;  // marks host-originated errors
  litmus_status_t status_;
  bool host_reported_ = false;
};

// The tensor was not saved at that step: the host skips the step.
class TensorUnavailableForStep : public Error {
 public:
  TensorUnavailableForStep(std::string_view tensor, int64_t step, Mode mode = Mode::kGlobal)
      : Error("Value for tensor " + std::string(tensor) + " is not available for step " +
                  std::to_string(step) + " with mode " + std::string(ModeName(mode)) +
                  " as it was not saved.",
              LITMUS_TENSOR_UNAVAILABLE_FOR_STEP) {}
};

// The tensor was never saved: the host skips the step.
class TensorUnavailable : public Error {
 public:
  explicit TensorUnavailable(std::string_view tensor)
      : Error("Tensor " + std::string(tensor) + " was not saved.", LITMUS_TENSOR_UNAVAILABLE) {}
};

// The step was not saved: the host skips the step.
class StepUnavailable : public Error {
 public:
  StepUnavailable(int64_t step, Mode mode)
      : Error("Step " + std::to_string(step) + " of mode " + std::string(ModeName(mode)) +
                  " is not available as it was not saved",
              LITMUS_STEP_UNAVAILABLE) {}
};

// The data is not there yet (a future step was asked for).
class StepNotYetAvailable : public Error {
 public:
  StepNotYetAvailable(int64_t step, Mode mode)
      : Error("Step " + std::to_string(step) + " of mode " + std::string(ModeName(mode)) +
                  " not yet available",
              LITMUS_NOT_YET_AVAILABLE) {}
};

// Training ended; nothing more to evaluate. Ends the rule normally.
class NoMoreData : public Error {
 public:
  explicit NoMoreData(const std::string& message) : Error(message, LITMUS_NO_MORE_DATA) {}
  NoMoreData(int64_t step, Mode mode, int64_t last_step)
      : NoMoreData("Looking for step " + std::to_string(step) + " of mode " +
                   std::string(ModeName(mode)) +
                   " and reached end of training. Max step available is " +
                   std::to_string(last_step)) {}
};

// Bad parameters or configuration (from create: the job ends as a client error).
class InvalidConfig : public Error {
 public:
  explicit InvalidConfig(const std::string& message) : Error(message, LITMUS_INVALID_CONFIG) {}
};

// A call was misused (bad trial index, unknown reduction, out-of-range element...).
class InvalidArgument : public Error {
 public:
  explicit InvalidArgument(const std::string& message) : Error(message, LITMUS_INVALID_ARGUMENT) {}
};

// That worker did not write the step.
class InvalidWorker : public Error {
 public:
  explicit InvalidWorker(std::string_view worker)
      : Error("Invalid Worker: " + std::string(worker), LITMUS_INVALID_WORKER) {}
};

// ---- Parameter declarations ----------------------------------------------------------------------

// One declared parameter. `type` is advisory text shown by `litmus rules NAME`.
struct ParamSpec {
  std::string_view name;
  std::string_view type;
  std::string_view default_value;  // "" or "None": no default (the parameter is optional)
  std::string_view description;
  bool required = false;
};

constexpr ParamSpec FloatParam(std::string_view name, std::string_view default_value,
                               std::string_view description) {
  return {name, "float", default_value, description, false};
}
constexpr ParamSpec IntParam(std::string_view name, std::string_view default_value,
                             std::string_view description) {
  return {name, "int", default_value, description, false};
}
constexpr ParamSpec BoolParam(std::string_view name, std::string_view default_value,
                              std::string_view description) {
  return {name, "bool", default_value, description, false};
}
constexpr ParamSpec StringParam(std::string_view name, std::string_view default_value,
                                std::string_view description) {
  return {name, "string", default_value, description, false};
}
constexpr ParamSpec ListParam(std::string_view name, std::string_view default_value,
                              std::string_view description) {
  return {name, "list", default_value, description, false};
}
constexpr ParamSpec ModeParam(std::string_view name, std::string_view default_value,
                              std::string_view description) {
  return {name, "mode", default_value, description, false};
}
// The host refuses to create the rule without it: Required(FloatParam("limit", "", "...")).
constexpr ParamSpec Required(ParamSpec spec) {
  spec.required = true;
  spec.default_value = {};
  return spec;
}

// ---- Parameter text parsing (builtin-rules.md §1.2), usable on its own ---------------------------
namespace params {

inline std::string_view TrimAscii(std::string_view text) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

// "None" and the empty string (after trimming) mean "not set".
inline bool IsUnset(std::string_view text) {
  const std::string_view trimmed = TrimAscii(text);
  return trimmed.empty() || trimmed == "None";
}

// Decimal or exponent notation, inf and nan, optional sign and surrounding whitespace (Python
// float()). nullopt for anything else, including values out of double's range.
inline std::optional<double> ParseDouble(std::string_view text) {
  std::string_view t = TrimAscii(text);
  if (!t.empty() && t.front() == '+') {
    t.remove_prefix(1);
    if (!t.empty() && (t.front() == '+' || t.front() == '-')) return std::nullopt;
  }
  if (t.empty()) return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (error != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return value;
}

// An integer, or a number with an integral value that fits int64 ("10.0" is 10).
inline std::optional<int64_t> ParseInt(std::string_view text) {
  std::string_view t = TrimAscii(text);
  if (!t.empty() && t.front() == '+') {
    t.remove_prefix(1);
    if (!t.empty() && (t.front() == '+' || t.front() == '-')) return std::nullopt;
  }
  if (t.empty()) return std::nullopt;
  int64_t value = 0;
  const auto [end, error] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (error == std::errc() && end == t.data() + t.size()) return value;
  const std::optional<double> real = ParseDouble(t);
  // 2^63 is exactly representable; every double below it in magnitude with no fraction fits.
  if (!real || !std::isfinite(*real) || std::trunc(*real) != *real || *real < -0x1p63 ||
      *real >= 0x1p63) {
    return std::nullopt;
  }
  return static_cast<int64_t>(*real);
}

// Exactly True, true, False or false (smdebug's parse_bool); no trimming.
inline std::optional<bool> ParseBool(std::string_view text) {
  if (text == "True" || text == "true") return true;
  if (text == "False" || text == "false") return false;
  return std::nullopt;
}

// Comma-separated items, each trimmed of ASCII whitespace; empty items are dropped, and "None" or
// "" give an empty list.
inline std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> items;
  if (IsUnset(text)) return items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = TrimAscii(text.substr(start, comma - start));
    if (!item.empty()) items.emplace_back(item);
    start = comma + 1;
  }
  return items;
}

}  // namespace params

// Quotes and escapes text as a JSON string, for report_detail.
inline std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

class Rule;
class Trial;
class Tensor;
class RequiredTensors;
class RuleArgs;

namespace internal {
struct Thunks;
template <class State, class T, size_t I>
litmus_status_t CreateThunk(litmus_ctx_t* ctx, const litmus_param_t* params, size_t param_count,
                            litmus_rule_instance_t** instance) noexcept;

inline litmus_str_t ToStr(std::string_view text) { return {text.data(), text.size()}; }
inline std::string_view FromStr(litmus_str_t text) {
  return text.size == 0 ? std::string_view() : std::string_view(text.data, text.size);
}

// IEEE 754 binary16 to double.
inline double HalfToDouble(uint16_t half) {
  const int sign = (half >> 15) & 1;
  const int exponent = (half >> 10) & 0x1f;
  const int fraction = half & 0x3ff;
  double value = 0;
  if (exponent == 0) {
    value = std::ldexp(static_cast<double>(fraction), -24);
  } else if (exponent == 31) {
    value = fraction == 0 ? std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::quiet_NaN();
  } else {
    value = std::ldexp(static_cast<double>(fraction | 0x400), exponent - 25);
  }
  return sign ? -value : value;
}

// Records set_error text without allocating (it runs inside catch handlers), if the host has it.
inline void SetErrorText(const litmus_host_api_t* host, litmus_ctx_t* ctx, std::string_view prefix,
                         std::string_view text) noexcept {
  if (host == nullptr || host->set_error == nullptr) return;
  char buffer[1024];
  size_t size = std::min(prefix.size(), sizeof(buffer));
  if (size > 0) std::memcpy(buffer, prefix.data(), size);
  const size_t rest = std::min(text.size(), sizeof(buffer) - size);
  if (rest > 0) std::memcpy(buffer + size, text.data(), rest);
  size += rest;
  host->set_error(ctx, buffer, size);
}

// The status for the exception being handled; records its text with set_error unless the host
// already did. Call only from inside a catch block.
inline litmus_status_t StatusFromCurrentException(const litmus_host_api_t* host,
                                                  litmus_ctx_t* ctx) noexcept {
  try {
    throw;
  } catch (const Error& error) {
    litmus_status_t status = error.status();
    if (status == LITMUS_OK || status == LITMUS_CONDITION_MET) status = LITMUS_INTERNAL;
    if (!error.host_reported()) SetErrorText(host, ctx, {}, error.what());
    return status;
  } catch (const std::bad_alloc&) {
    SetErrorText(host, ctx, {}, "out of memory");
    return LITMUS_INTERNAL;
  } catch (const std::exception& error) {
    SetErrorText(host, ctx, "uncaught exception: ", error.what());
    return LITMUS_INTERNAL;
  } catch (...) {
    SetErrorText(host, ctx, {}, "uncaught exception of a type not derived from std::exception");
    return LITMUS_INTERNAL;
  }
}

// Copies a host table into a full-size, zero-filled one, reading no byte beyond host->struct_size:
// functions the host does not have (an older or smaller table) are then NULL.
inline void SnapshotHost(const litmus_host_api_t* host, litmus_host_api_t* out) noexcept {
  std::memset(out, 0, sizeof(*out));
  const size_t size = std::min<size_t>(host->struct_size, sizeof(*out));
  std::memcpy(out, host, size);
}

}  // namespace internal

// ---- Tensor values ------------------------------------------------------------------------------

// A borrowed, zero-copy view of one tensor value: valid only until the host call in which it was
// obtained (create, set_required_tensors, invoke_at_step or on_poll) returns. Copy what you keep.
class TensorView {
 public:
  TensorView() = default;
  TensorView(const litmus_tensor_view_t& raw, std::string_view name) : raw_(raw), name_(name) {}

  const std::string& name() const { return name_; }
  DType dtype() const { return static_cast<DType>(raw_.dtype); }
  std::span<const int64_t> shape() const {
    if (raw_.shape == nullptr) return {};
    return {raw_.shape, raw_.rank};
  }
  size_t rank() const { return raw_.rank; }
  int64_t num_elements() const { return raw_.num_elements; }
  size_t size() const { return static_cast<size_t>(raw_.num_elements); }
  bool empty() const { return raw_.num_elements == 0; }
  uint64_t byte_size() const { return raw_.byte_size; }
  const void* data() const { return raw_.data; }
  int64_t step() const { return raw_.step; }
  Mode mode() const { return static_cast<Mode>(raw_.mode); }
  int64_t mode_step() const { return raw_.mode_step; }
  bool is_string() const { return raw_.dtype == LITMUS_DTYPE_STRING; }
  const litmus_tensor_view_t& raw() const { return raw_; }

  // Bytes per element of a numeric dtype; 0 for strings and unknown dtypes.
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

  // The elements as a typed span. T must match the dtype exactly: float (float32), double
  // (float64), int8_t, uint8_t (also bool tensors: one byte, 0 or 1), int16_t, uint16_t, int32_t,
  // uint32_t, int64_t, uint64_t. Throws InvalidArgument on a mismatch; use at_double to convert.
  template <class T>
  std::span<const T> as() const {
    static_assert(!std::is_same_v<T, bool>, "read bool tensors with as<uint8_t>()");
    static_assert(DTypeOf<T>() != DType::kString,
                  "as<T>(): T must be float, double or a fixed-width integer type");
    const DType want = DTypeOf<T>();
    if (dtype() != want && !(want == DType::kUInt8 && dtype() == DType::kBool)) {
      throw InvalidArgument("tensor " + name_ + ": as<" + std::string(TypeName(want)) +
                            ">() on a value of dtype " + std::to_string(raw_.dtype));
    }
    if (raw_.num_elements == 0) return {};
    return {static_cast<const T*>(raw_.data), size()};
  }

  // Element i (flattened, C order) converted to double: any numeric dtype, float16 included.
  // Throws InvalidArgument for strings, complex values or an index out of range.
  double at_double(int64_t i) const {
    if (i < 0 || i >= raw_.num_elements) {
      throw InvalidArgument("tensor " + name_ + ": element " + std::to_string(i) +
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
    throw InvalidArgument("tensor " + name_ + ": at_double() on a value of dtype " +
                          std::to_string(raw_.dtype));
  }

  // The value of a one-element tensor (a scalar such as a loss) as double.
  double scalar() const {
    if (raw_.num_elements != 1) {
      throw InvalidArgument("tensor " + name_ + ": scalar() on a value with " +
                            std::to_string(raw_.num_elements) + " elements");
    }
    return at_double(0);
  }

  static bool is_nan_or_inf(double value) { return !std::isfinite(value); }
  // Counts elements that are NaN or ±inf; 0 for integer, bool and string tensors.
  int64_t count_nan_or_inf() const { return Count([](double v) { return !std::isfinite(v); }); }
  int64_t count_nan() const { return Count([](double v) { return std::isnan(v); }); }
  int64_t count_inf() const { return Count([](double v) { return std::isinf(v); }); }
  bool any_nan_or_inf() const { return count_nan_or_inf() > 0; }
  bool any_nan() const { return count_nan() > 0; }
  bool any_inf() const { return count_inf() > 0; }

  // String tensors only: element i / all elements (views into host memory, see the class comment).
  std::string_view string_at(int64_t i) const {
    if (!is_string()) throw InvalidArgument("tensor " + name_ + ": string_at() on a numeric value");
    if (i < 0 || i >= raw_.num_elements || raw_.strings == nullptr) {
      throw InvalidArgument("tensor " + name_ + ": string " + std::to_string(i) +
                            " out of range (" + std::to_string(raw_.num_elements) + " elements)");
    }
    return internal::FromStr(raw_.strings[i]);
  }
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
  std::string name_;
};

// Selects tensor names (smdebug's trial.tensor_names arguments). Empty fields do not filter:
//   trial.tensor_names({.collection = "gradients"}), trial.tensor_names({.regex = "relu"}).
struct TensorQuery {
  std::string_view collection{};  // member of this collection; an unknown one matches nothing
  std::string_view regex{};       // Python re.search semantics: matches anywhere in the name
  std::optional<int64_t> step{};  // saved at this global step
  std::optional<Mode> mode{};     // saved in this mode
};

// A tensor of one trial (smdebug's Tensor). Cheap to copy; usable while its Rule lives, host
// access only during a host call.
class Tensor {
 public:
  const std::string& name() const { return name_; }
  Trial trial() const;
  // Steps at which the tensor was saved: global steps, or mode steps of `mode`.
  std::vector<int64_t> steps(Mode mode = Mode::kGlobal) const;
  // The value at a step (a global step for kGlobal, else a mode step), from `worker` or, when
  // empty, the lexicographically first worker that wrote it. Borrowed: see TensorView.
  TensorView value(int64_t step, Mode mode = Mode::kGlobal, std::string_view worker = {}) const;
  // A reduction of the value (of |x| when abs): the saved reduction if any, else computed.
  double reduction_value(int64_t step, Reduction reduction, bool abs = false,
                         Mode mode = Mode::kGlobal, std::string_view worker = {}) const;
  // Same with smdebug's reduction names ("mean", "l2", ...); InvalidArgument for others.
  double reduction_value(int64_t step, std::string_view reduction, bool abs = false,
                         Mode mode = Mode::kGlobal, std::string_view worker = {}) const;
  std::vector<int64_t> shape(int64_t step, Mode mode = Mode::kGlobal,
                             std::string_view worker = {}) const;

 private:
  friend class Trial;
  Tensor(Rule* rule, uint32_t trial, std::string name)
      : rule_(rule), trial_(trial), name_(std::move(name)) {}
  Rule* rule_;
  uint32_t trial_;
  std::string name_;
};

// One trial of the job (smdebug's Trial): 0 is the base trial, 1.. the other trials.
class Trial {
 public:
  uint32_t index() const { return index_; }
  bool is_base() const { return index_ == 0; }
  // Complete steps, sorted: global steps, or mode steps of `mode`.
  std::vector<int64_t> steps(Mode mode = Mode::kGlobal) const;
  // (mode, mode step) of a global step; StepUnavailable if the step is unknown.
  Mode step_mode(int64_t step) const;
  int64_t mode_step(int64_t step) const;
  // The global step of a mode step; StepUnavailable if unknown.
  int64_t global_step(Mode mode, int64_t mode_step) const;
  std::vector<std::string> workers() const;
  std::vector<std::string> tensor_names(const TensorQuery& query = {}) const;
  std::vector<int64_t> tensor_steps(std::string_view name, Mode mode = Mode::kGlobal) const;
  bool has_tensor(std::string_view name) const;
  // A handle; does not check that the tensor exists (value() and friends do).
  Tensor tensor(std::string_view name) const { return Tensor(rule_, index_, std::string(name)); }

  friend bool operator==(const Trial& a, const Trial& b) {
    return a.rule_ == b.rule_ && a.index_ == b.index_;
  }

 private:
  friend class Rule;
  friend class Tensor;
  friend class RequiredTensors;
  Trial(Rule* rule, uint32_t index) : rule_(rule), index_(index) {}
  Rule* rule_;
  uint32_t index_;
};

// smdebug's RequiredTensors: what invoke_at_step(step) will read. add() inside
// set_required_tensors also declares the requirement to the host (which prefetches it); elsewhere
// it only records. Names keep insertion order, as smdebug's dicts do.
class RequiredTensors {
 public:
  // Requires `name` at `steps` of the base trial, or of `trial`. With should_match_regex every
  // tensor whose name the regex searches is added (none is fine); otherwise a name the trial never
  // saved throws TensorUnavailable. (Overloads stand in for smdebug's trial=None default.)
  void add(std::string_view name, const std::vector<int64_t>& steps) {
    Add(0, name, steps, false);
  }
  void add(std::string_view name, const std::vector<int64_t>& steps, const Trial& trial,
           bool should_match_regex = false) {
    Add(TrialIndex(trial), name, steps, should_match_regex);
  }
  // Handles of the required tensors of the base trial / of `trial`, in the order added.
  std::vector<Tensor> get() const { return Get(0); }
  std::vector<Tensor> get(const Trial& trial) const { return Get(TrialIndex(trial)); }
  std::vector<std::string> get_names() const { return GetNames(0); }
  std::vector<std::string> get_names(const Trial& trial) const {
    return GetNames(TrialIndex(trial));
  }
  // The steps `name` is required at; InvalidArgument if it was not added.
  std::vector<int64_t> get_tensor_steps(std::string_view name) const {
    return GetTensorSteps(0, name);
  }
  std::vector<int64_t> get_tensor_steps(std::string_view name, const Trial& trial) const {
    return GetTensorSteps(TrialIndex(trial), name);
  }
  void clear() {
    for (auto& [trial, entries] : per_trial_) entries.Clear();
  }
  bool empty() const {
    for (const auto& [trial, entries] : per_trial_) {
      if (entries.size != 0) return false;
    }
    return true;
  }

 private:
  friend class Rule;
  struct Entry {
    std::string name;
    std::vector<int64_t> steps;
  };
  // One trial's entries in the order added, and where each name is (rules add hundreds of
  // names per step, so finding a name must not scan the list). Cleared, it keeps its storage:
  // a rule usually adds the same names in the same order at every step, and then adding one
  // reuses the old entry (its name, its steps' storage and its index slot) in place of three
  // allocations.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  struct Entries {
    // The entries are list[0, size); list[size, end) are spare ones of an earlier use, still
    // indexed. A deque, so that entries never move and `position` can key on views of their
    // names (one copy of each name, not two).
    std::deque<Entry> list;
    size_t size = 0;
    std::unordered_map<std::string_view, size_t, NameHash, std::equal_to<>> position;  // of all of list

    Entries() = default;
    Entries(const Entries& other)
        : list(other.list.begin(), other.list.begin() + static_cast<std::ptrdiff_t>(other.size)),
          size(other.size) {
      Reindex();
    }
    Entries& operator=(const Entries& other) {
      if (this != &other) {
        list.assign(other.list.begin(), other.list.begin() + static_cast<std::ptrdiff_t>(other.size));
        size = other.size;
        Reindex();
      }
      return *this;
    }
    // (Moving a deque hands over its elements in place: the views stay valid.)
    Entries(Entries&& other) noexcept
        : list(std::move(other.list)), size(std::exchange(other.size, 0)), position(std::move(other.position)) {}
    Entries& operator=(Entries&& other) noexcept {
      if (this != &other) {
        list = std::move(other.list);
        size = std::exchange(other.size, 0);
        position = std::move(other.position);
      }
      return *this;
    }
    void Reindex() {
      position.clear();
      for (size_t i = 0; i < list.size(); ++i) position.emplace(list[i].name, i);
    }
    void Clear() { size = 0; }
    // The position of `name` among the entries, or SIZE_MAX.
    size_t Find(std::string_view name) const {
      const auto found = position.find(name);
      return found != position.end() && found->second < size ? found->second : SIZE_MAX;
    }
    // Appends (name, steps): the spare entry next in line if it has that name, else a new one
    // (then the spare entries are dropped). REQUIRES: Find(name) == SIZE_MAX.
    void Append(std::string_view name, const std::vector<int64_t>& steps) {
      if (size < list.size()) {
        if (list[size].name == name) {
          list[size].steps.assign(steps.begin(), steps.end());
          ++size;
          return;
        }
        for (size_t i = size; i < list.size(); ++i) position.erase(list[i].name);
        list.resize(size);
      }
      list.push_back(Entry{std::string(name), steps});
      position.emplace(list.back().name, size);
      ++size;
    }
  };
  explicit RequiredTensors(Rule* rule) : rule_(rule) {}
  void Add(uint32_t trial, std::string_view name, const std::vector<int64_t>& steps,
           bool should_match_regex);
  std::vector<Tensor> Get(uint32_t trial) const;
  std::vector<std::string> GetNames(uint32_t trial) const;
  std::vector<int64_t> GetTensorSteps(uint32_t trial, std::string_view name) const;
  void Record(uint32_t trial, std::string_view name, const std::vector<int64_t>& steps);
  uint32_t TrialIndex(const Trial& trial) const;

  Rule* rule_;
  bool forward_to_host_ = false;
  std::map<uint32_t, Entries> per_trial_;
};

// What the SDK hands a rule's constructor; pass it on to litmus::Rule. Valid during construction.
class RuleArgs {
 public:
  RuleArgs(const RuleArgs&) = delete;
  RuleArgs& operator=(const RuleArgs&) = delete;

  // For the SDK's thunks and for tests that construct rules against a fake host table.
  RuleArgs(const litmus_host_api_t* host, litmus_ctx_t* ctx,
           const litmus_rule_descriptor_t* descriptor, const litmus_param_t* params,
           size_t param_count)
      : host_(host), ctx_(ctx), descriptor_(descriptor), params_(params), param_count_(param_count) {}

 private:
  friend class Rule;
  const litmus_host_api_t* host_;
  litmus_ctx_t* ctx_;
  const litmus_rule_descriptor_t* descriptor_;
  const litmus_param_t* params_;
  size_t param_count_;
};

// ---- The rule base class ----------------------------------------------------------------------
// Derive, pass RuleArgs to this constructor, override invoke_at_step (and set_required_tensors if
// the rule declares its reads), and register the class with LITMUS_RULE_PLUGIN. A rule is created
// by the host's create call, used by one thread at a time, and destroyed by destroy.
class Rule {
 public:
  explicit Rule(const RuleArgs& args)
      : host_(args.host_),
        ctx_(args.ctx_),
        req_tensors_(this),
        active_req_(&req_tensors_) {
    if (args.descriptor_ != nullptr) {
      const litmus_rule_descriptor_t& d = *args.descriptor_;
      name_ = internal::FromStr(d.name);
      const size_t stride =
          d.param_spec_size != 0 ? d.param_spec_size : sizeof(litmus_param_spec_t);
      for (size_t i = 0; i < d.param_count; ++i) {
        const auto* spec = reinterpret_cast<const litmus_param_spec_t*>(
            reinterpret_cast<const unsigned char*>(d.params) + i * stride);
        declared_.emplace(std::string(internal::FromStr(spec->name)),
                          std::string(internal::FromStr(spec->default_value)));
      }
    }
    for (size_t i = 0; i < args.param_count_; ++i) {
      values_[std::string(internal::FromStr(args.params_[i].key))] =
          std::string(internal::FromStr(args.params_[i].value));
    }
  }
  virtual ~Rule() = default;
  Rule(const Rule&) = delete;
  Rule& operator=(const Rule&) = delete;

  // smdebug's set_required_tensors(step): declare through req_tensors().add what
  // invoke_at_step(step) reads. May run ahead of time; must not change evaluation state.
  virtual void set_required_tensors(int64_t step) { static_cast<void>(step); }
  // smdebug's invoke_at_step(step): true when the condition is met at global step `step`.
  virtual bool invoke_at_step(int64_t step) = 0;
  // ABI 1.1: called while no new step arrives (after each poll of the trial that found nothing
  // to evaluate, also while the host waits for the trial's first collections file), for rules
  // that depend on time rather than data. last_step: the last global step evaluated for this
  // rule, -1 if none. True = condition met (reported at last_step, or 0 when -1). Override only
  // when needed: the host calls it only for rules that override it.
  virtual bool on_poll(int64_t last_step) {
    static_cast<void>(last_step);
    return false;
  }

  // The rule's class name as registered ("CustomGradientRule").
  const std::string& rule_name() const { return name_; }

  // ---- Trials
  Trial base_trial() { return Trial(this, 0); }
  size_t trial_count() const;
  Trial trial(size_t index) {
    if (index >= trial_count()) {
      throw InvalidArgument("trial index " + std::to_string(index) + " out of range (" +
                            std::to_string(trial_count()) + " trials)");
    }
    return Trial(this, static_cast<uint32_t>(index));
  }
  std::vector<Trial> other_trials() {
    std::vector<Trial> out;
    const size_t count = trial_count();
    for (size_t i = 1; i < count; ++i) out.push_back(Trial(this, static_cast<uint32_t>(i)));
    return out;
  }
  // The requirements of the current step (see RequiredTensors).
  RequiredTensors& req_tensors() { return *active_req_; }

  // ---- Parameters (builtin-rules.md §1.2). The value is the user's, else the declared default.
  // "None" and "" mean not set. Reading a parameter the rule did not declare is a rule bug
  // (litmus::Error); a bad or missing value throws InvalidConfig "name: ...", which create turns
  // into LITMUS_INVALID_CONFIG.
  bool has_param(std::string_view name) const { return !params::IsUnset(ParamText(name)); }
  // The text as given, or nullopt if absent (no "None" handling).
  std::optional<std::string> param_raw(std::string_view name) const {
    const auto found = values_.find(name);
    if (found != values_.end()) return found->second;
    CheckDeclared(name);
    const auto declared = declared_.find(name);
    if (declared->second.empty()) return std::nullopt;
    return declared->second;
  }
  double param_float(std::string_view name) const { return *ParseRequired(name, ParseFloatOf); }
  int64_t param_int(std::string_view name) const { return *ParseRequired(name, ParseIntOf); }
  bool param_bool(std::string_view name) const { return *ParseRequired(name, ParseBoolOf); }
  std::string param_string(std::string_view name) const {
    const std::string_view text = ParamText(name);
    if (params::IsUnset(text)) throw InvalidConfig(std::string(name) + ": required parameter is not set");
    return std::string(text);
  }
  std::optional<double> param_optional_float(std::string_view name) const {
    return ParseOptional(name, ParseFloatOf);
  }
  std::optional<int64_t> param_optional_int(std::string_view name) const {
    return ParseOptional(name, ParseIntOf);
  }
  std::optional<bool> param_optional_bool(std::string_view name) const {
    return ParseOptional(name, ParseBoolOf);
  }
  std::optional<std::string> param_optional_string(std::string_view name) const {
    const std::string_view text = ParamText(name);
    if (params::IsUnset(text)) return std::nullopt;
    return std::string(text);
  }
  // Comma-separated, items trimmed, empty items dropped; not set gives an empty list.
  std::vector<std::string> param_list(std::string_view name) const {
    return params::SplitList(ParamText(name));
  }
  std::vector<double> param_float_list(std::string_view name) const {
    return ParseList(name, ParseFloatOf);
  }
  std::vector<int64_t> param_int_list(std::string_view name) const {
    return ParseList(name, ParseIntOf);
  }

  // ---- Logging through the host's logger, tagged with the rule. Arguments are streamed with
  // operator<<. Never throws; a line logged outside a host call is dropped.
  template <class... Args>
  void log(LogLevel level, const Args&... args) const noexcept {
    try {
      std::ostringstream line;
      (line << ... << args);
      LogText(level, line.str());
    } catch (...) {
      // Logging must never fail a rule.
    }
  }
  template <class... Args>
  void log_debug(const Args&... args) const noexcept { log(LogLevel::kDebug, args...); }
  template <class... Args>
  void log_info(const Args&... args) const noexcept { log(LogLevel::kInfo, args...); }
  template <class... Args>
  void log_warning(const Args&... args) const noexcept { log(LogLevel::kWarning, args...); }
  template <class... Args>
  void log_error(const Args&... args) const noexcept { log(LogLevel::kError, args...); }

  // ---- Actions (ABI 1.1). Only in the constructor: one more action to run when this rule's
  // condition is met, besides the job's action_json, in that parameter's JSON form
  // (rule-job-contract.md §8), e.g. {"name": "stoptraining", "training_job_prefix": "job-1"}.
  // Throws InvalidArgument (the host's text) for text that is not a JSON object or list.
  void add_action(std::string_view action_json) {
    Check(HostFn(&litmus_host_api_t::add_action, "add_action")(Ctx("add_action"),
                                                                internal::ToStr(action_json)),
          "add_action");
  }

  // ---- Report (rule-reports/<name>.json); only inside invoke_at_step and on_poll.
  void report_violations(int64_t count) {
    HostFn(&litmus_host_api_t::report_violations, "report_violations")(Ctx("report_violations"),
                                                                        count);
  }
  // Details.<key> = json_value (JSON text; invalid JSON is stored as a string by the host).
  void report_detail(std::string_view key, std::string_view json_value) {
    HostFn(&litmus_host_api_t::report_detail, "report_detail")(
        Ctx("report_detail"), internal::ToStr(key), internal::ToStr(json_value));
  }
  // Details.<key> = a number or bool (NaN and infinities are stored as the strings "nan", "inf").
  template <class T>
    requires std::is_arithmetic_v<T>
  void report_detail(std::string_view key, T value) {
    if constexpr (std::is_same_v<T, bool>) {
      report_detail(key, std::string_view(value ? "true" : "false"));
    } else if constexpr (std::is_floating_point_v<T>) {
      const double v = static_cast<double>(value);
      if (std::isnan(v)) return report_detail(key, std::string_view("\"nan\""));
      if (std::isinf(v)) return report_detail(key, std::string_view(v > 0 ? "\"inf\"" : "\"-inf\""));
      char buffer[64];
      const auto result = std::to_chars(buffer, buffer + sizeof(buffer), v);
      report_detail(key, std::string_view(buffer, static_cast<size_t>(result.ptr - buffer)));
    } else {
      report_detail(key, std::string_view(std::to_string(value)));
    }
  }

 private:
  friend class Trial;
  friend class Tensor;
  friend class RequiredTensors;
  friend struct internal::Thunks;
  template <class State, class T, size_t I>
  friend litmus_status_t internal::CreateThunk(litmus_ctx_t*, const litmus_param_t*, size_t,
                                               litmus_rule_instance_t**) noexcept;

  // The host function `member`, or Error if the host table does not have it (its struct_size
  // ends before it, or it is NULL).
  template <class Fn>
  Fn HostFn(Fn litmus_host_api_t::*member, const char* name) const {
    const Fn fn = host_ == nullptr ? nullptr : host_->*member;
    if (fn == nullptr) {
      throw Error(std::string("the host does not provide ") + name + " (host ABI " +
                  (host_ == nullptr ? std::string("none")
                                    : std::to_string(host_->abi_major) + "." +
                                          std::to_string(host_->abi_minor)) +
                  ")");
    }
    return fn;
  }
  litmus_ctx_t* Ctx(const char* what) const {
    if (ctx_ == nullptr) {
      throw Error(std::string(what) + ": host access outside a host call (create, "
                                      "set_required_tensors, invoke_at_step, on_poll)");
    }
    return ctx_;
  }
  // Turns a failed host status into the matching exception, marked as already reported.
  template <class E>
  [[noreturn]] static void ThrowReported(E error) {
    error.host_reported_ = true;
    throw error;
  }
  [[noreturn]] static void ThrowHostStatus(litmus_status_t status, const char* function,
                                           std::string_view tensor, int64_t step, Mode mode,
                                           std::string_view worker) {
    switch (status) {
      case LITMUS_TENSOR_UNAVAILABLE_FOR_STEP:
        ThrowReported(TensorUnavailableForStep(tensor, step, mode));
      case LITMUS_TENSOR_UNAVAILABLE: ThrowReported(TensorUnavailable(tensor));
      case LITMUS_STEP_UNAVAILABLE: ThrowReported(StepUnavailable(step, mode));
      case LITMUS_NOT_YET_AVAILABLE: ThrowReported(StepNotYetAvailable(step, mode));
      case LITMUS_NO_MORE_DATA:
        ThrowReported(NoMoreData("Looking for step " + std::to_string(step) + " of mode " +
                                 std::string(ModeName(mode)) + " and reached end of training"));
      case LITMUS_INVALID_CONFIG:
        ThrowReported(InvalidConfig(std::string(function) + ": invalid configuration"));
      case LITMUS_INVALID_ARGUMENT:
        ThrowReported(InvalidArgument(std::string(function) + ": invalid argument" +
                                      (tensor.empty() ? "" : " (tensor " + std::string(tensor) + ")")));
      case LITMUS_INVALID_WORKER: ThrowReported(InvalidWorker(worker));
      default: break;  // LITMUS_INTERNAL and values this SDK does not know
    }
    ThrowReported(Error(std::string(function) + " failed with status " + std::to_string(status) +
                        (tensor.empty() ? "" : " (tensor " + std::string(tensor) + ")")));
  }
  static void Check(litmus_status_t status, const char* function, std::string_view tensor = {},
                    int64_t step = -1, Mode mode = Mode::kGlobal, std::string_view worker = {}) {
    if (status != LITMUS_OK) ThrowHostStatus(status, function, tensor, step, mode, worker);
  }
  void LogText(LogLevel level, std::string_view text) const noexcept {
    if (host_ == nullptr || host_->log == nullptr || ctx_ == nullptr) return;
    host_->log(ctx_, static_cast<int32_t>(level), text.data(), text.size());
  }

  // ---- Parameters
  void CheckDeclared(std::string_view name) const {
    if (declared_.find(name) == declared_.end() && values_.find(name) == values_.end()) {
      throw Error("rule " + name_ + " reads parameter '" + std::string(name) +
                  "' that it does not declare");
    }
  }
  std::string_view ParamText(std::string_view name) const {
    const auto found = values_.find(name);
    if (found != values_.end()) return found->second;
    CheckDeclared(name);
    const auto declared = declared_.find(name);
    return declared == declared_.end() ? std::string_view() : std::string_view(declared->second);
  }
  static std::optional<double> ParseFloatOf(std::string_view name, std::string_view text) {
    const std::optional<double> value = params::ParseDouble(text);
    if (!value) {
      throw InvalidConfig(std::string(name) + ": expected a number, got '" + std::string(text) + "'");
    }
    return value;
  }
  static std::optional<int64_t> ParseIntOf(std::string_view name, std::string_view text) {
    const std::optional<int64_t> value = params::ParseInt(text);
    if (!value) {
      throw InvalidConfig(std::string(name) + ": expected an integer, got '" + std::string(text) +
                          "'");
    }
    return value;
  }
  static std::optional<bool> ParseBoolOf(std::string_view name, std::string_view text) {
    const std::optional<bool> value = params::ParseBool(text);
    if (!value) {
      throw InvalidConfig(std::string(name) + ": expected True, true, False or false, got '" +
                          std::string(text) + "'");
    }
    return value;
  }
  template <class V>
  using Parser = std::optional<V> (*)(std::string_view name, std::string_view text);
  template <class V>
  std::optional<V> ParseRequired(std::string_view name, Parser<V> parse) const {
    const std::string_view text = ParamText(name);
    if (params::IsUnset(text)) {
      throw InvalidConfig(std::string(name) + ": required parameter is not set");
    }
    return parse(name, text);
  }
  template <class V>
  std::optional<V> ParseOptional(std::string_view name, Parser<V> parse) const {
    const std::string_view text = ParamText(name);
    if (params::IsUnset(text)) return std::nullopt;
    return parse(name, text);
  }
  template <class V>
  std::vector<V> ParseList(std::string_view name, Parser<V> parse) const {
    std::vector<V> out;
    const std::vector<std::string> items = param_list(name);
    for (size_t i = 0; i < items.size(); ++i) {
      try {
        out.push_back(*parse(name, items[i]));
      } catch (const InvalidConfig& error) {
        throw InvalidConfig(std::string(name) + ": item " + std::to_string(i + 1) + " of '" +
                            std::string(ParamText(name)) + "': " +
                            std::string(error.what()).substr(name.size() + 2));
      }
    }
    return out;
  }

  // ---- Call plumbing for the thunks (internal::Thunks). Each sets ctx_ for the call and clears it
  // afterwards; exceptions never leave them.
  struct CallScope {
    CallScope(Rule* rule, litmus_ctx_t* ctx) : rule_(rule) { rule_->ctx_ = ctx; }
    ~CallScope() {
      rule_->ctx_ = nullptr;
      rule_->active_req_ = &rule_->req_tensors_;
      rule_->req_tensors_.forward_to_host_ = false;
    }
    Rule* rule_;
  };
  litmus_status_t RunSetRequiredTensors(litmus_ctx_t* ctx, int64_t step) noexcept {
    CallScope scope(this, ctx);
    try {
      // (The storage of a step already evaluated, if any: see RequiredTensors::Entries.)
      RequiredTensors declared = spare_req_ ? std::move(*spare_req_) : RequiredTensors(this);
      spare_req_.reset();
      declared.clear();
      declared.forward_to_host_ = true;
      active_req_ = &declared;
      set_required_tensors(step);
      active_req_ = &req_tensors_;
      declared.forward_to_host_ = false;
      pending_.insert_or_assign(step, std::move(declared));
      return LITMUS_OK;
    } catch (...) {
      active_req_ = &req_tensors_;
      return internal::StatusFromCurrentException(host_, ctx);
    }
  }
  litmus_status_t RunInvoke(litmus_ctx_t* ctx, int64_t step, bool declares_requirements) noexcept {
    CallScope scope(this, ctx);
    try {
      // The requirements of this very step: those the host had declared through
      // set_required_tensors(step) (possibly ahead of time), or recorded now the way smdebug's
      // invoke() does (clear, then set_required_tensors(step)) when the host did not.
      const auto found = pending_.find(step);
      if (found != pending_.end()) {
        spare_req_ = std::exchange(req_tensors_, std::move(found->second));
      } else {
        req_tensors_.clear();
        if (declares_requirements) set_required_tensors(step);
      }
      pending_.erase(pending_.begin(), pending_.upper_bound(step));
      return invoke_at_step(step) ? LITMUS_CONDITION_MET : LITMUS_OK;
    } catch (...) {
      return internal::StatusFromCurrentException(host_, ctx);
    }
  }
  litmus_status_t RunOnPoll(litmus_ctx_t* ctx, int64_t last_step) noexcept {
    CallScope scope(this, ctx);
    try {
      return on_poll(last_step) ? LITMUS_CONDITION_MET : LITMUS_OK;
    } catch (...) {
      return internal::StatusFromCurrentException(host_, ctx);
    }
  }

  const litmus_host_api_t* host_;
  litmus_ctx_t* ctx_;
  std::string name_;
  std::map<std::string, std::string, std::less<>> declared_;  // name -> default text
  std::map<std::string, std::string, std::less<>> values_;    // as given by the host
  RequiredTensors req_tensors_;
  RequiredTensors* active_req_;
  std::map<int64_t, RequiredTensors> pending_;  // declared ahead by set_required_tensors(step)
  std::optional<RequiredTensors> spare_req_;    // the previous step's, for its storage
};

// ---- Out-of-line members (they need Rule complete) ------------------------------------------------

inline size_t Rule::trial_count() const {
  return HostFn(&litmus_host_api_t::trial_count, "trial_count")(Ctx("trial_count"));
}

inline Trial Tensor::trial() const { return Trial(rule_, trial_); }

inline std::vector<int64_t> Tensor::steps(Mode mode) const {
  return Trial(rule_, trial_).tensor_steps(name_, mode);
}

inline TensorView Tensor::value(int64_t step, Mode mode, std::string_view worker) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::tensor_value, "tensor_value");
  litmus_tensor_view_t view;
  std::memset(&view, 0, sizeof(view));
  view.struct_size = sizeof(view);
  Rule::Check(fn(rule_->Ctx("tensor_value"), trial_, internal::ToStr(name_), step,
                 static_cast<int32_t>(mode), internal::ToStr(worker), &view),
              "tensor_value", name_, step, mode, worker);
  // Never trust sizes blindly: a view whose data cannot hold its elements is a host bug. (A dtype
  // this SDK does not know has element size 0: it passes through, and typed access refuses it.)
  const size_t element_size = TensorView::ElementSize(static_cast<DType>(view.dtype));
  const bool numeric = view.dtype != LITMUS_DTYPE_STRING;
  if (view.num_elements < 0 ||
      (numeric && element_size > 0 && view.num_elements > 0 &&
       (view.data == nullptr ||
        view.byte_size / element_size < static_cast<uint64_t>(view.num_elements) ||
        reinterpret_cast<uintptr_t>(view.data) % std::min<size_t>(element_size, 8) != 0)) ||
      (!numeric && view.num_elements > 0 && view.strings == nullptr) ||
      (view.rank > 0 && view.shape == nullptr)) {
    throw Error("tensor_value returned an inconsistent view of tensor " + name_ + " at step " +
                std::to_string(step) + " (dtype " + std::to_string(view.dtype) + ")");
  }
  return TensorView(view, name_);
}

inline double Tensor::reduction_value(int64_t step, Reduction reduction, bool abs, Mode mode,
                                      std::string_view worker) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::tensor_reduction, "tensor_reduction");
  double out = 0;
  Rule::Check(fn(rule_->Ctx("tensor_reduction"), trial_, internal::ToStr(name_), step,
                 static_cast<int32_t>(mode), static_cast<int32_t>(reduction), abs ? 1u : 0u,
                 internal::ToStr(worker), &out),
              "tensor_reduction", name_, step, mode, worker);
  return out;
}

inline double Tensor::reduction_value(int64_t step, std::string_view reduction, bool abs, Mode mode,
                                      std::string_view worker) const {
  const std::optional<Reduction> parsed = ParseReduction(reduction);
  if (!parsed) {
    throw InvalidArgument("unknown reduction '" + std::string(reduction) +
                          "' (min, max, mean, std, variance, sum, prod, l1, l2)");
  }
  return reduction_value(step, *parsed, abs, mode, worker);
}

inline std::vector<int64_t> Tensor::shape(int64_t step, Mode mode, std::string_view worker) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::tensor_shape, "tensor_shape");
  const int64_t* dims = nullptr;
  uint32_t rank = 0;
  Rule::Check(fn(rule_->Ctx("tensor_shape"), trial_, internal::ToStr(name_), step,
                 static_cast<int32_t>(mode), internal::ToStr(worker), &dims, &rank),
              "tensor_shape", name_, step, mode, worker);
  if (rank > 0 && dims == nullptr) throw Error("tensor_shape returned no dimensions for " + name_);
  return std::vector<int64_t>(dims, dims + rank);
}

inline std::vector<int64_t> Trial::steps(Mode mode) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::steps, "steps");
  const int64_t* steps = nullptr;
  size_t count = 0;
  Rule::Check(fn(rule_->Ctx("steps"), index_, static_cast<int32_t>(mode), &steps, &count), "steps",
              {}, -1, mode);
  if (count > 0 && steps == nullptr) throw Error("steps returned no array");
  return std::vector<int64_t>(steps, steps + count);
}

inline Mode Trial::step_mode(int64_t step) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::step_mode, "step_mode");
  int32_t mode = 0;
  int64_t mode_step = 0;
  Rule::Check(fn(rule_->Ctx("step_mode"), index_, step, &mode, &mode_step), "step_mode", {}, step);
  return static_cast<Mode>(mode);
}

inline int64_t Trial::mode_step(int64_t step) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::step_mode, "step_mode");
  int32_t mode = 0;
  int64_t mode_step = 0;
  Rule::Check(fn(rule_->Ctx("step_mode"), index_, step, &mode, &mode_step), "step_mode", {}, step);
  return mode_step;
}

inline int64_t Trial::global_step(Mode mode, int64_t mode_step) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::global_step, "global_step");
  int64_t step = 0;
  Rule::Check(fn(rule_->Ctx("global_step"), index_, static_cast<int32_t>(mode), mode_step, &step),
              "global_step", {}, mode_step, mode);
  return step;
}

inline std::vector<std::string> Trial::workers() const {
  auto fn = rule_->HostFn(&litmus_host_api_t::workers, "workers");
  const litmus_str_t* workers = nullptr;
  size_t count = 0;
  Rule::Check(fn(rule_->Ctx("workers"), index_, &workers, &count), "workers");
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) out.emplace_back(internal::FromStr(workers[i]));
  return out;
}

inline std::vector<std::string> Trial::tensor_names(const TensorQuery& query) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::tensor_names, "tensor_names");
  litmus_tensor_query_t q;
  std::memset(&q, 0, sizeof(q));
  q.struct_size = sizeof(q);
  q.collection = internal::ToStr(query.collection);
  q.regex = internal::ToStr(query.regex);
  q.step = query.step.value_or(-1);
  q.mode = query.mode ? static_cast<int32_t>(*query.mode) : 0;
  const litmus_str_t* names = nullptr;
  size_t count = 0;
  Rule::Check(fn(rule_->Ctx("tensor_names"), index_, &q, &names, &count), "tensor_names");
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) out.emplace_back(internal::FromStr(names[i]));
  return out;
}

inline std::vector<int64_t> Trial::tensor_steps(std::string_view name, Mode mode) const {
  auto fn = rule_->HostFn(&litmus_host_api_t::tensor_steps, "tensor_steps");
  const int64_t* steps = nullptr;
  size_t count = 0;
  Rule::Check(fn(rule_->Ctx("tensor_steps"), index_, internal::ToStr(name),
                 static_cast<int32_t>(mode), &steps, &count),
              "tensor_steps", name, -1, mode);
  if (count > 0 && steps == nullptr) throw Error("tensor_steps returned no array");
  return std::vector<int64_t>(steps, steps + count);
}

inline bool Trial::has_tensor(std::string_view name) const {
  try {
    tensor_steps(name);
    return true;
  } catch (const TensorUnavailable&) {
    return false;
  }
}

inline uint32_t RequiredTensors::TrialIndex(const Trial& trial) const {
  if (trial.rule_ != rule_) throw InvalidArgument("RequiredTensors: a trial of another rule");
  return trial.index_;
}

inline void RequiredTensors::Record(uint32_t trial, std::string_view name,
                                    const std::vector<int64_t>& steps) {
  Entries& entries = per_trial_[trial];
  if (const size_t found = entries.Find(name); found != SIZE_MAX) {
    std::vector<int64_t>& known = entries.list[found].steps;
    known.insert(known.end(), steps.begin(), steps.end());
    return;
  }
  entries.Append(name, steps);
}

inline void RequiredTensors::Add(uint32_t trial, std::string_view name,
                                 const std::vector<int64_t>& steps, bool should_match_regex) {
  const Trial target(rule_, trial);
  if (forward_to_host_) {
    auto fn = rule_->HostFn(&litmus_host_api_t::require_tensor, "require_tensor");
    Rule::Check(fn(rule_->Ctx("require_tensor"), trial, internal::ToStr(name), steps.data(),
                   steps.size(), should_match_regex ? 1u : 0u),
                "require_tensor", name, steps.empty() ? -1 : steps.back());
  }
  if (should_match_regex) {
    for (const std::string& match : target.tensor_names({.regex = name})) {
      Record(trial, match, steps);
    }
    return;
  }
  // The host already refused unknown names in require_tensor; outside set_required_tensors ask it.
  if (!forward_to_host_) target.tensor_steps(name);
  Record(trial, name, steps);
}

inline std::vector<Tensor> RequiredTensors::Get(uint32_t trial) const {
  std::vector<Tensor> out;
  const auto found = per_trial_.find(trial);
  if (found == per_trial_.end()) return out;
  const Entries& entries = found->second;
  out.reserve(entries.size);
  for (size_t i = 0; i < entries.size; ++i) out.push_back(Trial(rule_, trial).tensor(entries.list[i].name));
  return out;
}

inline std::vector<std::string> RequiredTensors::GetNames(uint32_t trial) const {
  std::vector<std::string> out;
  const auto found = per_trial_.find(trial);
  if (found == per_trial_.end()) return out;
  const Entries& entries = found->second;
  for (size_t i = 0; i < entries.size; ++i) out.push_back(entries.list[i].name);
  return out;
}

inline std::vector<int64_t> RequiredTensors::GetTensorSteps(uint32_t trial,
                                                            std::string_view name) const {
  const auto found = per_trial_.find(trial);
  if (found != per_trial_.end()) {
    if (const size_t at = found->second.Find(name); at != SIZE_MAX) return found->second.list[at].steps;
  }
  throw InvalidArgument("tensor " + std::string(name) + " is not a required tensor of trial " +
                        std::to_string(trial));
}

// ---- Registration machinery behind LITMUS_RULE_PLUGIN -----------------------------------------
namespace internal {

// Called from constant evaluation when a declaration is invalid: not constexpr on purpose, so the
// compiler's error names the problem.
inline void LITMUS_ERROR_duplicate_rule_name() {}
inline void LITMUS_ERROR_empty_rule_or_param_name() {}
inline void LITMUS_ERROR_duplicate_param_name() {}
inline void LITMUS_ERROR_unknown_param_type_use_float_int_bool_string_list_or_mode() {}
inline void LITMUS_ERROR_on_poll_needs_a_plugin_built_for_ABI_1_1() {}

struct Thunks {
  static void Destroy(litmus_rule_instance_t* instance) noexcept {
    try {
      delete reinterpret_cast<Rule*>(instance);
    } catch (...) {
      // Destructors do not throw; nothing can be reported from destroy anyway.
    }
  }
  static litmus_status_t SetRequiredTensors(litmus_rule_instance_t* instance, litmus_ctx_t* ctx,
                                            int64_t step) noexcept {
    if (instance == nullptr) return LITMUS_INVALID_ARGUMENT;
    return reinterpret_cast<Rule*>(instance)->RunSetRequiredTensors(ctx, step);
  }
  template <bool kDeclaresRequirements>
  static litmus_status_t InvokeAtStep(litmus_rule_instance_t* instance, litmus_ctx_t* ctx,
                                      int64_t step) noexcept {
    if (instance == nullptr) return LITMUS_INVALID_ARGUMENT;
    return reinterpret_cast<Rule*>(instance)->RunInvoke(ctx, step, kDeclaresRequirements);
  }
  static litmus_status_t OnPoll(litmus_rule_instance_t* instance, litmus_ctx_t* ctx,
                                int64_t last_step) noexcept {
    if (instance == nullptr) return LITMUS_INVALID_ARGUMENT;
    return reinterpret_cast<Rule*>(instance)->RunOnPoll(ctx, last_step);
  }
};

// Per-plugin globals, instantiated with a type private to the plugin's registration TU: the host
// snapshot (trivial, zero until the entry ran) and the plugin table.
template <class Tag>
struct PluginState {
  static inline litmus_host_api_t host{};
  static inline const litmus_plugin_api_t* api = nullptr;
};

template <class State, class T, size_t I>
litmus_status_t CreateThunk(litmus_ctx_t* ctx, const litmus_param_t* params, size_t param_count,
                            litmus_rule_instance_t** instance) noexcept {
  const litmus_host_api_t* host = &State::host;
  try {
    if (instance == nullptr || State::api == nullptr || (param_count > 0 && params == nullptr)) {
      SetErrorText(host, ctx, {}, "create: called with invalid arguments or before the entry");
      return LITMUS_INVALID_ARGUMENT;
    }
    *instance = nullptr;
    const RuleArgs args(host, ctx, &State::api->rules[I], params, param_count);
    std::unique_ptr<T> rule = std::make_unique<T>(args);
    Rule* base = rule.release();
    base->ctx_ = nullptr;  // ctx is valid during create only
    *instance = reinterpret_cast<litmus_rule_instance_t*>(base);
    return LITMUS_OK;
  } catch (...) {
    return StatusFromCurrentException(host, ctx);
  }
}

// The function type of a pointer to member function: bool(int64_t) for &T::invoke_at_step.
template <class M>
struct MemberFunction;
template <class C, class F>
struct MemberFunction<F C::*> {
  using type = F;
};

// One LITMUS_RULE(...) line: the class and its metadata.
template <class T, size_t N>
struct RuleEntry {
  using RuleType = T;
  std::string_view name;
  std::string_view version;
  std::string_view description;
  std::array<ParamSpec, N> params;
};

template <class T, class... P>
constexpr RuleEntry<T, sizeof...(P)> MakeRuleEntry(std::string_view name, std::string_view version,
                                                   std::string_view description, P... params) {
  static_assert(std::is_base_of_v<Rule, T>, "LITMUS_RULE: the class must derive from litmus::Rule");
  using InvokeType = typename MemberFunction<decltype(&T::invoke_at_step)>::type;
  static_assert(std::is_same_v<InvokeType, bool(int64_t)> ||
                    std::is_same_v<InvokeType, bool(int64_t) noexcept>,
                "LITMUS_RULE: the class must override bool invoke_at_step(int64_t step)");
  using SetRequiredType =
      typename MemberFunction<decltype(&T::set_required_tensors)>::type;
  static_assert(std::is_same_v<SetRequiredType, void(int64_t)> ||
                    std::is_same_v<SetRequiredType, void(int64_t) noexcept>,
                "LITMUS_RULE: set_required_tensors must be void set_required_tensors(int64_t step)");
  using OnPollType = typename MemberFunction<decltype(&T::on_poll)>::type;
  static_assert(std::is_same_v<OnPollType, bool(int64_t)> ||
                    std::is_same_v<OnPollType, bool(int64_t) noexcept>,
                "LITMUS_RULE: on_poll must be bool on_poll(int64_t last_step)");
  static_assert(!std::is_abstract_v<T>, "LITMUS_RULE: the class is abstract");
  static_assert(std::is_constructible_v<T, const RuleArgs&>,
                "LITMUS_RULE: the class needs a public constructor T(const litmus::RuleArgs&) that "
                "passes the args to litmus::Rule (`using litmus::Rule::Rule;` if it needs nothing "
                "else)");
  static_assert((std::is_same_v<P, ParamSpec> && ...),
                "LITMUS_RULE: parameters are litmus::FloatParam(...), IntParam, BoolParam, "
                "StringParam, ListParam, ModeParam or Required(...)");
  return {name, version, description, {params...}};
}

// True when T (or a base between it and Rule) overrides set_required_tensors.
template <class T>
constexpr bool kDeclaresRequirements =
    !std::is_same_v<decltype(&T::set_required_tensors), void (Rule::*)(int64_t)>;

// True when T (or a base between it and Rule) overrides on_poll.
template <class T>
constexpr bool kPolls = !std::is_same_v<decltype(&T::on_poll), bool (Rule::*)(int64_t)>;

template <size_t N>
struct ParamTable {
  std::array<litmus_param_spec_t, N> specs{};
};

// All static tables of a plugin, constant-initialized (no code runs at dlopen). Built by direct
// initialization of a namespace-scope constinit variable, so the pointers between its members
// point into that variable.
template <class State, class... Entries>
class PluginTables {
 public:
  constexpr PluginTables(State, uint32_t abi_major, uint32_t abi_minor, std::string_view name,
                         std::string_view version, Entries... entries)
      : param_tables_{MakeParamTable(entries)...} {
    static_assert(sizeof...(Entries) > 0, "LITMUS_RULE_PLUGIN: declare at least one rule");
    Fill(std::index_sequence_for<Entries...>{}, abi_minor, entries...);
    api_.struct_size = sizeof(litmus_plugin_api_t);
    api_.abi_major = abi_major;
    api_.abi_minor = abi_minor;
    api_.plugin_name = ToStrConst(name);
    api_.plugin_version = ToStrConst(version);
    api_.rules = descriptors_.data();
    api_.rule_count = sizeof...(Entries);
    if (name.empty()) LITMUS_ERROR_empty_rule_or_param_name();
  }
  const litmus_plugin_api_t* api() const { return &api_; }

 private:
  static constexpr litmus_str_t ToStrConst(std::string_view text) {
    return {text.data(), text.size()};
  }
  template <class E>
  static constexpr auto MakeParamTable(const E& entry) {
    ParamTable<std::tuple_size_v<decltype(entry.params)>> table;
    for (size_t i = 0; i < entry.params.size(); ++i) {
      const ParamSpec& p = entry.params[i];
      if (p.name.empty()) LITMUS_ERROR_empty_rule_or_param_name();
      if (p.type != "float" && p.type != "int" && p.type != "bool" && p.type != "string" &&
          p.type != "list" && p.type != "mode") {
        LITMUS_ERROR_unknown_param_type_use_float_int_bool_string_list_or_mode();
      }
      for (size_t j = 0; j < i; ++j) {
        if (entry.params[j].name == p.name) LITMUS_ERROR_duplicate_param_name();
      }
      table.specs[i].name = ToStrConst(p.name);
      table.specs[i].type = ToStrConst(p.type);
      table.specs[i].default_value = ToStrConst(p.default_value);
      table.specs[i].required = p.required ? 1u : 0u;
      table.specs[i].description = ToStrConst(p.description);
    }
    return table;
  }
  template <size_t... I>
  constexpr void Fill(std::index_sequence<I...>, uint32_t abi_minor, const Entries&... entries) {
    (FillOne<I>(abi_minor, entries), ...);
  }
  // abi_minor: the minor the plugin declares; members since a later minor stay NULL.
  template <size_t I, class E>
  constexpr void FillOne(uint32_t abi_minor, const E& entry) {
    using T = typename E::RuleType;
    if (entry.name.empty()) LITMUS_ERROR_empty_rule_or_param_name();
    for (size_t j = 0; j < I; ++j) {
      const litmus_rule_descriptor_t& other = descriptors_[j];
      if (std::string_view(other.name.data, other.name.size) == entry.name) {
        LITMUS_ERROR_duplicate_rule_name();
      }
    }
    litmus_rule_descriptor_t& d = descriptors_[I];
    d.struct_size = sizeof(litmus_rule_descriptor_t);
    d.param_spec_size = sizeof(litmus_param_spec_t);
    d.name = ToStrConst(entry.name);
    d.version = ToStrConst(entry.version);
    d.description = ToStrConst(entry.description);
    d.params = std::get<I>(param_tables_).specs.data();
    d.param_count = entry.params.size();
    d.create = &CreateThunk<State, T, I>;
    d.destroy = &Thunks::Destroy;
    d.set_required_tensors = kDeclaresRequirements<T> ? &Thunks::SetRequiredTensors : nullptr;
    d.invoke_at_step = &Thunks::InvokeAtStep<kDeclaresRequirements<T>>;
    // since 1.1: a rule that relies on on_poll cannot claim an older ABI (its host would never
    // call it).
    if (kPolls<T> && abi_minor < 1) LITMUS_ERROR_on_poll_needs_a_plugin_built_for_ABI_1_1();
    d.on_poll = kPolls<T> && abi_minor >= 1 ? &Thunks::OnPoll : nullptr;
  }

  std::tuple<ParamTable<std::tuple_size_v<decltype(Entries::params)>>...> param_tables_;
  std::array<litmus_rule_descriptor_t, sizeof...(Entries)> descriptors_{};
  litmus_plugin_api_t api_{};
};

template <class State, class... Entries>
PluginTables(State, uint32_t, uint32_t, std::string_view, std::string_view, Entries...)
    -> PluginTables<State, Entries...>;

// The body of litmus_plugin_entry_v1: checks the host's ABI and hands out the plugin table.
template <class State>
litmus_status_t PluginEntry(const litmus_plugin_api_t* api, const litmus_host_api_t* host,
                            litmus_ctx_t* ctx, const litmus_plugin_api_t** out) noexcept {
  try {
    if (out != nullptr) *out = nullptr;
    if (host == nullptr || out == nullptr) return LITMUS_INVALID_ARGUMENT;
    litmus_host_api_t snapshot;
    SnapshotHost(host, &snapshot);
    if (snapshot.struct_size < offsetof(litmus_host_api_t, reserved0)) {
      return LITMUS_INVALID_ARGUMENT;  // not even a table header: nowhere to put a message
    }
    if (snapshot.abi_major != api->abi_major || snapshot.abi_minor < api->abi_minor) {
      const std::string message =
          "plugin " + std::string(FromStr(api->plugin_name)) + " needs ABI " +
          std::to_string(api->abi_major) + "." + std::to_string(api->abi_minor) +
          ", litmus provides " + std::to_string(snapshot.abi_major) + "." +
          std::to_string(snapshot.abi_minor);
      SetErrorText(&snapshot, ctx, {}, message);
      return LITMUS_INVALID_CONFIG;
    }
    State::host = snapshot;
    State::api = api;
    *out = api;
    return LITMUS_OK;
  } catch (...) {
    return StatusFromCurrentException(host, ctx);
  }
}

}  // namespace internal
}  // namespace litmus

// The ABI version a plugin declares. Tests of litmus itself override these to build plugins that
// claim another version; a real plugin never sets them.
#ifndef LITMUS_PLUGIN_ABI_MAJOR
#define LITMUS_PLUGIN_ABI_MAJOR LITMUS_ABI_MAJOR
#endif
#ifndef LITMUS_PLUGIN_ABI_MINOR
#define LITMUS_PLUGIN_ABI_MINOR LITMUS_ABI_MINOR
#endif

// One rule of a plugin: its class, smdebug class name, version, one-line description and
// parameters (litmus::FloatParam(...), ...; none is fine).
#define LITMUS_RULE(Class, name, version, description, ...) \
  ::litmus::internal::MakeRuleEntry<Class>(name, version, description __VA_OPT__(, ) __VA_ARGS__)

// Registers the rules of a plugin and defines its only export, litmus_plugin_entry_v1. Use once
// per plugin, at namespace scope of one source file:
//   LITMUS_RULE_PLUGIN("my_rules", "1.0.0",
//                      LITMUS_RULE(MyRule, "MyRule", "1.0.0", "Fires when ...",
//                                  litmus::FloatParam("threshold", "10.0", "...")),
//                      LITMUS_RULE(OtherRule, "OtherRule", "1.0.0", "..."))
#define LITMUS_RULE_PLUGIN(plugin_name, plugin_version, ...)                                    \
  namespace {                                                                                  \
  struct LitmusPluginTag_ {};                                                                  \
  using LitmusPluginState_ = ::litmus::internal::PluginState<LitmusPluginTag_>;                \
  constinit const ::litmus::internal::PluginTables litmus_plugin_tables_{                      \
      LitmusPluginState_{}, LITMUS_PLUGIN_ABI_MAJOR, LITMUS_PLUGIN_ABI_MINOR, plugin_name,     \
      plugin_version, __VA_ARGS__};                                                            \
  }                                                                                            \
  extern "C" LITMUS_PLUGIN_EXPORT litmus_status_t litmus_plugin_entry_v1(                      \
      const litmus_host_api_t* host, litmus_ctx_t* ctx, const litmus_plugin_api_t** out) {     \
    return ::litmus::internal::PluginEntry<LitmusPluginState_>(litmus_plugin_tables_.api(),    \
                                                               host, ctx, out);                \
  }                                                                                            \
  static_assert(true, "require a semicolon after LITMUS_RULE_PLUGIN(...)")

#endif  // LITMUS_RULE_HPP_
