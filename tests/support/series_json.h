// Test helpers for rule-reports/<rule>.series.json, what a rule watched (ABI 1.3 report_series;
// format in docs/report.md): the points of a series (raw buckets only: tests use short trials),
// its thresholds and firing values. Header-only (nlohmann::json); pure functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace litmus::testing {

// A number of the series file: JSON numbers, or "nan", "inf", "-inf".
inline double SeriesNumber(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (v == "inf") return std::numeric_limits<double>::infinity();
  if (v == "-inf") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::signaling_NaN();
}

inline const nlohmann::json* FindSeries(const nlohmann::json& doc, const std::string& name, const std::string& tensor) {
  if (!doc.is_object() || !doc.contains("series")) return nullptr;
  for (const auto& s : doc["series"]) {
    if (s["name"] == name && s["tensor"] == tensor) return &s;
  }
  return nullptr;
}

// (step, value) of each bucket of the series, in order; empty if absent. Every bucket must hold
// one point (else the pair's value is the bucket mean: fine for a check of the downsampling).
inline std::vector<std::pair<int64_t, double>> SeriesPoints(const nlohmann::json& doc, const std::string& name,
                                                           const std::string& tensor = "") {
  std::vector<std::pair<int64_t, double>> out;
  const nlohmann::json* s = FindSeries(doc, name, tensor);
  if (s == nullptr) return out;
  for (size_t i = 0; i < (*s)["step"].size(); ++i) {
    out.emplace_back((*s)["step"][i].get<int64_t>(), SeriesNumber((*s)["value"][i]));
  }
  return out;
}

// Just the values.
inline std::vector<double> SeriesValues(const nlohmann::json& doc, const std::string& name,
                                        const std::string& tensor = "") {
  std::vector<double> out;
  for (const auto& [step, value] : SeriesPoints(doc, name, tensor)) out.push_back(value);
  return out;
}

// The series' threshold on side `fires_when` ("above" or "below").
inline std::optional<double> SeriesThreshold(const nlohmann::json& doc, const std::string& name,
                                             const std::string& fires_when) {
  if (!doc.is_object() || !doc.contains("thresholds") || !doc["thresholds"].contains(name)) return std::nullopt;
  for (const auto& t : doc["thresholds"][name]) {
    if (t["fires_when"] == fires_when) return SeriesNumber(t["value"]);
  }
  return std::nullopt;
}

// (step, value) kept at the steps where the rule fired.
inline std::vector<std::pair<int64_t, double>> SeriesFirings(const nlohmann::json& doc, const std::string& name,
                                                            const std::string& tensor = "") {
  std::vector<std::pair<int64_t, double>> out;
  const nlohmann::json* s = FindSeries(doc, name, tensor);
  if (s == nullptr) return out;
  const auto& f = (*s)["firings"];
  for (size_t i = 0; i < f["step"].size(); ++i) out.emplace_back(f["step"][i].get<int64_t>(), SeriesNumber(f["value"][i]));
  return out;
}

}  // namespace litmus::testing
