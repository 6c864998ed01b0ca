// Test helpers for the HTML report's chart specs (window.LITMUS_SPECS = [...]; in the page, see
// engine/report/src/report_page.cc ChartSpec): the specs as JSON with each chart's binary data
// decoded into the rows dygraphs is given ([[step, [min, value, max] | null, ...], ...]), as the
// page's script decodes them; and the data encoded again (for tests that tamper with a page).
// Header-only (nlohmann::json); pure functions. Written independently of the page's encoder: a
// test reading the page through the encoder's own code would not see it being wrong.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace litmus::testing {

// RFC 4648 base64 (with padding) to bytes; throws std::invalid_argument on anything else.
inline std::string DecodeBase64(const std::string& text) {
  if (text.size() % 4 != 0) throw std::invalid_argument("base64 length " + std::to_string(text.size()));
  const auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    throw std::invalid_argument(std::string("base64 character '") + c + "'");
  };
  std::string out;
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool pad2 = text[i + 2] == '=', pad3 = text[i + 3] == '=';
    if ((pad2 && !pad3) || ((pad2 || pad3) && i + 4 != text.size())) throw std::invalid_argument("base64 padding");
    const int v = value(text[i]) << 18 | value(text[i + 1]) << 12 | (pad2 ? 0 : value(text[i + 2]) << 6) |
                  (pad3 ? 0 : value(text[i + 3]));
    out += static_cast<char>(v >> 16);
    if (!pad2) out += static_cast<char>((v >> 8) & 0xff);
    if (!pad3) out += static_cast<char>(v & 0xff);
  }
  return out;
}

inline std::string EncodeBase64(const std::string& bytes) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = 0;
    for (size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += n > 1 ? kAlphabet[(v >> 6) & 63] : '=';
    out += n > 2 ? kAlphabet[v & 63] : '=';
  }
  return out;
}

// The spec's data as doubles (little-endian in the page).
inline std::vector<double> ChartData(const nlohmann::json& spec) {
  const std::string bytes = DecodeBase64(spec.at("data").get<std::string>());
  if (bytes.size() % 8 != 0) throw std::invalid_argument("chart data of " + std::to_string(bytes.size()) + " bytes");
  std::vector<double> out(bytes.size() / 8);
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t bits = 0;
    for (int k = 7; k >= 0; --k) bits = bits << 8 | static_cast<unsigned char>(bytes[8 * i + k]);
    out[i] = std::bit_cast<double>(bits);
  }
  return out;
}

inline std::string EncodeChartData(const std::vector<double>& data) {
  std::string bytes;
  for (const double d : data) {
    const uint64_t bits = std::bit_cast<uint64_t>(d);
    for (int k = 0; k < 8; ++k) bytes += static_cast<char>((bits >> (8 * k)) & 0xff);
  }
  return EncodeBase64(bytes);
}

// The rows of a spec: n = spec["rows"] steps, then per column c the cells [min, value, max] at
// n + 3 * (c * n + row); a NaN value is a gap (null). Throws if the data's size does not match.
inline nlohmann::json ChartRows(const nlohmann::json& spec) {
  const std::vector<double> data = ChartData(spec);
  const size_t n = spec.at("rows").get<size_t>(), columns = spec.at("columns").size();
  if (data.size() != n * (1 + 3 * columns)) {
    throw std::invalid_argument("chart data of " + std::to_string(data.size()) + " doubles for " + std::to_string(n) +
                                " rows of " + std::to_string(columns) + " columns");
  }
  nlohmann::json rows = nlohmann::json::array();
  for (size_t r = 0; r < n; ++r) {
    nlohmann::json row = nlohmann::json::array({static_cast<int64_t>(data[r])});
    for (size_t c = 0; c < columns; ++c) {
      const size_t k = n + 3 * (c * n + r);
      if (std::isnan(data[k + 1])) {
        row.push_back(nullptr);
      } else {
        row.push_back(nlohmann::json::array({data[k], data[k + 1], data[k + 2]}));
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// The chart specs a page carries (window.LITMUS_SPECS = ...;), each with "rows" decoded
// (ChartRows) and "data" removed; null if the page has none.
inline nlohmann::json PageChartSpecs(const std::string& page) {
  const std::string start = "window.LITMUS_SPECS = ";
  const size_t at = page.find(start);
  if (at == std::string::npos) return nlohmann::json();
  const size_t end = page.find(";</script>", at);
  nlohmann::json specs = nlohmann::json::parse(page.substr(at + start.size(), end - at - start.size()));
  for (nlohmann::json& spec : specs) {
    spec["rows"] = ChartRows(spec);
    spec.erase("data");
  }
  return specs;
}

}  // namespace litmus::testing
