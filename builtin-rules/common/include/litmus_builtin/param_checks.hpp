// Value checks for the parameters of the built-in rules, on top of the SDK's parsing (which
// already rejects text that is not a number): a value outside its meaningful range is a
// configuration error whose message names the key, e.g.
//   threshold: must be a percentage between 0 and 100, got '150'
//
// Stateless; thread-compatible (reads the rule's parameters).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "litmus/rule.hpp"

namespace litmus_builtin {

// Throws InvalidConfig "<key>: <requirement>, got '<text>'".
[[noreturn]] inline void ThrowInvalidParam(const litmus::Rule& rule, const litmus::ParamSpec& spec,
                                           const std::string& requirement) {
  throw litmus::InvalidConfig(std::string(spec.name) + ": " + requirement + ", got '" +
                              rule.param_raw(spec.name).value_or("") + "'");
}

// A float parameter in [low, high] (NaN is refused).
inline double FloatInRange(const litmus::Rule& rule, const litmus::ParamSpec& spec, double low,
                           double high, const std::string& requirement) {
  const double value = rule.param_float(spec.name);
  if (!(value >= low && value <= high)) ThrowInvalidParam(rule, spec, requirement);
  return value;
}

// A percentage: a float in [0, 100].
inline double PercentParam(const litmus::Rule& rule, const litmus::ParamSpec& spec) {
  return FloatInRange(rule, spec, 0.0, 100.0, "must be a percentage between 0 and 100");
}

// A fraction: a float in [0, 1].
inline double FractionParam(const litmus::Rule& rule, const litmus::ParamSpec& spec) {
  return FloatInRange(rule, spec, 0.0, 1.0, "must be between 0 and 1");
}

// A finite float (a threshold: NaN or an infinity would make the comparison meaningless).
inline double FiniteParam(const litmus::Rule& rule, const litmus::ParamSpec& spec) {
  const double value = rule.param_float(spec.name);
  if (!std::isfinite(value)) ThrowInvalidParam(rule, spec, "must be a finite number");
  return value;
}

// A finite float >= 0 (a tolerance, an epsilon).
inline double NonNegativeParam(const litmus::Rule& rule, const litmus::ParamSpec& spec) {
  return FloatInRange(rule, spec, 0.0, std::numeric_limits<double>::max(),
                      "must be a finite number >= 0");
}

// An optional finite float: nullopt when not set ("None" or "").
inline std::optional<double> OptionalFiniteParam(const litmus::Rule& rule,
                                                 const litmus::ParamSpec& spec) {
  const std::optional<double> value = rule.param_optional_float(spec.name);
  if (value && !std::isfinite(*value)) ThrowInvalidParam(rule, spec, "must be a finite number");
  return value;
}

// An int parameter >= low.
inline int64_t IntAtLeast(const litmus::Rule& rule, const litmus::ParamSpec& spec, int64_t low) {
  const int64_t value = rule.param_int(spec.name);
  if (value < low) ThrowInvalidParam(rule, spec, "must be at least " + std::to_string(low));
  return value;
}

// An optional int parameter >= low: nullopt when not set.
inline std::optional<int64_t> OptionalIntAtLeast(const litmus::Rule& rule,
                                                 const litmus::ParamSpec& spec, int64_t low) {
  const std::optional<int64_t> value = rule.param_optional_int(spec.name);
  if (value && *value < low) ThrowInvalidParam(rule, spec, "must be at least " + std::to_string(low));
  return value;
}

}  // namespace litmus_builtin
