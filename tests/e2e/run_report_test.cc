// End-to-end: the HTML report (docs/report.md "The HTML report"). The real `litmus run --report`
// evaluates four rules on a simulated_training trial whose gradients explode (rules fire, EVAL
// steps in between); then `litmus report DIR` makes the same page; the summary's rows are the
// verdict table the run printed. The page is opened in headless Chromium (Debian `chromium`): no
// console message, a section per rule, and each rule chart's data read back from its Dygraph
// object (numRows/getValue, written into the DOM by a script the test appends) equals the series
// in the job's rule-reports/<rule>.series.json. A tampered copy of the page must fail the same
// comparison and the console check, so the check can fail. Skipped only without chromium.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "job_files.h"
#include "run/verdict_table.h"
#include "run_test_support.h"
#include "support/report_specs.h"
#include "support/series_json.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::Json;
using testing::kFastEnd;
using testing::ProcessResult;
using testing::ReadJson;
using testing::RunProcess;
using testing::SeriesNumber;
using testing::TempDir;

const std::vector<std::string> kRules = {"VanishingGradient", "ExplodingTensor", "LossNotDecreasing", "Overtraining"};

// One job, run once for the suite: trial, output folder, and what `litmus run` printed.
class RunReport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const fs::path trial = dir_->path() / "trial";
    const ProcessResult written =
        RunProcess({LITMUS_SIMULATED_TRAINING, trial.string(), "--scenario", "exploding", "--steps", "40"});
    ASSERT_EQ(written.exit_code, 0) << written.err;
    std::string yaml = "trial: " + trial.string() + "\nrules:\n";
    for (const std::string& rule : kRules) yaml += "  - rule: " + rule + "\n";
    dir_->WriteFile("job.yaml", yaml);
    run_ = new ProcessResult(RunProcess({testing::LitmusBinary(), "run", "--config", (dir_->path() / "job.yaml").string(),
                                         "--output-dir", Out().string(), "--poll-interval-ms", "20", "--keep-going",
                                         "--report"},
                                        kFastEnd, std::chrono::seconds(300)));
  }
  static void TearDownTestSuite() {
    delete run_;
    delete dir_;
  }
  static fs::path Out() { return dir_->path() / "out"; }
  static fs::path Report() { return Out() / "report.html"; }

  static TempDir* dir_;
  static ProcessResult* run_;
};
TempDir* RunReport::dir_ = nullptr;
ProcessResult* RunReport::run_ = nullptr;

// The chart specs a page carries, their rows decoded (support/report_specs.h); null if none.
Json Specs(const std::string& page) { return testing::PageChartSpecs(page); }

TEST_F(RunReport, RunWritesTheReportAndItsSummaryIsTheVerdictTable) {
  ASSERT_EQ(run_->exit_code, 1) << run_->err;
  ASSERT_TRUE(fs::exists(Report())) << run_->err;
  EXPECT_FALSE(fs::exists(Report().string() + ".tmp"));
  EXPECT_THAT(run_->err, HasSubstr("HTML report: " + Report().string()));
  // The rows the page's summary is made of, read back from the files, print as the run's table.
  report::JobFilesReader reader(Env::Default(), Out().string());
  StatusOr<report::JobFiles> job = reader.Read();
  LITMUS_ASSERT_OK(job.status());
  EXPECT_EQ(FormatVerdictTable(report::VerdictRows(*job)), run_->out);
  // ...and the page shows them, one row per rule.
  const std::string page = testing::ReadWholeFile(Report());
  for (const std::string& rule : kRules) EXPECT_THAT(page, HasSubstr("<tr class=\"verdict\" data-rule=\"" + rule + "\">"));
  EXPECT_THAT(page, HasSubstr("<h2 id=\"losses\">"));
  EXPECT_THAT(page, Not(HasSubstr("src=\"http")));  // nothing fetched when viewed
}

TEST_F(RunReport, ReportCommandMakesTheSamePage) {
  const fs::path other = dir_->path() / "again.html";
  const ProcessResult made = RunProcess({testing::LitmusBinary(), "report", Out().string(), "--output", other.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(made.out, other.string() + "\n");
  // The same charts with the same data (the pages differ in the time they were written).
  const Json run_specs = Specs(testing::ReadWholeFile(Report()));
  ASSERT_FALSE(run_specs.empty());
  EXPECT_EQ(Specs(testing::ReadWholeFile(other)), run_specs);
  // The whole page is the same, though the run took the series from its memory and read the
  // trial through its own Trial, and `litmus report` reads the series files and opens the trial.
  const std::regex written("written [0-9TZ:-]+ by");
  EXPECT_EQ(std::regex_replace(testing::ReadWholeFile(other), written, "written"),
            std::regex_replace(testing::ReadWholeFile(Report()), written, "written"));
}

// The watched tensors' statistics (mean, min/max, NaN and inf counts) that `litmus run` takes
// from the values its prefetch read for the rules (Trial::CollectStatistics) make the same charts
// as `litmus report`, which reads every value itself: with isolated rules (the default, whose
// values the runner reads and shares) and in-process ones (--isolation none). And the run read
// none of those values a second time: the debug log counts both.
TEST_F(RunReport, WatchedTensorStatisticsFromTheRunnersReadsAreThoseTheReportReads) {
  const Json reported = Specs(testing::ReadWholeFile(Report()));
  ASSERT_FALSE(reported.empty());
  // (The page's statistics charts: those the comparison is about.)
  ASSERT_THAT(reported.dump(), HasSubstr("NaN count"));
  const fs::path other = dir_->path() / "again-from-the-trial.html";
  ASSERT_EQ(RunProcess({testing::LitmusBinary(), "report", Out().string(), "--output", other.string()}).exit_code, 0);
  const Json from_trial = Specs(testing::ReadWholeFile(other));
  for (const std::string isolation : {"process", "none"}) {
    SCOPED_TRACE("--isolation " + isolation);
    const fs::path out = dir_->path() / ("out-" + isolation);
    const ProcessResult run =
        RunProcess({testing::LitmusBinary(), "run", "--config", (dir_->path() / "job.yaml").string(), "--output-dir",
                    out.string(), "--poll-interval-ms", "20", "--keep-going", "--report", "--isolation", isolation,
                    "--logging-level", "debug"},
                   kFastEnd, std::chrono::seconds(300));
    ASSERT_EQ(run.exit_code, 1) << run.err;
    EXPECT_EQ(Specs(testing::ReadWholeFile(out / "report.html")), from_trial);
    const std::regex counted("watched tensors' statistics: ([0-9]+) from the runner's reads, ([0-9]+) values read again");
    std::smatch last;
    for (auto it = std::sregex_iterator(run.err.begin(), run.err.end(), counted); it != std::sregex_iterator(); ++it) last = *it;
    ASSERT_FALSE(last.empty()) << run.err;
    const int64_t collected = std::stoll(last[1]), read_again = std::stoll(last[2]);
    EXPECT_GT(collected, 0);
    EXPECT_EQ(read_again, 0) << last[0];
  }
}

TEST_F(RunReport, ReportCommandRefusesWhatIsNotAJobFolder) {
  const ProcessResult missing = RunProcess({testing::LitmusBinary(), "report", (dir_->path() / "nowhere").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "litmus: error: not a job output folder (no status.json): " + (dir_->path() / "nowhere").string() + "\n");
  TempDir bad;
  bad.WriteFile("status.json", "{\"rules\": [");
  const ProcessResult unreadable = RunProcess({testing::LitmusBinary(), "report", bad.str()});
  EXPECT_EQ(unreadable.exit_code, 2);
  EXPECT_EQ(unreadable.err, "litmus: error: cannot read " + bad.str() + "/status.json: not valid JSON\n");
}

// ---- the page in a browser ---------------------------------------------------------------------

std::string FindChromium() {
  if (const char* given = std::getenv("LITMUS_CHROMIUM")) return given;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');) {
    for (const char* name : {"chromium", "chromium-browser"}) {
      const fs::path candidate = fs::path(d) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return "";
}

// Appended to the page: what its Dygraph objects hold, as JSON in <pre id="litmus-readback">.
const char* const kReadback = R"(<script>
(function () {
  var out = {drawn: document.body.getAttribute('data-charts-drawn'), sections: [], charts: []};
  document.querySelectorAll('section.rule').forEach(function (s) { out.sections.push(s.getAttribute('data-rule')); });
  (window.litmusCharts || []).forEach(function (c) {
    var g = c.graph, rows = [];
    for (var r = 0; r < g.numRows(); ++r) {
      var row = [];
      for (var k = 0; k < g.numColumns(); ++k) row.push(g.getValue(r, k));
      rows.push(row);
    }
    out.charts.push({rule: c.spec.rule || null, kind: c.spec.kind || null, columns: c.spec.columns, rows: rows,
                     canvas: c.graph.canvas_ ? c.graph.canvas_.width : 0});
  });
  var pre = document.createElement('pre');
  pre.id = 'litmus-readback';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
)";

struct Browsed {
  Json readback;                  // null if the page did not produce it
  std::vector<std::string> console;  // console messages (errors, warnings, logs, exceptions)
  std::string err;
};

// Opens `page` in headless Chromium with the readback script appended and returns what it wrote.
Browsed Browse(const std::string& chromium, const fs::path& page, const std::string& extra_script = "") {
  TempDir profile;
  std::string html = testing::ReadWholeFile(page);
  const size_t end = html.rfind("</body>");
  html.insert(end, extra_script + kReadback);
  const fs::path copy = profile.path() / "page.html";
  std::ofstream(copy) << html;
  // A generous virtual time budget: the page draws synchronously, but a loaded 2-core machine is slow.
  const ProcessResult r = RunProcess(
      {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
       "--user-data-dir=" + (profile.path() / "profile").string(), "--enable-logging=stderr", "--v=0",
       "--virtual-time-budget=60000", "--window-size=1280,2000", "--dump-dom", "file://" + copy.string()},
      {{"HOME", profile.str()}}, std::chrono::seconds(240));
  Browsed b;
  b.err = r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& line : testing::LinesStartingWith(r.err, "[")) {
    if (line.find(":CONSOLE") != std::string::npos) b.console.push_back(line);
  }
  const std::string open = "<pre id=\"litmus-readback\">";
  const size_t at = r.out.find(open);
  if (at == std::string::npos) return b;
  std::string text = r.out.substr(at + open.size(), r.out.find("</pre>", at) - at - open.size());
  for (const auto& [entity, c] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&nbsp;", "\xc2\xa0"}, {"&amp;", "&"}}) {
    for (size_t p = text.find(entity); p != std::string::npos; p = text.find(entity, p + c.size())) text.replace(p, entity.size(), c);
  }
  b.readback = Json::parse(text);
  return b;
}

// Differences between each rule chart read back from the page and the series of the job's files
// (every finite bucket value at its step; non-finite ones are gaps); also every series of every
// series file must be in a chart.
std::vector<std::string> CompareWithSeriesFiles(const Json& readback, const fs::path& out) {
  std::vector<std::string> diffs;
  std::set<std::pair<std::string, std::pair<std::string, std::string>>> shown;
  for (const Json& chart : readback["charts"]) {
    if (chart["rule"].is_null()) continue;
    const std::string rule = chart["rule"];
    const Json doc = ReadJson(out / "rule-reports" / (rule + ".series.json"));
    std::set<int64_t> all_steps;
    for (size_t k = 0; k < chart["columns"].size(); ++k) {
      const std::string name = chart["columns"][k]["name"], tensor = chart["columns"][k]["tensor"];
      shown.insert({rule, {name, tensor}});
      std::vector<std::pair<int64_t, double>> expected;
      for (const auto& [step, value] : testing::SeriesPoints(doc, name, tensor)) {
        all_steps.insert(step);
        if (std::isfinite(value)) expected.emplace_back(step, value);
      }
      std::vector<std::pair<int64_t, double>> got;
      for (const Json& row : chart["rows"]) {
        const Json& cell = row[k + 1];
        if (cell.is_array()) got.emplace_back(row[0].get<int64_t>(), cell[1].get<double>());
      }
      if (got != expected) {
        diffs.push_back(rule + " / " + name + " / " + tensor + ": " + std::to_string(got.size()) + " points drawn, " +
                        std::to_string(expected.size()) + " in the series file, or different values");
      }
    }
    if (chart["rows"].size() != all_steps.size()) {
      diffs.push_back(rule + ": " + std::to_string(chart["rows"].size()) + " rows, " + std::to_string(all_steps.size()) +
                      " steps in the series file");
    }
  }
  for (const std::string& rule : kRules) {
    const fs::path file = out / "rule-reports" / (rule + ".series.json");
    if (!fs::exists(file)) continue;
    const Json doc = ReadJson(file);
    for (const Json& s : doc["series"]) {
      if (!shown.contains({rule, {s["name"], s["tensor"]}})) diffs.push_back(rule + ": series not drawn: " + s["name"].get<std::string>());
    }
  }
  return diffs;
}

TEST_F(RunReport, OpensInChromiumAndItsChartsHoldTheSeriesFilesData) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium not found (Debian package chromium; scripts/install-deps.sh)";
  ASSERT_TRUE(fs::exists(Report())) << run_->err;
  const Browsed page = Browse(chromium, Report());
  EXPECT_THAT(page.console, ::testing::IsEmpty()) << page.err;
  ASSERT_TRUE(page.readback.is_object()) << "no readback in the page's DOM; chromium said:\n" << page.err;
  // A section per rule of status.json, in its order.
  std::vector<std::string> rules;
  const Json status = ReadJson(Out() / "status.json");
  for (const Json& r : status["rules"]) rules.push_back(r["RuleConfigurationName"]);
  EXPECT_EQ(page.readback["sections"].get<std::vector<std::string>>(), rules);
  // Every chart was drawn, rule charts with the series files' data, and the loss curves are there.
  size_t rule_charts = 0, loss_charts = 0;
  for (const Json& c : page.readback["charts"]) {
    EXPECT_GT(c["canvas"].get<int>(), 0);
    EXPECT_GT(c["rows"].size(), 0u);
    if (!c["rule"].is_null()) ++rule_charts;
    if (c["kind"] == "loss") ++loss_charts;
  }
  EXPECT_EQ(page.readback["drawn"], std::to_string(page.readback["charts"].size()));
  EXPECT_GE(rule_charts, 3u);  // VanishingGradient, ExplodingTensor (NaN count, inf count), ...
  EXPECT_EQ(loss_charts, 1u);
  EXPECT_THAT(CompareWithSeriesFiles(page.readback, Out()), ::testing::IsEmpty());

  // The same checks on a tampered copy (one value of ExplodingTensor's data changed, a console
  // error) must fail: the comparison and the console check see what they claim to see.
  std::string html = testing::ReadWholeFile(Report());
  const Json specs = Specs(html);
  const Json* exploding = nullptr;  // (the first spec of the rule)
  for (const Json& s : specs) {
    if (s.value("rule", "") == "ExplodingTensor") {
      exploding = &s;
      break;
    }
  }
  ASSERT_NE(exploding, nullptr);
  const size_t spec = html.find("\"rule\":\"ExplodingTensor\"");
  ASSERT_NE(spec, std::string::npos);
  const size_t data = html.rfind("\"data\":\"", spec);  // (keys are sorted: data comes before rule)
  ASSERT_NE(data, std::string::npos);
  const size_t begin = data + 8, end = html.find('"', begin);
  ASSERT_LT(end, spec);
  // The value of the first cell that is not a gap, plus 1.
  std::vector<double> values = testing::ChartData({{"data", html.substr(begin, end - begin)}});
  const Json& rows = (*exploding)["rows"];
  const size_t n = rows.size();
  bool changed = false;
  for (size_t r = 0; r < n && !changed; ++r) {
    for (size_t c = 0; c + 1 < rows[r].size() && !changed; ++c) {
      if (rows[r][c + 1].is_null()) continue;
      values.at(n + 3 * (c * n + r) + 1) += 1;
      changed = true;
    }
  }
  ASSERT_TRUE(changed);
  html.replace(begin, end - begin, testing::EncodeChartData(values));
  const fs::path tampered = dir_->path() / "tampered.html";
  std::ofstream(tampered) << html;
  const Browsed bad = Browse(chromium, tampered, "<script>console.error('control');</script>");
  EXPECT_FALSE(bad.console.empty());
  ASSERT_TRUE(bad.readback.is_object()) << bad.err;
  EXPECT_FALSE(CompareWithSeriesFiles(bad.readback, Out()).empty());
}

}  // namespace
}  // namespace litmus
