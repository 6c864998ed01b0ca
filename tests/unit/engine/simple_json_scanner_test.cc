// ScanSimpleJson against nlohmann_json's SAX parser: whenever the scanner takes a text, nlohmann
// must accept it too and report the very same events (kinds, keys, strings, numbers, order);
// and the scanner must take the index files training jobs write (the fixtures, generated files)
// or it would be no fast path. Inputs: fixture index files, hand-written cases at the edges of
// the subset, and deterministic mutations and random texts.
#include "simple_json_scanner.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/index_json_inputs.h"

namespace litmus {
namespace {

using Json = nlohmann::json;

// Records every SAX event as one line of text.
struct Recorder {
  std::vector<std::string> events;
  bool null() { return Add("null"); }
  bool boolean(bool v) { return Add(v ? "true" : "false"); }
  bool number_integer(Json::number_integer_t v) { return Add("int " + std::to_string(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return Add("uint " + std::to_string(v)); }
  bool number_float(Json::number_float_t, const std::string& s) { return Add("float " + s); }
  bool string(std::string& v) { return Add("string " + v); }
  bool binary(Json::binary_t&) { return Add("binary"); }
  bool start_object(std::size_t n) { return Add("{ " + std::to_string(n)); }
  bool end_object() { return Add("}"); }
  bool start_array(std::size_t n) { return Add("[ " + std::to_string(n)); }
  bool end_array() { return Add("]"); }
  bool key(std::string& k) { return Add("key " + k); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
  bool Add(std::string e) {
    events.push_back(std::move(e));
    return true;
  }
};

// True if the scanner took `text`; fails the test if it took it and nlohmann disagrees.
bool CheckAgainstNlohmann(const std::string& text) {
  Recorder fast;
  if (!ScanSimpleJson(text, fast)) return false;
  Recorder reference;
  const bool ok = Json::sax_parse(text.begin(), text.end(), &reference);
  EXPECT_TRUE(ok) << "the scanner took text that nlohmann rejects: " << text;
  EXPECT_EQ(fast.events, reference.events) << text;
  return true;
}

TEST(SimpleJsonScannerTest, TakesEveryFixtureIndexFile) {
  const std::vector<std::string> files = testing::FixtureIndexFileTexts();
  ASSERT_GT(files.size(), 20u);
  for (const std::string& json : files) EXPECT_TRUE(CheckAgainstNlohmann(json)) << json;
}

TEST(SimpleJsonScannerTest, EdgesOfTheSubset) {
  // Taken (and then equal to nlohmann's events).
  const std::vector<std::string> taken = {
      "{}", "[]", " {\"a\" : [ ] } ", "\t\r\n[1,2 ,3]\n", "0", "\"\"", "\"x y\"", "true", "false", "null",
      "[[[[]]],{}]", "{\"a\":{\"b\":{\"c\":null}}}", "{\"a\":1,\"a\":2}", "9999999999999999999",
      "[0,10,1000000]", "{\"k\":\"~!#$%^&*()_+{}[]:;'<>,.?/|`\"}"};
  for (const std::string& text : taken) EXPECT_TRUE(CheckAgainstNlohmann(text)) << text;
  // Left to nlohmann: outside the subset (valid JSON: 20 digits, signs, fractions, exponents,
  // escapes, non-ASCII, DEL, a byte-order mark) or invalid.
  const std::vector<std::string> left = {
      "18446744073709551615", "", " ", "-1", "-0", "1.5", "1e3", "1E3", "01", "00", "\"a\\\"b\"", "\"\\u00e9\"",
      "\"\xc3\xa9\"", "\"\x7f\"", "\"a\tb\"", "\xef\xbb\xbf{}", "{,}", "[1,]", "{\"a\"}", "{\"a\":}", "{\"a\" 1}",
      "[1 2]", "tru", "nul", "truex", "[true false]", "{} {}", "{}x", "[", "{", "]", "}", "\"abc", "{\"a\":1,}",
      "[1,2", "{'a':1}", "NaN", "Infinity", std::string("[1,\0]", 5), "/*c*/{}", "{\"a\":1}//"};
  for (const std::string& text : left) EXPECT_FALSE(CheckAgainstNlohmann(text)) << text;
}

TEST(SimpleJsonScannerTest, MutatedAndRandomTexts) {
  const std::vector<std::string> files = testing::FixtureIndexFileTexts();
  ASSERT_FALSE(files.empty());
  std::mt19937_64 rng(20261125);
  const std::vector<std::string> tokens = {"{", "}", "[", "]", ",", ":", "\"", "\\", "0", "-", "1.5", "e",
                                           "true", "null", " ", "\n", "\x01", "\xc3\xa9", "\"k\":", "99999999999999999999"};
  int taken = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string json = testing::MutatedJson(files[rng() % files.size()], tokens, rng);
    taken += CheckAgainstNlohmann(json) ? 1 : 0;
  }
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    const int length = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < length; ++k) text += tokens[rng() % tokens.size()];
    taken += CheckAgainstNlohmann(text) ? 1 : 0;
  }
  // Both kinds occur (so both branches of the comparison ran).
  EXPECT_GT(taken, 1000);
  EXPECT_LT(taken, 39000);
}

}  // namespace
}  // namespace litmus
