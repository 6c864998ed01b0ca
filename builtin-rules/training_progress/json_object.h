// JsonObject: builds the small JSON objects the training-progress rules hand to the host: report
// Details ({"base_step": 0, "base": 0.3, ...}, through report_detail) and actions (add_action).
// NaN and infinities become the strings "nan", "inf", "-inf", as litmus::Rule::report_detail
// stores them. Thread-compatible.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "litmus/rule.hpp"

namespace litmus_builtin {

class JsonObject {
 public:
  JsonObject& Add(std::string_view key, double value) { return Raw(key, Number(value)); }
  JsonObject& Add(std::string_view key, int64_t value) { return Raw(key, std::to_string(value)); }
  JsonObject& Add(std::string_view key, std::string_view text) { return Raw(key, litmus::JsonString(text)); }
  std::string str() const { return "{" + body_ + "}"; }

 private:
  JsonObject& Raw(std::string_view key, const std::string& json) {
    if (!body_.empty()) body_ += ", ";
    body_ += litmus::JsonString(key) + ": " + json;
    return *this;
  }
  static std::string Number(double value) {
    if (std::isnan(value)) return "\"nan\"";
    if (std::isinf(value)) return value > 0 ? "\"inf\"" : "\"-inf\"";
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    return std::string(buffer, static_cast<size_t>(result.ptr - buffer));
  }

  std::string body_;
};

}  // namespace litmus_builtin
