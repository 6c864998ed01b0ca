// Tests of FlatMap: lookups (find, lower_bound, contains, at) agree with std::map on keys spaced
// evenly, with gaps, irregularly, at the int64 extremes, and on (mode, step) pairs of one or
// several modes, for keys present, absent, below and above the range; insertion keeps order.
#include "flat_map.h"

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "litmus/format/mode.h"

namespace litmus::internal {
namespace {

// Builds both maps from `keys` (in the given order) and compares every lookup of `probes`.
template <typename Key>
void ExpectSameLookups(const std::vector<Key>& keys, const std::vector<Key>& probes) {
  FlatMap<Key, int> flat;
  std::map<Key, int> reference;
  for (size_t i = 0; i < keys.size(); ++i) {
    flat.try_emplace(keys[i], static_cast<int>(i));
    reference.try_emplace(keys[i], static_cast<int>(i));
  }
  ASSERT_EQ(flat.size(), reference.size());
  auto ref_it = reference.begin();
  for (const auto& [key, value] : flat) {
    ASSERT_EQ(key, ref_it->first);
    ASSERT_EQ(value, ref_it->second);
    ++ref_it;
  }
  for (const Key& probe : probes) {
    const auto want = reference.lower_bound(probe);
    const auto got = flat.lower_bound(probe);
    if (want == reference.end()) {
      EXPECT_TRUE(got == flat.end());
    } else {
      ASSERT_FALSE(got == flat.end());
      EXPECT_EQ(got->first, want->first);
      EXPECT_EQ(got->second, want->second);
    }
    EXPECT_EQ(flat.contains(probe), reference.contains(probe));
    if (reference.contains(probe)) {
      EXPECT_EQ(flat.at(probe), reference.at(probe));
      EXPECT_EQ(flat.find(probe)->second, reference.at(probe));
    } else {
      EXPECT_TRUE(flat.find(probe) == flat.end());
      EXPECT_THROW(flat.at(probe), std::out_of_range);
    }
  }
}

std::vector<int64_t> Range(int64_t first, int64_t last) {
  std::vector<int64_t> out;
  for (int64_t k = first; k <= last; ++k) out.push_back(k);
  return out;
}

TEST(FlatMapTest, EvenlySpacedSteps) {
  for (int64_t stride : {1, 2, 7, 100}) {
    std::vector<int64_t> keys;
    for (int64_t i = 0; i < 2000; ++i) keys.push_back(5 + i * stride);
    ExpectSameLookups(keys, Range(-3, 5 + 2000 * stride + 3));
  }
}

TEST(FlatMapTest, GapsAndIrregularSpacing) {
  std::vector<int64_t> keys;
  for (int64_t i = 0; i < 3000; ++i) {
    if (i % 97 == 5 || (i > 1000 && i < 1400)) continue;  // missing steps and a hole
    keys.push_back(i < 2500 ? i : 2500 + (i - 2500) * 1000);  // then a sparse tail
  }
  ExpectSameLookups(keys, Range(-2, 3000));
  std::vector<int64_t> tail_probes;
  for (int64_t k = 2500; k < 2500 + 500 * 1000 + 5; k += 333) tail_probes.push_back(k);
  ExpectSameLookups(keys, tail_probes);
}

TEST(FlatMapTest, RandomKeysInRandomOrder) {
  std::mt19937_64 random(42);
  for (int round = 0; round < 20; ++round) {
    std::vector<int64_t> keys;
    const int count = 1 + static_cast<int>(random() % 3000);
    const int64_t spread = 1 + static_cast<int64_t>(random() % 100000);
    for (int i = 0; i < count; ++i) keys.push_back(static_cast<int64_t>(random() % spread) - spread / 3);
    // Clustered keys too, far from the others.
    for (int i = 0; i < count / 4; ++i) keys.push_back(spread * 50 + static_cast<int64_t>(random() % 10));
    std::vector<int64_t> probes;
    for (int i = 0; i < 4000; ++i) probes.push_back(static_cast<int64_t>(random() % (spread * 60)) - spread);
    ExpectSameLookups(keys, probes);
  }
}

TEST(FlatMapTest, ExtremeKeys) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> keys = {kMin, kMin + 1, -1, 0, 1, kMax - 1, kMax};
  for (int64_t i = 0; i < 20; ++i) keys.push_back(i * (kMax / 20));
  std::vector<int64_t> probes = keys;
  for (int64_t k : {kMin + 2, int64_t{-2}, int64_t{2}, kMax - 2, kMax / 3, kMin / 3}) probes.push_back(k);
  ExpectSameLookups(keys, probes);
}

TEST(FlatMapTest, ModeStepPairs) {
  using Key = std::pair<Mode, int64_t>;
  std::vector<Key> one_mode;
  for (int64_t i = 0; i < 1000; ++i) one_mode.push_back({Mode::kTrain, i * 3});
  std::vector<Key> probes;
  for (Mode mode : {Mode::kTrain, Mode::kEval, Mode::kPredict, Mode::kGlobal}) {
    for (int64_t s = -2; s < 3005; ++s) probes.push_back({mode, s});
  }
  ExpectSameLookups(one_mode, probes);
  std::vector<Key> mixed = one_mode;
  for (int64_t i = 0; i < 500; ++i) mixed.push_back({Mode::kEval, i});
  for (int64_t i = 0; i < 50; ++i) mixed.push_back({Mode::kGlobal, i * 11});
  ExpectSameLookups(mixed, probes);
}

TEST(FlatMapTest, SmallAndEmpty) {
  ExpectSameLookups<int64_t>({}, {-1, 0, 1});
  ExpectSameLookups<int64_t>({4}, {3, 4, 5});
  ExpectSameLookups<int64_t>({4, 9, 4, 2}, Range(0, 10));  // a repeated key keeps its first value
}

}  // namespace
}  // namespace litmus::internal
