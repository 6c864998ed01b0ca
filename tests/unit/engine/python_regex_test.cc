// Tests of litmus::Regex (engine/core/src/regex.h): Python re.search semantics, translation of
// Python-only syntax, rejection of what cannot be translated, and concurrent matching.
#include "python_regex.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace litmus {
namespace {

bool Search(std::string_view pattern, std::string_view subject) {
  StatusOr<std::shared_ptr<const Regex>> re = Regex::Compile(pattern);
  EXPECT_TRUE(re.ok()) << re.status().ToString();
  return re.ok() && (*re)->Search(subject);
}

void ExpectInvalid(std::string_view pattern) {
  StatusOr<std::shared_ptr<const Regex>> re = Regex::Compile(pattern);
  ASSERT_FALSE(re.ok()) << pattern;
  EXPECT_EQ(re.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(re.status().message().find(std::string(pattern)), std::string::npos) << re.status().ToString();
}

TEST(RegexTest, SearchIsUnanchored) {
  EXPECT_TRUE(Search("fc1", "MLP_fc1.weight"));
  EXPECT_TRUE(Search("weight", "MLP_fc1.weight"));
  EXPECT_FALSE(Search("^weight", "MLP_fc1.weight"));
  EXPECT_TRUE(Search("^MLP", "MLP_fc1.weight"));
  EXPECT_FALSE(Search("fc2", "MLP_fc1.weight"));
  EXPECT_TRUE(Search("", "anything"));
  EXPECT_TRUE(Search("^gradient", "gradient/MLP_fc1.bias"));
}

TEST(RegexTest, PyTorchDefaultCollections) {
  EXPECT_TRUE(Search("^(?!gradient).*weight", "MLP_fc1.weight"));
  EXPECT_FALSE(Search("^(?!gradient).*weight", "gradient/MLP_fc1.weight"));
  EXPECT_TRUE(Search("^(?!gradient).*bias", "Net_fc2.bias"));
  EXPECT_TRUE(Search("[Ll]oss_(?!input).*output", "CrossEntropyLoss_output_0"));
  EXPECT_FALSE(Search("[Ll]oss_(?!input).*output", "CrossEntropyLoss_input_0_output"));
  EXPECT_TRUE(Search("^dtypes/float", "dtypes/float16"));
  EXPECT_FALSE(Search("^dtypes/float", "dtypes/int8"));
}

TEST(RegexTest, PythonNamedGroupsAndBackreferences) {
  EXPECT_TRUE(Search("(?P<n>x)(?P=n)", "axxb"));
  EXPECT_FALSE(Search("(?P<n>x)(?P=n)", "axyb"));
  EXPECT_TRUE(Search("(?P<word>ab+)-(?P=word)", "abb-abb"));
  EXPECT_FALSE(Search("(?P<word>ab+)-(?P=word)", "abb-ab_"));
  LITMUS_ASSERT_OK_AND_ASSIGN(std::string translated, TranslatePythonRegex("(?P<n>x)(?P=n)"));
  EXPECT_EQ(translated, "(?<n>x)\\k<n>");
}

TEST(RegexTest, EndOfStringZ) {
  // Python's \Z is the very end; PCRE2's \Z would also match before a final newline.
  EXPECT_TRUE(Search("weight\\Z", "fc1.weight"));
  EXPECT_FALSE(Search("weight\\Z", "fc1.weight\n"));
  EXPECT_FALSE(Search("weight\\Z", "fc1.weights"));
  // '$' keeps Python's meaning: end, or before a final newline.
  EXPECT_TRUE(Search("weight$", "fc1.weight\n"));
  EXPECT_TRUE(Search("\\Afc1", "fc1.weight"));
}

TEST(RegexTest, OtherTranslations) {
  EXPECT_TRUE(Search("a{,2}c", "aac"));       // {,n} is {0,n} in Python
  EXPECT_TRUE(Search("^a{,2}c$", "c"));
  EXPECT_FALSE(Search("^a{,2}c$", "aaac"));
  EXPECT_TRUE(Search("x{2}", "xx"));
  EXPECT_TRUE(Search("a{", "a{"));            // a lone brace is literal in both
  EXPECT_TRUE(Search("\\v", "\x0b"));          // VT, not PCRE2's vertical-space class
  EXPECT_FALSE(Search("\\v", "\n"));
  EXPECT_TRUE(Search("\\u00e9t\\u00E9", "\xc3\xa9t\xc3\xa9"));  // é t é
  EXPECT_TRUE(Search("\\U0001F600", "\xf0\x9f\x98\x80"));
  EXPECT_TRUE(Search("[[:a]", ":"));          // '[' inside a class is literal in Python
  EXPECT_TRUE(Search("[]x]", "]"));
  EXPECT_TRUE(Search("(?i)WEIGHT", "fc1.weight"));
  EXPECT_TRUE(Search("(?u)\\w+", "abc"));
  EXPECT_TRUE(Search("(?i:W)eight", "weight"));
  EXPECT_TRUE(Search("\\x41", "A"));
  EXPECT_TRUE(Search("^\\w+$", "\xc3\xa9t\xc3\xa9"));  // \w is Unicode-aware, as in Python 3
  EXPECT_TRUE(Search("(?<=fc)1", "fc1"));
  EXPECT_TRUE(Search("(?>ab)c", "abc"));
  EXPECT_TRUE(Search("(?#comment)ab", "ab"));
}

TEST(RegexTest, InvalidPatterns) {
  ExpectInvalid("(unclosed");
  ExpectInvalid("[a-");
  ExpectInvalid("*x");
  ExpectInvalid("\\p{L}");        // Python has no \p
  ExpectInvalid("a\\K");          // nor \K
  ExpectInvalid("\\N{DIGIT ONE}");
  ExpectInvalid("(?a)x");
  ExpectInvalid("(?L)x");
  ExpectInvalid("(?<name>x)");    // PCRE2 syntax that Python rejects
  ExpectInvalid("(*UTF)x");
  ExpectInvalid("x\\");
  ExpectInvalid("\\x4");
  ExpectInvalid("\\u12");
  ExpectInvalid("[\\Z]");
  ExpectInvalid("(?P>n)");
}

TEST(RegexTest, InvalidUtf8SubjectDoesNotMatchOrCrash) {
  LITMUS_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Regex> re, Regex::Compile("^a.c$"));
  EXPECT_FALSE(re->Search("a\xff" "c"));
  EXPECT_TRUE(re->Search("abc"));
  LITMUS_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Regex> b, Regex::Compile("bc"));
  EXPECT_TRUE(b->Search("\xff" "bc"));
}

TEST(RegexTest, ConcurrentSearch) {
  LITMUS_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const Regex> re, Regex::Compile("^(?!gradient).*weight"));
  std::atomic<int> matches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        if (re->Search(i % 2 ? "fc1.weight" : "gradient/fc1.weight")) ++matches;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(matches.load(), 4 * 1000);
}

}  // namespace
}  // namespace litmus
