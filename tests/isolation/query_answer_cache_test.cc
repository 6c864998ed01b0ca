// QueryAnswerCache: answers are shared by query bytes and trial only; another trial, or other
// bytes, are another question.
#include "isolation/query_answer_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace litmus::isolation {
namespace {

TEST(QueryAnswerCache, AnswersAreKeyedByTrialAndQueryBytes) {
  QueryAnswerCache cache;
  // (Only the addresses matter: the cache never reads a trial.)
  const auto* first = reinterpret_cast<const Trial*>(0x1000);
  const auto* second = reinterpret_cast<const Trial*>(0x2000);
  const std::string query("\x07\0\0\0\0\0\0\0step", 12);  // (bytes, NULs included)
  EXPECT_EQ(cache.Find(first, query), nullptr);
  cache.Add(first, query, "names at step");
  ASSERT_NE(cache.Find(first, query), nullptr);
  EXPECT_EQ(*cache.Find(first, query), "names at step");
  EXPECT_EQ(cache.Find(second, query), nullptr);                       // another trial
  EXPECT_EQ(cache.Find(first, query.substr(0, 11)), nullptr);          // a prefix
  EXPECT_EQ(cache.Find(first, std::string(query).replace(0, 1, "\x08")), nullptr);  // another function
  cache.Add(first, query, "a second answer is ignored");
  EXPECT_EQ(*cache.Find(first, query), "names at step");
  cache.Add(second, query, "the other trial's");
  EXPECT_EQ(*cache.Find(second, query), "the other trial's");
  EXPECT_EQ(cache.size(), 2u);
}

}  // namespace
}  // namespace litmus::isolation
