// SortUniqueKeys (run/read_key.h): the result is the keys sorted by (trial, name, step) without
// repeats, whatever their order and however often they repeat; equal names are one view each
// (a trial's copy), as the runner's keys are. ReadValueIndex finds what a binary search finds,
// also once the list changed after the index was built.
#include "run/read_key.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace litmus {
namespace {

ReadKey Key(uint32_t trial, std::string_view name, int64_t step, bool reductions_only = false) {
  return ReadKey{.trial = trial, .reductions_only = reductions_only, .name = name, .step = step};
}

std::vector<ReadKey> Reference(std::vector<ReadKey> keys) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

TEST(SortUniqueKeys, ShuffledKeysRepeatedManyTimesComeOutSortedOnce) {
  // Names stored out of name order, so that their addresses do not sort as their bytes do.
  std::deque<std::string> names = {"zeta", "alpha", "gradient/fc1", "gradient/fc0", "loss", "a", "ab"};
  std::mt19937 random(7);
  for (const size_t count : {0u, 1u, 2u, 15u, 16u, 17u, 1000u, 20000u}) {
    SCOPED_TRACE(count);
    std::vector<ReadKey> keys;
    for (size_t i = 0; i < count; ++i) {
      keys.push_back(Key(static_cast<uint32_t>(random() % 2), names[random() % names.size()],
                         static_cast<int64_t>(random() % 40) - 5));
    }
    std::vector<ReadKey> sorted = keys;
    SortUniqueKeys(sorted);
    EXPECT_EQ(sorted, Reference(keys));
    EXPECT_TRUE(std::is_sorted(sorted.begin(), sorted.end()));
    SortUniqueKeys(sorted);  // already sorted, no repeats: unchanged
    EXPECT_EQ(sorted, Reference(keys));
  }
}

TEST(SortUniqueKeys, SortedKeysLoseOnlyTheirRepeats) {
  const std::string a = "a", b = "b";
  std::vector<ReadKey> keys = {Key(0, a, 1), Key(0, a, 1), Key(0, a, 2), Key(0, b, 1), Key(0, b, 1), Key(1, a, 0)};
  SortUniqueKeys(keys);
  EXPECT_EQ(keys, (std::vector<ReadKey>{Key(0, a, 1), Key(0, a, 2), Key(0, b, 1), Key(1, a, 0)}));
}

// A key is wanted only for its reductions if every repeat of it is: one rule that wants its raw
// value makes the reader keep it. Both ways through SortUniqueKeys (sorted, and not).
TEST(SortUniqueKeys, AKeyIsReductionsOnlyOnlyIfEveryRepeatIs) {
  const std::string a = "a", b = "b", c = "c";
  for (const bool sorted : {true, false}) {
    SCOPED_TRACE(sorted);
    std::vector<ReadKey> keys = {Key(0, a, 1, true), Key(0, a, 1, false), Key(0, a, 1, true),
                                 Key(0, b, 1, true), Key(0, b, 1, true),  Key(0, c, 1, false),
                                 Key(0, c, 1, true), Key(1, a, 1, true)};
    if (!sorted) std::reverse(keys.begin(), keys.end());
    SortUniqueKeys(keys);
    ASSERT_EQ(keys, (std::vector<ReadKey>{Key(0, a, 1), Key(0, b, 1), Key(0, c, 1), Key(1, a, 1)}));
    EXPECT_FALSE(keys[0].reductions_only);
    EXPECT_TRUE(keys[1].reductions_only);
    EXPECT_FALSE(keys[2].reductions_only);
    EXPECT_TRUE(keys[3].reductions_only);
  }
}

TEST(ReadValueIndex, FindsWhatABinarySearchFindsAlsoAfterTheListChanged) {
  std::deque<std::string> names = {"w3", "w1", "w2", "loss"};
  std::vector<ReadKey> keys;
  for (uint32_t trial = 0; trial < 2; ++trial) {
    for (const std::string& name : names) {
      for (int64_t step = 0; step < 16; step += 2) keys.push_back(Key(trial, name, step));
    }
  }
  SortUniqueKeys(keys);
  std::vector<ReadValue> values;
  for (const ReadKey& key : keys) values.push_back({key, nullptr, false});
  const auto expect_agrees = [&](const ReadValueIndex& index) {
    for (uint32_t trial = 0; trial < 3; ++trial) {
      for (const std::string& name : names) {
        for (int64_t step = -1; step < 17; ++step) {
          const ReadKey key = Key(trial, name, step);
          const auto it = std::lower_bound(values.begin(), values.end(), key);
          const ReadValue* expected = it != values.end() && it->key == key ? &*it : nullptr;
          EXPECT_EQ(index.Find(values, key), expected) << trial << " " << name << " " << step;
        }
      }
    }
  };
  ReadValueIndex index;
  expect_agrees(index);  // never built: the binary search alone
  index.Build(values);
  expect_agrees(index);
  // The list changes after Build (a step's values replaced by others in the same memory): the
  // index only points at the wrong entries, which Find checks.
  for (ReadValue& v : values) v.key.step += 1;
  expect_agrees(index);
  values.erase(values.begin(), values.begin() + 5);
  expect_agrees(index);
  values.clear();
  expect_agrees(index);
}

}  // namespace
}  // namespace litmus
