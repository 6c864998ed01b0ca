// SeriesFiles: a series document is written when it changed, at most every kInterval while its
// rule runs, and all documents together take ~1/kBudgetFactor of the job's time however many
// rules publish (timed by a test clock that advances at every reading).
#include "run/series_files.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "plugin/series_store.h"
#include "run/job_report.h"

namespace litmus {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class SeriesFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("litmus-series-files-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    JobReporter::Paths paths;
    paths.output_dir = dir_.string();
    auto reporter = JobReporter::Create(std::move(paths));
    ASSERT_TRUE(reporter.ok()) << reporter.status().message();
    reporter_ = *std::move(reporter);
  }
  void TearDown() override {
    reporter_.reset();
    fs::remove_all(dir_);
  }
  // A clock that moves `tick` forward each time it is read (a write reads it twice: its cost is
  // one tick).
  SeriesFiles::Clock TickingClock(milliseconds tick) {
    return [this, tick] {
      now_ += tick;
      return now_;
    };
  }
  fs::path SeriesFile(const std::string& name) const { return dir_ / "rule-reports" / (name + ".series.json"); }

  fs::path dir_;
  std::unique_ptr<JobReporter> reporter_;
  Clock::time_point now_{Clock::duration{1}};
};

TEST_F(SeriesFilesTest, WritesChangesOnlyAndAtMostEveryIntervalUnlessTheRuleEnded) {
  SeriesFiles files(TickingClock(milliseconds(1)));
  SeriesStore store;
  files.Write(*reporter_, "r", "Rule", store, false);  // empty: nothing
  EXPECT_EQ(files.writes(), 0u);
  EXPECT_FALSE(fs::exists(SeriesFile("r")));
  store.Add("v", "t", 0, 1, 1.0);
  files.Write(*reporter_, "r", "Rule", store, false);  // the first write is at once
  EXPECT_EQ(files.writes(), 1u);
  EXPECT_TRUE(fs::exists(SeriesFile("r")));
  files.Write(*reporter_, "r", "Rule", store, true);  // unchanged: nothing, even forced
  EXPECT_EQ(files.writes(), 1u);
  store.Add("v", "t", 1, 1, 2.0);
  files.Write(*reporter_, "r", "Rule", store, false);  // changed, inside the interval
  EXPECT_EQ(files.writes(), 1u);
  files.Write(*reporter_, "r", "Rule", store, true);  // the rule ended: written (in the background)
  EXPECT_EQ(files.writes(), 2u);
  files.Wait();
  {
    std::ifstream in(SeriesFile("r"));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"total_points\":2"), std::string::npos) << text;
  }
  store.Add("v", "t", 2, 1, 3.0);
  now_ += SeriesFiles::kInterval;
  files.Write(*reporter_, "r", "Rule", store, false);  // changed, the interval past
  EXPECT_EQ(files.writes(), 3u);
}

// Five rules publish at every step; each write costs 100 ms (more than kInterval / kBudgetFactor
// for one document, so the budget, not kInterval, sets the pace). The documents together keep to
// the budget, and every document keeps being rewritten: none starves.
TEST_F(SeriesFilesTest, AllDocumentsShareOneBudget) {
  constexpr milliseconds kTick{100};
  SeriesFiles files(TickingClock(kTick));
  const std::vector<std::string> rules = {"a", "b", "c", "d", "e"};
  std::vector<SeriesStore> stores(rules.size());
  std::vector<uint64_t> writes_of(rules.size(), 0);
  const Clock::time_point start = now_;
  for (int64_t step = 0; step < 5000; ++step) {
    for (size_t i = 0; i < rules.size(); ++i) {
      stores[i].Add("v", "t", step, 1, static_cast<double>(step));
      const uint64_t before = files.writes();
      files.Write(*reporter_, rules[i], "Rule", stores[i], false);
      writes_of[i] += files.writes() - before;
    }
  }
  const double elapsed = std::chrono::duration<double>(now_ - start).count();
  const double writing = static_cast<double>(files.writes()) * std::chrono::duration<double>(kTick).count();
  // Each document waits 50 x 0.5 s = 25 s: 5 writes of 0.1 s per 25 s, i.e. 2 % of the time
  // (each document's own cost alone would have allowed one write per 5 s each: 10 %).
  EXPECT_LE(writing, elapsed / SeriesFiles::kBudgetFactor * 1.1 + 0.5) << files.writes() << " writes in " << elapsed;
  EXPECT_GE(writing, elapsed / SeriesFiles::kBudgetFactor * 0.8) << files.writes() << " writes in " << elapsed;
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_GE(static_cast<double>(writes_of[i]), elapsed / 25.0 * 0.8) << rules[i];
  }
}

}  // namespace
}  // namespace litmus
