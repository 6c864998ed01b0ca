// EscapeHtml and ScriptJson: see html_text.h.
#include "html_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace litmus::report {

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// JSON text made script-safe: < > & (only ever inside strings) as \u escapes, copied by runs.
void AppendScriptSafe(std::string& out, std::string_view json) {
  size_t from = 0;
  for (size_t at = json.find_first_of("<>&"); at != std::string_view::npos; at = json.find_first_of("<>&", from)) {
    out.append(json, from, at - from);
    out += json[at] == '<' ? "\\u003c" : json[at] == '>' ? "\\u003e" : "\\u0026";
    from = at + 1;
  }
  out.append(json, from, std::string_view::npos);
}

}  // namespace

std::string ScriptJson(const nlohmann::json& value) {
  const std::string json = value.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(json.size() + 64);
  AppendScriptSafe(out, json);
  return out;
}

void AppendScriptString(std::string& out, std::string_view text) {
  // Plain ASCII without a character JSON or <script> must escape (labels, tensor names): as is.
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
  });
  if (plain) {
    out += '"';
    out += text;
    out += '"';
    return;
  }
  AppendScriptSafe(out, nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void AppendJsonNumber(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void AppendJsonInt(std::string& out, int64_t value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

}  // namespace litmus::report
