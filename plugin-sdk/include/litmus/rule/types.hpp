/// \file
/// litmus/rule/types.hpp — part of litmus/rule.hpp (include that): the enumerations a rule sees
/// (Mode, DType, Reduction, LogLevel), mirroring the frozen values of litmus/rule_abi.h, and
/// smdebug's names for modes and reductions.
/// Thread-safety: plain values and pure functions.
#ifndef LITMUS_RULE_TYPES_HPP_
#define LITMUS_RULE_TYPES_HPP_

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "litmus/rule_abi.h"

/// The C++ layer of the litmus rule SDK (litmus/rule.hpp): everything a rule author uses.
namespace litmus {

// ---- Enumerations mirroring the ABI's frozen values -------------------------------------------

/// A training phase, smdebug's ModeKeys. Steps are counted globally and per mode.
enum class Mode : int32_t {
  kTrain = LITMUS_MODE_TRAIN,      ///< TRAIN
  kEval = LITMUS_MODE_EVAL,        ///< EVAL
  kPredict = LITMUS_MODE_PREDICT,  ///< PREDICT
  kGlobal = LITMUS_MODE_GLOBAL,    ///< GLOBAL: step numbers are global steps, whatever the mode
};

/// The element type of a tensor value (TensorFlow's DataType values, as in litmus/rule_abi.h).
enum class DType : int32_t {
  kFloat32 = LITMUS_DTYPE_FLOAT32,  ///< float32
  kFloat64 = LITMUS_DTYPE_FLOAT64,  ///< float64
  kInt32 = LITMUS_DTYPE_INT32,  ///< int32
  kUInt8 = LITMUS_DTYPE_UINT8,  ///< uint8
  kInt16 = LITMUS_DTYPE_INT16,  ///< int16
  kInt8 = LITMUS_DTYPE_INT8,  ///< int8
  kString = LITMUS_DTYPE_STRING,  ///< string (elements are litmus_str_t, see TensorView::string_at)
  kComplex64 = LITMUS_DTYPE_COMPLEX64,  ///< complex64 (two float32)
  kInt64 = LITMUS_DTYPE_INT64,  ///< int64
  kBool = LITMUS_DTYPE_BOOL,  ///< bool (one byte, 0 or 1)
  kUInt16 = LITMUS_DTYPE_UINT16,  ///< uint16
  kComplex128 = LITMUS_DTYPE_COMPLEX128,  ///< complex128 (two float64)
  kFloat16 = LITMUS_DTYPE_FLOAT16,  ///< float16 (IEEE binary16)
  kUInt32 = LITMUS_DTYPE_UINT32,  ///< uint32
  kUInt64 = LITMUS_DTYPE_UINT64,  ///< uint64
};

/// A reduction of a tensor value, for Tensor::reduction_value (smdebug's reduction names).
enum class Reduction : int32_t {
  kMin = LITMUS_REDUCTION_MIN,  ///< min
  kMax = LITMUS_REDUCTION_MAX,  ///< max
  kMean = LITMUS_REDUCTION_MEAN,  ///< mean
  kStd = LITMUS_REDUCTION_STD,  ///< std (population, ddof 0)
  kVariance = LITMUS_REDUCTION_VARIANCE,  ///< variance (population)
  kSum = LITMUS_REDUCTION_SUM,  ///< sum
  kProd = LITMUS_REDUCTION_PROD,  ///< prod
  kL1 = LITMUS_REDUCTION_L1,  ///< l1 norm
  kL2 = LITMUS_REDUCTION_L2,  ///< l2 norm
};

/// The level of a line logged with Rule::log.
enum class LogLevel : int32_t {
  kTrace = LITMUS_LOG_TRACE,  ///< trace
  kDebug = LITMUS_LOG_DEBUG,  ///< debug
  kInfo = LITMUS_LOG_INFO,  ///< info
  kWarning = LITMUS_LOG_WARNING,  ///< warning
  kError = LITMUS_LOG_ERROR,  ///< error
};

/// On which side of its threshold a series meets the rule's condition (Rule::report_threshold).
enum class Fires : int32_t {
  kAbove = LITMUS_FIRES_ABOVE,  ///< the condition is met above the threshold
  kBelow = LITMUS_FIRES_BELOW,  ///< ... below it
};

/// smdebug's ModeKeys names ("TRAIN", ...), as its exception texts print them.
inline std::string_view ModeName(Mode mode) {
  switch (mode) {
    case Mode::kTrain: return "TRAIN";
    case Mode::kEval: return "EVAL";
    case Mode::kPredict: return "PREDICT";
    case Mode::kGlobal: return "GLOBAL";
  }
  return "UNKNOWN_MODE";
}

/// Parses smdebug's reduction names: min max mean std variance sum prod l1 l2. nullopt for
/// anything else.
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

}  // namespace litmus

#endif  // LITMUS_RULE_TYPES_HPP_
