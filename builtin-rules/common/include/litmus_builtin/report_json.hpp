// JSON texts for the report Details of the built-in rules (Rule::report_detail takes JSON text):
// numbers, with NaN and infinities as the strings "nan", "inf" and "-inf" as the SDK's numeric
// report_detail stores them, and flat objects and arrays of such texts.
// Stateless functions plus a builder object; thread-compatible.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/rule.hpp"

namespace litmus_builtin {

// Shortest round-trip text of `value`.
inline std::string JsonNumber(double value) {
  if (std::isnan(value)) return "\"nan\"";
  if (std::isinf(value)) return value > 0 ? "\"inf\"" : "\"-inf\"";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

inline std::string JsonNumber(int64_t value) { return std::to_string(value); }

// [a, b, ...] from JSON texts.
inline std::string JsonArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += items[i];
  }
  return out + "]";
}

// {"key": value, ...} with keys in insertion order; values are JSON texts.
class JsonObject {
 public:
  JsonObject& Add(std::string_view key, std::string_view json_value) {
    if (text_.size() > 1) text_ += ", ";
    text_ += litmus::JsonString(key);
    text_ += ": ";
    text_ += json_value;
    return *this;
  }
  JsonObject& Add(std::string_view key, double value) { return Add(key, JsonNumber(value)); }
  JsonObject& Add(std::string_view key, int64_t value) { return Add(key, JsonNumber(value)); }
  bool empty() const { return text_.size() == 1; }
  std::string str() const { return text_ + "}"; }

 private:
  std::string text_ = "{";
};

}  // namespace litmus_builtin
