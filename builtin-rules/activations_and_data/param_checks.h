// Value checks for the parameters of the activations_and_data rules, on top of the SDK's parsing
// (which already rejects text that is not a number): a value outside its meaningful range, or
// otherwise unusable, is a configuration error whose message names the key, e.g.
//   threshold_layer: must be a percentage between 0 and 100, got '150'
// Stateless; thread-compatible (reads the rule's parameters).
#pragma once

#include <cstdint>
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

// An int parameter >= low.
inline int64_t IntAtLeast(const litmus::Rule& rule, const litmus::ParamSpec& spec, int64_t low) {
  const int64_t value = rule.param_int(spec.name);
  if (value < low) ThrowInvalidParam(rule, spec, "must be at least " + std::to_string(low));
  return value;
}

}  // namespace litmus_builtin
