// Inputs for the index parser tests (index_parser_diff_test, simple_json_scanner_test): the text
// of every index file of the vendored fixture trials, and mutations of such texts.
#pragma once

#include <random>
#include <string>
#include <vector>

namespace litmus::testing {

std::vector<std::string> FixtureIndexFileTexts();

// `json` after 1-3 edits drawn from `rng`: characters deleted, a stretch duplicated, a character
// replaced by JSON punctuation, or one of `tokens` inserted. Deterministic for a seeded rng.
std::string MutatedJson(std::string json, const std::vector<std::string>& tokens, std::mt19937_64& rng);

}  // namespace litmus::testing
