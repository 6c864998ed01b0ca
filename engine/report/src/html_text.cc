// EscapeHtml and ScriptJson: see html_text.h.
#include "html_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

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

namespace {

constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The two characters of each 12-bit value: two lookups per 3 bytes instead of four (a long job's
// page encodes megabytes of chart data).
constexpr std::array<std::array<char, 2>, 4096> kBase64Pairs = [] {
  std::array<std::array<char, 2>, 4096> pairs{};
  for (size_t v = 0; v < pairs.size(); ++v) pairs[v] = {kBase64Alphabet[v >> 6], kBase64Alphabet[v & 63]};
  return pairs;
}();

}  // namespace

void AppendBase64String(std::string& out, std::span<const std::byte> bytes) {
  const size_t whole = bytes.size() / 3;
  const size_t begin = out.size() + 1;
  out.resize(begin + 4 * ((bytes.size() + 2) / 3) + 1);
  out[begin - 1] = '"';
  char* to = out.data() + begin;
  const auto byte = [&](size_t i) { return static_cast<uint32_t>(bytes[i]); };
  for (size_t i = 0; i < whole; ++i, to += 4) {
    const uint32_t v = byte(3 * i) << 16 | byte(3 * i + 1) << 8 | byte(3 * i + 2);
    std::memcpy(to, kBase64Pairs[v >> 12].data(), 2);
    std::memcpy(to + 2, kBase64Pairs[v & 4095].data(), 2);
  }
  if (const size_t rest = bytes.size() - 3 * whole; rest > 0) {
    const uint32_t v = byte(3 * whole) << 16 | (rest == 2 ? byte(3 * whole + 1) << 8 : 0);
    to[0] = kBase64Alphabet[v >> 18];
    to[1] = kBase64Alphabet[(v >> 12) & 63];
    to[2] = rest == 2 ? kBase64Alphabet[(v >> 6) & 63] : '=';
    to[3] = '=';
    to += 4;
  }
  *to = '"';
}

}  // namespace litmus::report
