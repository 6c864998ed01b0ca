// FormatVerdictTable: see verdict_table.h.
#include "run/verdict_table.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace litmus {
namespace {

std::string FormatSeconds(double seconds) {
  char buffer[32];
  if (seconds < 60) {
    std::snprintf(buffer, sizeof buffer, "%.2fs", seconds);
  } else {
    const auto total = static_cast<int64_t>(seconds);
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  }
  return buffer;
}

}  // namespace

std::string FormatVerdictTable(const std::vector<VerdictRow>& rows) {
  if (rows.empty()) return "";
  constexpr size_t kColumns = 6;
  using Line = std::array<std::string, kColumns>;
  std::vector<Line> lines = {{"rule", "status", "first firing", "firings", "datapoints", "time"}};
  for (const VerdictRow& row : rows) {
    lines.push_back({row.rule, row.status, row.first_firing ? std::to_string(*row.first_firing) : "-",
                     std::to_string(row.firings), std::to_string(row.datapoints), FormatSeconds(row.seconds)});
  }
  std::array<size_t, kColumns> width{};
  for (const Line& line : lines) {
    for (size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], line[c].size());
  }
  std::string out;
  for (const Line& line : lines) {
    std::string text;
    for (size_t c = 0; c < kColumns; ++c) {
      const std::string pad(width[c] - line[c].size(), ' ');
      if (c > 0) text += "  ";
      text += c < 2 ? line[c] + pad : pad + line[c];  // names left, numbers right
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

}  // namespace litmus
