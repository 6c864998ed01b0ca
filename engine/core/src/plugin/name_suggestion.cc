// SuggestName: edit distance and prefix matching for "did you mean X?" hints.
#include "plugin/name_suggestion.h"

#include <algorithm>
#include <cctype>

namespace litmus {
namespace {

constexpr size_t kMaxEdits = 2;
constexpr size_t kMinPrefix = 3;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

size_t EditDistance(std::string_view a_in, std::string_view b_in) {
  const std::string a = Lower(a_in), b = Lower(b_in);
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> SuggestName(std::string_view typed, const std::vector<NameCandidate>& candidates) {
  const std::string wanted = Lower(typed);
  if (wanted.empty()) return std::nullopt;
  // Score: the edit distance for an edit match, kMaxEdits + 1 for a prefix match.
  std::optional<size_t> best_score;
  std::optional<std::string> best;
  for (const NameCandidate& c : candidates) {
    const std::string spelling = Lower(c.spelling);
    const size_t distance = EditDistance(wanted, spelling);
    std::optional<size_t> score;
    if (distance <= kMaxEdits && 2 * distance <= wanted.size()) {
      score = distance;
    } else {
      const std::string& shorter = wanted.size() < spelling.size() ? wanted : spelling;
      const std::string& longer = wanted.size() < spelling.size() ? spelling : wanted;
      if (shorter.size() >= kMinPrefix && longer.compare(0, shorter.size(), shorter) == 0) score = kMaxEdits + 1;
    }
    if (score && (!best_score || *score < *best_score)) {
      best_score = score;
      best = c.shown;
    }
  }
  return best;
}

}  // namespace litmus
