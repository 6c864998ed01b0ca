// "Did you mean X?" for misspelled rule names and parameter keys. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace litmus {

// One way to write a known name: `spelling` is compared with what the user typed, `shown` is
// what the suggestion displays (e.g. spelling "vanishing_gradient", shown "VanishingGradient").
struct NameCandidate {
  std::string spelling;
  std::string shown;
};

// The candidate closest to `typed`, compared case-insensitively, or nullopt. A candidate matches
// when its spelling is within two edits of `typed` (Levenshtein distance <= 2, and at most half of
// `typed`'s length, so that "x" does not suggest "ab"), or when one of the two is a prefix of the
// other and the shorter has at least 3 characters ("vanishing" -> VanishingGradient). Fewer edits
// win, then edit matches over prefix matches, then the earlier candidate; a spelling differing
// only in case is the best match (a case-sensitive parameter key "Threshold" suggests threshold).
std::optional<std::string> SuggestName(std::string_view typed, const std::vector<NameCandidate>& candidates);

// Levenshtein distance of the two strings, case-insensitively (ASCII).
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace litmus
