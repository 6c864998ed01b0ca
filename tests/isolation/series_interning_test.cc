// What rules publish crosses the worker boundary unchanged although the worker names each
// (series, tensor) pair once and then sends its id (isolation/protocol.h "Series points"): many
// names with odd bytes, more pairs than the store keeps and more than the worker interns, a name
// the runner refuses, a changing order (tests/isolation/series_rules.cc); and a worker that
// crashes with a batch of points unsent loses none of the findings before it.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "native_faults.h"
#include "support/run_process.h"
#include "support/series_json.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

Json ReadJson(const fs::path& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

struct Job {
  int exit_code = -1;
  std::string err;
  Json status;
  Json series;  // rule-reports/<rule>.series.json
  std::vector<Json> events;
};

Job RunJob(const fs::path& out, const std::string& rule, const std::string& param, const std::string& isolation) {
  const testing::ProcessResult result = testing::RunProcess(
      {testing::LitmusBinary(), "run", "--trial", testing::FixturePath("pt_exploding").string(), "--plugin",
       LITMUS_SERIES_RULES_PLUGIN, "--rule", rule, "--param", param, "--isolation", isolation, "--keep-going",
       "--output-dir", out.string(), "--logging-level", "error"},
      {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}}, std::chrono::seconds(300));
  Job job;
  job.exit_code = result.exit_code;
  job.err = result.err;
  job.status = ReadJson(out / "status.json");
  if (fs::exists(out / "rule-reports" / (rule + ".series.json"))) {
    job.series = ReadJson(out / "rule-reports" / (rule + ".series.json"));
  }
  std::ifstream events(out / "events.jsonl");
  for (std::string line; std::getline(events, line);) {
    Json event = Json::parse(line);
    event.erase("time");
    job.events.push_back(std::move(event));
  }
  return job;
}

void ExpectSameAsInProcess(const std::string& param) {
  testing::TempDir work;
  const Job isolated = RunJob(work.path() / "process", "ManySeries", param, "process");
  const Job in_process = RunJob(work.path() / "none", "ManySeries", param, "none");
  EXPECT_EQ(isolated.exit_code, 1) << isolated.err;  // IssuesFound
  EXPECT_EQ(isolated.exit_code, in_process.exit_code) << in_process.err;
  EXPECT_EQ(isolated.status["RuleEvaluationStatus"], in_process.status["RuleEvaluationStatus"]);
  EXPECT_EQ(isolated.events, in_process.events);
  ASSERT_TRUE(isolated.series.is_object());
  // Field by field first (a readable failure), then the whole document.
  ASSERT_EQ(isolated.series["series"].size(), in_process.series["series"].size());
  for (size_t i = 0; i < in_process.series["series"].size(); ++i) {
    EXPECT_EQ(isolated.series["series"][i], in_process.series["series"][i]) << "series " << i;
  }
  EXPECT_EQ(isolated.series["dropped_series"], in_process.series["dropped_series"]);
  EXPECT_EQ(isolated.series, in_process.series);
}

TEST(SeriesInterning, OddNamesCrossUnchanged) {
  ExpectSameAsInProcess("count=300");
}

TEST(SeriesInterning, OddNamesAreKeptAsPublished) {
  testing::TempDir work;
  const Job job = RunJob(work.path() / "process", "ManySeries", "count=300", "process");
  ASSERT_TRUE(job.series.is_object()) << job.err;
  // The store keeps 256 series (SeriesStore::kMaxSeries); the 44 others are counted, each once
  // (not once per step it was published at).
  EXPECT_EQ(job.series["series"].size(), 256u);
  EXPECT_EQ(job.series["dropped_series"].get<int64_t>(), 44);
  const Json* nul = testing::FindSeries(job.series, std::string("nul\0byte 1", 10), "layer_1/weight:0");
  ASSERT_NE(nul, nullptr);
  EXPECT_EQ((*nul)["total_points"], job.series["series"][0]["total_points"]);
  EXPECT_NE(testing::FindSeries(job.series, "quote\" newline\n backslash\\ 3", "layer_3/weight:0"), nullptr);
  EXPECT_NE(testing::FindSeries(job.series, "plain 0", ""), nullptr);
  // The refused name never became a series.
  EXPECT_EQ(testing::FindSeries(job.series, "", "refused"), nullptr);
}

// More pairs than the worker interns (isolation::kMaxSeriesIds = 65536): the rest travel with
// their names, and the job's files are still those of the in-process run.
TEST(SeriesInterning, MoreNamesThanIdsCrossUnchanged) {
  ExpectSameAsInProcess("count=70000");
}

TEST(SeriesInterning, CrashWithAnUnsentBatchKeepsEarlierFindings) {
  testing::TempDir work;
  const Job job = RunJob(work.path() / "process", "SeriesThenSegfault", "at_step=2", "process");
  EXPECT_EQ(job.status["RuleEvaluationStatus"], "Error") << job.status.dump();
  EXPECT_NE(job.status["StatusDetails"].get<std::string>().find("SIGSEGV"), std::string::npos)
      << job.status.dump();
  // The firing at the first step is in the job's events.
  bool fired = false;
  for (const Json& event : job.events) fired = fired || (event["event"] == "RuleEvaluationConditionMet" && event["step"] == 0);
  EXPECT_TRUE(fired) << "no RuleEvaluationConditionMet event at step 0";
  // The reports of the calls before the crash are kept, none of the crashed call's (its notes
  // ride with its reply, which never came); its log line, sent at once, is in litmus's log.
  const Json report = ReadJson(work.path() / "process" / "rule-reports" / "SeriesThenSegfault.json");
  EXPECT_EQ(report["Violations"], 2) << report.dump();
  EXPECT_EQ(report["Details"], Json::parse(R"({"step 0": 0, "step 1": 1})")) << report.dump();
  EXPECT_NE(job.err.find("about to crash at step 2"), std::string::npos) << job.err;
  // Every point of the calls before the crash is kept, none of the crashed call's.
  ASSERT_TRUE(job.series.is_object()) << job.err;
  ASSERT_EQ(job.series["series"].size(), 100u);
  for (const Json& s : job.series["series"]) {
    const std::vector<int64_t> steps = s["step"].get<std::vector<int64_t>>();
    ASSERT_FALSE(steps.empty());
    for (const int64_t step : steps) EXPECT_LT(step, 2) << s["tensor"];
    EXPECT_EQ(s["firings"]["step"].size(), 1u) << s["tensor"];
  }
}

}  // namespace
}  // namespace litmus
