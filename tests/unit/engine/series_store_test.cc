// SeriesStore (ABI 1.3 series): bounded buckets that keep the minimum and maximum of what they
// merge, exact values at firing steps, thresholds per side, and the series JSON document.
#include "plugin/series_store.h"

#include "litmus/rule_abi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

namespace litmus {
namespace {

using ::testing::ElementsAre;

TEST(SeriesStore, ShortSeriesKeepEveryPoint) {
  SeriesStore store;
  for (int64_t s = 0; s < 10; ++s) store.Add("v", "t", s, 1, static_cast<double>(s) * 2);
  ASSERT_EQ(store.series().size(), 1u);
  const auto& buckets = store.series()[0].buckets;
  ASSERT_EQ(buckets.size(), 10u);
  EXPECT_EQ(buckets[3].first_step, 3);
  EXPECT_EQ(buckets[3].first_value, 6);
  EXPECT_EQ(store.series()[0].points_per_bucket, 1);
}

// --no-series: a disabled store forgets what it held and keeps nothing published after.
TEST(SeriesStore, DisabledKeepsNothing) {
  SeriesStore store;
  store.set_keep_new_points(true);
  store.SetThreshold("v", 1.0, LITMUS_FIRES_ABOVE);
  store.AddRecommendation("do something");
  store.Add("v", "t", 0, 1, 2.0);
  ASSERT_FALSE(store.empty());
  store.Disable();
  EXPECT_TRUE(store.disabled());
  EXPECT_TRUE(store.empty());
  const uint64_t version = store.version();
  store.Add("v", "t", 1, 1, 3.0);
  store.SetThreshold("w", 2.0, LITMUS_FIRES_BELOW);
  store.AddRecommendation("again");
  store.MarkFiring(1);
  EXPECT_TRUE(store.empty());
  EXPECT_TRUE(store.TakeNewPoints().empty());
  EXPECT_EQ(store.version(), version);
}

// A call of several steps (--rule-batch-steps) publishes the points of its later steps before the
// runner marks a firing at an earlier one: the point of the firing step is kept, from the last
// kRecentPoints of its series; one older than that, or a step without a point, keeps nothing.
TEST(SeriesStore, AFiringKeepsItsStepsPointAfterLaterPoints) {
  SeriesStore store;
  for (int64_t s = 0; s < 10; ++s) store.Add("v", "t", s, 1, static_cast<double>(s) * 2);
  store.MarkFiring(3);
  store.MarkFiring(7);
  ASSERT_EQ(store.series().size(), 1u);
  const auto& firings = store.series()[0].firings;
  ASSERT_EQ(firings.size(), 2u);
  EXPECT_EQ(firings[0].step, 3);
  EXPECT_EQ(firings[0].value, 6.0);
  EXPECT_EQ(firings[1].step, 7);
  EXPECT_EQ(firings[1].value, 14.0);
  const uint64_t version = store.version();
  store.MarkFiring(42);  // no point at that step
  for (int64_t s = 10; s < 10 + static_cast<int64_t>(SeriesStore::kRecentPoints); ++s) store.Add("v", "t", s, 1, 1.0);
  store.MarkFiring(9);  // beyond the last kRecentPoints
  EXPECT_EQ(store.series()[0].firings.size(), 2u);
  EXPECT_GT(store.version(), version);  // (the points)
  store.MarkFiring(10 + static_cast<int64_t>(SeriesStore::kRecentPoints) - 1);
  EXPECT_EQ(store.series()[0].firings.size(), 3u);
}

// Points land in their own series whatever the order of publication (Add tries the series after
// the last one first): the usual order, another order, a new series in the middle, the same name
// for two tensors, and names beyond the kept length that differ only at their end.
TEST(SeriesStore, PointsFindTheirSeriesInAnyOrder) {
  SeriesStore store;
  const std::string long_a = std::string(SeriesStore::kMaxTextBytes, 'x') + "a";
  const std::string long_b = std::string(SeriesStore::kMaxTextBytes, 'x') + "b";
  const std::vector<std::vector<std::pair<std::string, std::string>>> orders = {
      {{"v", "t1"}, {"v", "t2"}, {"w", ""}},
      {{"v", "t1"}, {"v", "t2"}, {"w", ""}},
      {{"w", ""}, {"v", "t2"}, {"v", "t1"}},
      {{"v", "t1"}, {"u", "new"}, {"v", "t2"}, {"w", ""}},
      {{long_a, ""}, {long_b, ""}, {long_a, ""}, {long_b, ""}},
  };
  std::map<std::pair<std::string, std::string>, std::vector<double>> expected;
  for (size_t step = 0; step < orders.size(); ++step) {
    for (const auto& [name, tensor] : orders[step]) {
      const double value = static_cast<double>(expected[{name, tensor}].size()) + 100 * static_cast<double>(step);
      expected[{name, tensor}].push_back(value);
      store.Add(name, tensor, static_cast<int64_t>(step), 1, value);
    }
  }
  ASSERT_EQ(store.series().size(), 6u);
  // The two long names are two series (kept truncated to the same text): in order of creation.
  std::vector<std::vector<double>> long_values;
  for (const SeriesStore::Series& series : store.series()) {
    std::vector<double> values;
    for (const SeriesStore::Bucket& b : series.buckets) {
      for (int64_t i = 0; i < b.count; ++i) values.push_back(b.count == 1 ? b.first_value : b.sum / b.count);
    }
    if (series.name.size() == SeriesStore::kMaxTextBytes) {
      long_values.push_back(values);
      continue;
    }
    EXPECT_EQ(values, (expected[{series.name, series.tensor}])) << series.name << " " << series.tensor;
  }
  EXPECT_EQ(long_values, (std::vector<std::vector<double>>{expected[{long_a, ""}], expected[{long_b, ""}]}));
}

TEST(SeriesStore, LongSeriesAreBoundedAndKeepTheirExtremesAndFirings) {
  SeriesStore store;
  constexpr int64_t kSteps = 100000;
  for (int64_t s = 0; s < kSteps; ++s) {
    // A smooth series with one spike and one dip, and a firing at the spike.
    const double v = s == 54321 ? 1000.0 : s == 777 ? -1000.0 : std::sin(static_cast<double>(s) / 1000);
    store.Add("v", "", s, s % 10 == 0 ? 2 : 1, v);
    if (s == 54321) store.MarkFiring(s);
  }
  const SeriesStore::Series& series = store.series()[0];
  EXPECT_LE(series.buckets.size(), SeriesStore::kMaxBuckets);
  EXPECT_GE(series.buckets.size(), SeriesStore::kMaxBuckets / 2);
  EXPECT_EQ(series.total_points, kSteps);
  double lowest = 0, highest = 0;
  int64_t count = 0, previous_last = -1;
  for (const auto& b : series.buckets) {
    lowest = std::min(lowest, b.min);
    highest = std::max(highest, b.max);
    count += b.count;
    EXPECT_GT(b.first_step, previous_last);  // buckets cover the steps in order, without overlap
    previous_last = b.last_step;
  }
  EXPECT_EQ(lowest, -1000.0);
  EXPECT_EQ(highest, 1000.0);
  EXPECT_EQ(count, kSteps);
  EXPECT_EQ(previous_last, kSteps - 1);
  ASSERT_EQ(series.firings.size(), 1u);
  EXPECT_EQ(series.firings[0].step, 54321);
  EXPECT_EQ(series.firings[0].value, 1000.0);
}

TEST(SeriesStore, NonFiniteValuesAreKeptAndLeftOutOfTheExtremes) {
  SeriesStore store;
  store.Add("v", "", 0, 0, std::nan(""));
  store.Add("v", "", 1, 0, HUGE_VAL);
  store.Add("v", "", 2, 0, 3.0);
  const nlohmann::json doc = nlohmann::json::parse(store.ToJson("r", "Rule"));
  const auto& s = doc["series"][0];
  EXPECT_EQ(s["value"], nlohmann::json::parse(R"(["nan", "inf", 3.0])"));
  EXPECT_EQ(s["mode"], nlohmann::json::parse("[null, null, null]"));
  // One point per bucket: the columns are copied (ToJson), the same as formatted.
  EXPECT_EQ(s["min"], s["value"]);
  EXPECT_EQ(s["max"], s["value"]);
  EXPECT_EQ(s["last_step"], nlohmann::json::parse("[0, 1, 2]"));
}

// Buckets of several points: last_step, min and max are their own (not copies of step and value).
TEST(SeriesStore, MergedBucketsKeepTheirOwnColumnsInJson) {
  SeriesStore store;
  for (int64_t step = 0; step <= static_cast<int64_t>(SeriesStore::kMaxBuckets); ++step) {
    store.Add("v", "", step, 1, step % 2 == 0 ? -1.0 * static_cast<double>(step) : static_cast<double>(step));
  }
  const nlohmann::json doc = nlohmann::json::parse(store.ToJson("r", "Rule"));
  const auto& s = doc["series"][0];
  ASSERT_EQ(s["count"][0], 2);
  EXPECT_EQ(s["step"][0], 0);
  EXPECT_EQ(s["last_step"][0], 1);
  EXPECT_EQ(s["min"][0], 0.0);  // -0 and 1
  EXPECT_EQ(s["max"][0], 1.0);
  EXPECT_EQ(s["value"][0], 0.5);
  EXPECT_EQ(s["step"][1], 2);
  EXPECT_EQ(s["last_step"][1], 3);
  EXPECT_EQ(s["min"][1], -2.0);
  EXPECT_EQ(s["max"][1], 3.0);
}

TEST(SeriesStore, TooManySeriesAreCountedNotKept) {
  SeriesStore store;
  EXPECT_FALSE(store.full());
  // Every series at three steps: a dropped series is counted once, not once per point.
  for (int64_t step = 0; step < 3; ++step) {
    for (size_t i = 0; i < SeriesStore::kMaxSeries + 5; ++i) store.Add("v", std::to_string(i), step, 1, 1.0);
  }
  EXPECT_EQ(store.series().size(), SeriesStore::kMaxSeries);
  EXPECT_EQ(store.dropped_series(), 5);
  EXPECT_TRUE(store.full());
  EXPECT_EQ(store.Find("v", std::to_string(SeriesStore::kMaxSeries)), SeriesStore::kNotFound);
  EXPECT_EQ(store.series().back().total_points, 3);
}

// A document of at least kParallelBuckets buckets is formatted in parts at once: the same
// document, every series in order, whole; its pieces (ToJsonPieces, what the runner writes) are
// that text, and a small document is one piece.
TEST(SeriesStore, ALargeDocumentFormattedInPartsKeepsEverySeriesInOrder) {
  SeriesStore store;
  const int series = 64, points = static_cast<int>(SeriesStore::kMaxBuckets);
  static_assert(64 * SeriesStore::kMaxBuckets >= SeriesStore::kParallelBuckets);
  for (int step = 0; step < points; ++step) {
    for (int i = 0; i < series; ++i) store.Add("v", "t" + std::to_string(i), step, 1, i * 1000.0 + step + 0.25);
  }
  const std::string text = store.ToJson("r", "Rule");
  const nlohmann::json doc = nlohmann::json::parse(text);
  ASSERT_EQ(doc["series"].size(), static_cast<size_t>(series));
  for (int i = 0; i < series; ++i) {
    const auto& s = doc["series"][static_cast<size_t>(i)];
    ASSERT_EQ(s["tensor"], "t" + std::to_string(i));
    ASSERT_EQ(s["value"].size(), static_cast<size_t>(points));
    for (int step = 0; step < points; step += 97) {
      EXPECT_EQ(s["step"][static_cast<size_t>(step)], step);
      EXPECT_EQ(s["value"][static_cast<size_t>(step)], i * 1000.0 + step + 0.25);
    }
  }
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find(",,"), std::string::npos);
  const std::vector<std::string> pieces = store.ToJsonPieces("r", "Rule");
  EXPECT_EQ(pieces.size(), 1 + SeriesStore::kParts);
  std::string joined;
  for (const std::string& piece : pieces) joined += piece;
  EXPECT_EQ(joined, text);
  SeriesStore small;
  small.Add("v", "t", 0, 1, 0.5);
  EXPECT_EQ(small.ToJsonPieces("r", "Rule"), std::vector<std::string>{small.ToJson("r", "Rule")});
}

TEST(SeriesStore, JsonDocument) {
  SeriesStore store;
  store.SetThreshold("v", 0.5, 1);
  store.SetThreshold("v", -0.5, 2);
  store.AddRecommendation("Do \"this\".");
  store.Add("v", "w/0", 4, 1, 0.75);
  store.Add("v", "w/0", 5, 2, 0.25);
  store.MarkFiring(5);
  const uint64_t version = store.version();
  store.MarkFiring(5);  // already kept
  EXPECT_EQ(store.version(), version);
  const nlohmann::json doc = nlohmann::json::parse(store.ToJson("my-rule", "VanishingGradient"));
  EXPECT_EQ(doc["format"], "litmus-series/1");
  EXPECT_EQ(doc["rule"], "my-rule");
  EXPECT_EQ(doc["rule_class"], "VanishingGradient");
  EXPECT_EQ(doc["thresholds"]["v"], nlohmann::json::parse(
                                        R"([{"value": 0.5, "fires_when": "above"}, {"value": -0.5, "fires_when": "below"}])"));
  EXPECT_THAT(doc["recommendations"], ElementsAre("Do \"this\"."));
  const auto& s = doc["series"][0];
  EXPECT_EQ(s["name"], "v");
  EXPECT_EQ(s["tensor"], "w/0");
  EXPECT_EQ(s["step"], nlohmann::json::parse("[4, 5]"));
  EXPECT_EQ(s["mode"], nlohmann::json::parse(R"(["TRAIN", "EVAL"])"));
  EXPECT_EQ(s["value"], nlohmann::json::parse("[0.75, 0.25]"));
  EXPECT_EQ(s["min"], s["value"]);
  EXPECT_EQ(s["count"], nlohmann::json::parse("[1, 1]"));
  EXPECT_EQ(s["firings"], nlohmann::json::parse(R"({"step": [5], "mode": ["EVAL"], "value": [0.25]})"));
}

// Find + AddAt (isolated workers' interned names) keep exactly what Add keeps: the same buckets,
// merges, non-finite values, firings and document, over enough points to compact twice.
TEST(SeriesStore, AddAtKeepsWhatAddKeeps) {
  SeriesStore by_name;
  SeriesStore by_index;
  const std::string long_name(SeriesStore::kMaxTextBytes + 10, 'n');
  const std::vector<std::pair<std::string, std::string>> names = {
      {"a", "t1"}, {"a", ""}, {std::string("b\0c", 3), "t"}, {long_name, "t"}};
  std::vector<uint32_t> index(names.size(), SeriesStore::kNotFound);
  for (int64_t step = 0; step < 3000; ++step) {
    for (size_t i = 0; i < names.size(); ++i) {
      const double value = step % 97 == 0 ? std::nan("") : step % 89 == 0 ? -INFINITY : std::sin(step * 0.01 + i);
      by_name.Add(names[i].first, names[i].second, step, 1 + step % 2, value);
      if (index[i] == SeriesStore::kNotFound) {
        EXPECT_EQ(by_index.Find(names[i].first, names[i].second), SeriesStore::kNotFound);
        by_index.Add(names[i].first, names[i].second, step, 1 + step % 2, value);
        index[i] = by_index.Find(names[i].first, names[i].second);
        ASSERT_NE(index[i], SeriesStore::kNotFound);
      } else {
        by_index.AddAt(index[i], step, 1 + step % 2, value);
      }
    }
    if (step % 500 == 0) {
      by_name.MarkFiring(step);
      by_index.MarkFiring(step);
    }
  }
  EXPECT_EQ(by_index.ToJson("r", "C"), by_name.ToJson("r", "C"));
  EXPECT_EQ(by_index.series()[0].points_per_bucket, 4);
  // The long name is found by its whole text, not the kept (truncated) one.
  EXPECT_EQ(by_index.Find(long_name.substr(0, SeriesStore::kMaxTextBytes), "t"), SeriesStore::kNotFound);
  // An index outside the store and a disabled store keep nothing.
  by_index.AddAt(99, 1, 1, 1.0);
  EXPECT_EQ(by_index.series().size(), names.size());
  by_index.Disable();
  EXPECT_EQ(by_index.Find("a", "t1"), SeriesStore::kNotFound);
  by_index.AddAt(0, 1, 1, 1.0);
  EXPECT_TRUE(by_index.series().empty());
}

// Names are compared whole, NUL bytes included: ("a\0", "b") and ("a", "\0b") are two series.
TEST(SeriesStore, NamesWithNulBytesNeverCollide) {
  SeriesStore store;
  const std::string a_nul("a\0", 2);
  const std::string nul_b("\0b", 2);
  store.Add(a_nul, "b", 1, 1, 1.0);
  store.Add("a", nul_b, 1, 1, 2.0);
  store.Add("a", nul_b, 2, 1, 3.0);  // (found by the hash after a miss of the next-series guess)
  store.Add(a_nul, "b", 2, 1, 4.0);
  ASSERT_EQ(store.series().size(), 2u);
  EXPECT_EQ(store.series()[0].name, a_nul);
  EXPECT_EQ(store.series()[0].tensor, "b");
  EXPECT_EQ(store.series()[0].total_points, 2);
  EXPECT_EQ(store.series()[1].tensor, nul_b);
  EXPECT_EQ(store.Find("a", nul_b), 1u);
  EXPECT_EQ(store.Find(a_nul, "b"), 0u);
}

TEST(SeriesStore, NewPointsOnlyWhenAsked) {
  SeriesStore store;
  store.Add("v", "", 0, 1, 1.0);
  EXPECT_TRUE(store.TakeNewPoints().empty());
  store.set_keep_new_points(true);
  store.Add("v", "", 1, 1, 2.0);
  store.Add("u", "", 1, 1, 3.0);
  const auto points = store.TakeNewPoints();
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].series, 0u);
  EXPECT_EQ(points[1].series, 1u);
  EXPECT_EQ(points[1].value, 3.0);
  EXPECT_TRUE(store.TakeNewPoints().empty());
}

}  // namespace
}  // namespace litmus
