/// \file
/// litmus/rule/params.hpp — part of litmus/rule.hpp: how a rule declares its parameters
/// (ParamSpec, FloatParam ... Required, used in LITMUS_RULE) and how parameter text is parsed
/// (litmus::params, the rules of docs/rules/semantics.md §1.2; usable on its own). Reading a
/// parameter's value is a member of litmus::Rule (rule_base.hpp, e.g. Rule::param_float).
/// Thread-safety: constexpr values and pure functions.
#ifndef LITMUS_RULE_PARAMS_HPP_
#define LITMUS_RULE_PARAMS_HPP_

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace litmus {

// ---- Parameter declarations ----------------------------------------------------------------------

/// One declared parameter, as LITMUS_RULE takes it; made by FloatParam, IntParam, BoolParam,
/// StringParam, ListParam or ModeParam, optionally wrapped in Required. The host applies the
/// default before the rule is created, and `litmus rules NAME` prints the table.
struct ParamSpec {
  std::string_view name;           ///< the key users set (`--param name=value`)
  std::string_view type;           ///< advisory text shown by `litmus rules NAME`
  std::string_view default_value;  ///< "" or "None": no default (the parameter is optional)
  std::string_view description;    ///< one line for `litmus rules NAME`
  bool required = false;           ///< the host refuses to create the rule without a value
};

/// A number parameter (read with Rule::param_float, Rule::param_optional_float).

constexpr ParamSpec FloatParam(std::string_view name, std::string_view default_value,
                               std::string_view description) {
  return {name, "float", default_value, description, false};
}
/// An integer parameter (Rule::param_int; "10.0" is 10).
constexpr ParamSpec IntParam(std::string_view name, std::string_view default_value,
                             std::string_view description) {
  return {name, "int", default_value, description, false};
}
/// A boolean parameter: True, true, False or false (Rule::param_bool).
constexpr ParamSpec BoolParam(std::string_view name, std::string_view default_value,
                              std::string_view description) {
  return {name, "bool", default_value, description, false};
}
/// A text parameter (Rule::param_string).
constexpr ParamSpec StringParam(std::string_view name, std::string_view default_value,
                                std::string_view description) {
  return {name, "string", default_value, description, false};
}
/// A comma-separated list (Rule::param_list, Rule::param_float_list, Rule::param_int_list).
constexpr ParamSpec ListParam(std::string_view name, std::string_view default_value,
                              std::string_view description) {
  return {name, "list", default_value, description, false};
}
/// A mode name such as TRAIN or EVAL, read as text (Rule::param_string).
constexpr ParamSpec ModeParam(std::string_view name, std::string_view default_value,
                              std::string_view description) {
  return {name, "mode", default_value, description, false};
}
/// Makes a parameter mandatory: the host refuses to create the rule without it, e.g.
/// `Required(FloatParam("limit", "", "..."))`.
constexpr ParamSpec Required(ParamSpec spec) {
  spec.required = true;
  spec.default_value = {};
  return spec;
}

// ---- Parameter text parsing (docs/rules/semantics.md §1.2), usable on its own ------------------

/// Parameter text parsing as smdebug's rules do it (docs/rules/semantics.md §1.2), usable on its
/// own.
namespace params {

/// The text without leading and trailing ASCII whitespace.
inline std::string_view TrimAscii(std::string_view text) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

/// "None" and the empty string (after trimming) mean "not set".
inline bool IsUnset(std::string_view text) {
  const std::string_view trimmed = TrimAscii(text);
  return trimmed.empty() || trimmed == "None";
}

/// Decimal or exponent notation, inf and nan, optional sign and surrounding whitespace (Python
/// float()). nullopt for anything else, including values out of double's range.
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

/// An integer, or a number with an integral value that fits int64 ("10.0" is 10).
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

/// Exactly True, true, False or false (smdebug's parse_bool); no trimming.
inline std::optional<bool> ParseBool(std::string_view text) {
  if (text == "True" || text == "true") return true;
  if (text == "False" || text == "false") return false;
  return std::nullopt;
}

/// Comma-separated items, each trimmed of ASCII whitespace; empty items are dropped, and "None" or
/// "" give an empty list.
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

}  // namespace litmus

#endif  // LITMUS_RULE_PARAMS_HPP_
