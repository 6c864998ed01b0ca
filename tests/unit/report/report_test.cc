// The HTML report's generator on hand-made job folders: text escaped wherever it goes (HTML,
// <script> JSON), series bounded to kMaxChartPoints with their extremes kept, the job's files read
// (events.jsonl incrementally), the summary's rows, clear errors, and the atomic write.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "downsample.h"
#include "html_text.h"
#include "job_files.h"
#include "report_assets.h"
#include "report_generator.h"
#include "report_page.h"
#include "run/verdict_table.h"
#include "support/report_specs.h"
#include "support/temp_dir.h"

namespace litmus::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;
using testing::TempDir;

// A rule name with everything that must not reach the page raw.
const std::string kNasty = "x</script><script>alert(1)</script><!--&\"'";

// The chart specs a page carries, their rows decoded (support/report_specs.h).
Json Specs(const std::string& page) {
  Json specs = testing::PageChartSpecs(page);
  EXPECT_FALSE(specs.is_null()) << "no window.LITMUS_SPECS in the page";
  return specs;
}

// A job folder: status.json with `rules`, their reports, series files and events.
struct FakeJob {
  TempDir dir;
  Json status = {{"RuleEvaluationStatus", "IssuesFound"}, {"StatusDetails", "d"}, {"exit_code", 1},
                 {"LastModifiedTime", "2026-01-01T00:00:10.000Z"}, {"rules", Json::array()}};

  void AddRule(const std::string& name, const std::string& status, int64_t triggered, int64_t datapoints,
               double seconds, const Json& series_doc = nullptr) {
    status_rules().push_back({{"RuleConfigurationName", name}, {"rule", "SomeRule"}, {"RuleEvaluationStatus", status},
                              {"StatusDetails", "details of " + name}, {"Progress", {{"StepsEvaluated", datapoints}}}});
    dir.WriteFile("rule-reports/" + name + ".json",
                  Json({{"RuleTriggered", triggered}, {"Violations", 0}, {"Datapoints", datapoints},
                        {"RuleParameters", "threshold:1\n"}, {"Description", "checks " + name},
                        {"Seconds", seconds}}).dump());
    if (!series_doc.is_null()) dir.WriteFile("rule-reports/" + name + ".series.json", series_doc.dump());
  }
  Json& status_rules() { return status["rules"]; }
  void Write() { dir.WriteFile("status.json", status.dump()); }
  std::string Events(const std::vector<Json>& events) {
    std::string text;
    for (const Json& e : events) text += e.dump() + "\n";
    return text;
  }
};

Json Firing(const std::string& rule, int64_t step) {
  return {{"time", "2026-01-01T00:00:0" + std::to_string(step % 10) + ".000Z"}, {"event", "RuleEvaluationConditionMet"},
          {"rule", rule}, {"step", step}, {"message", "fired at " + std::to_string(step)}};
}

// A series document of one series with `n` one-point buckets (value i, a spike at `spike`).
Json SeriesDoc(const std::string& rule, const std::string& name, const std::string& tensor, int64_t n,
               int64_t spike = -1) {
  Json s = {{"name", name}, {"tensor", tensor}, {"total_points", n}, {"points_per_bucket", 1}};
  for (const char* k : {"step", "last_step", "mode", "value", "min", "max", "count"}) s[k] = Json::array();
  for (int64_t i = 0; i < n; ++i) {
    const Json v = i == spike ? Json(1e9) : Json(static_cast<double>(i % 7));
    s["step"].push_back(i);
    s["last_step"].push_back(i);
    s["mode"].push_back(i % 10 >= 8 ? "EVAL" : "TRAIN");
    s["value"].push_back(v);
    s["min"].push_back(v);
    s["max"].push_back(v);
    s["count"].push_back(1);
  }
  s["firings"] = {{"step", {3}}, {"mode", {"TRAIN"}}, {"value", {3.0}}};
  return {{"format", "litmus-series/1"}, {"rule", rule}, {"rule_class", "SomeRule"},
          {"thresholds", {{name, {{{"value", 2.5}, {"fires_when", "above"}}}}}},
          {"recommendations", {"do " + rule}}, {"dropped_series", 0}, {"series", {s}}};
}

TEST(HtmlText, EscapesHtmlSpecials) {
  EXPECT_EQ(EscapeHtml("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
  EXPECT_EQ(EscapeHtml(kNasty).find('<'), std::string::npos);
}

TEST(HtmlText, ScriptJsonCannotCloseTheScriptElement) {
  const std::string text = ScriptJson(Json{{"name", kNasty}, {"bad utf8", std::string("\xff\xfe")}});
  EXPECT_THAT(text, Not(HasSubstr("</")));
  EXPECT_THAT(text, Not(HasSubstr("<!--")));
  EXPECT_THAT(text, Not(HasSubstr("<")));
  // The same string once parsed (as the browser's JavaScript parser reads it).
  EXPECT_EQ(Json::parse(text)["name"], kNasty);
}

// The page's chart data is written without a JSON document: the same guarantees as ScriptJson,
// numbers read back exactly, and what JSON cannot hold (NaN, infinities) as null.
TEST(HtmlText, TextWrittenStraightIntoScriptJson) {
  std::string out = "[";
  for (const std::string& text : {kNasty, std::string("plain/name_0"), std::string("bad\xff\xfeutf8"), std::string("tab\tq\"\\")}) {
    AppendScriptString(out, text);
    out += ',';
  }
  const std::vector<double> numbers = {0.1, -0.0, 1e300, 5e-324, 123456789.125, -7, 1.0 / 3};
  for (const double v : numbers) {
    AppendJsonNumber(out, v);
    out += ',';
  }
  AppendJsonNumber(out, std::nan(""));
  out += ',';
  AppendJsonNumber(out, -std::numeric_limits<double>::infinity());
  out += ',';
  AppendJsonInt(out, INT64_MIN);
  out += ']';
  EXPECT_THAT(out, Not(HasSubstr("<")));
  const Json parsed = Json::parse(out);
  EXPECT_EQ(parsed[0], kNasty);
  EXPECT_EQ(parsed[1], "plain/name_0");
  EXPECT_EQ(parsed[2], "bad\xef\xbf\xbd\xef\xbf\xbdutf8");
  EXPECT_EQ(parsed[3], "tab\tq\"\\");
  for (size_t i = 0; i < numbers.size(); ++i) EXPECT_EQ(parsed[4 + i].get<double>(), numbers[i]) << i;
  EXPECT_TRUE(parsed[4 + numbers.size()].is_null());
  EXPECT_TRUE(parsed[5 + numbers.size()].is_null());
  EXPECT_EQ(parsed[6 + numbers.size()].get<int64_t>(), INT64_MIN);
}

// The chart data's base64: RFC 4648's test vectors appended after text already there, then every
// length from 0 to 256 (each byte value once), read back by the tests' own decoder.
TEST(HtmlText, Base64StringsAreRfc4648) {
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", "\"\""},           {"f", "\"Zg==\""},         {"fo", "\"Zm8=\""},         {"foo", "\"Zm9v\""},
      {"foob", "\"Zm9vYg==\""}, {"fooba", "\"Zm9vYmE=\""}, {"foobar", "\"Zm9vYmFy\""}};
  for (const auto& [bytes, json] : vectors) {
    std::string out = "x";
    AppendBase64String(out, std::as_bytes(std::span(bytes.data(), bytes.size())));
    EXPECT_EQ(out, "x" + json) << bytes;
  }
  std::string bytes;
  for (int i = 0; i <= 256; ++i) {
    std::string out = "[";
    AppendBase64String(out, std::as_bytes(std::span(bytes.data(), bytes.size())));
    out += ']';
    EXPECT_EQ(testing::DecodeBase64(Json::parse(out)[0].get<std::string>()), bytes) << i;
    bytes += static_cast<char>(255 - i);  // (lengths 0..256, every byte value)
  }
}

TEST(ReportAssets, DygraphsInlinedWithoutScriptEnd) {
  EXPECT_GT(DygraphJs().size(), 100000u);
  EXPECT_THAT(std::string(DygraphJs()), HasSubstr("Dygraph"));
  EXPECT_THAT(std::string(DygraphJs()), Not(HasSubstr("</script")));
  EXPECT_THAT(std::string(DygraphJs()), Not(HasSubstr("sourceMappingURL")));
  EXPECT_THAT(std::string(DygraphCss()), HasSubstr(".dygraph"));
}

SeriesColumns Ramp(int64_t n) {
  SeriesColumns c;
  for (int64_t i = 0; i < n; ++i) {
    c.step.push_back(i);
    c.last_step.push_back(i);
    c.mode.push_back(static_cast<int32_t>(Mode::kTrain));
    const double v = i == n / 3 ? 1e6 : (i == n / 2 ? -1e6 : static_cast<double>(i % 100));
    c.value.push_back(v);
    c.min.push_back(v);
    c.max.push_back(v);
    c.count.push_back(1);
  }
  return c;
}

TEST(Downsample, BoundsPointsAndKeepsExtremes) {
  for (const int64_t n : {int64_t{1}, int64_t{1024}, int64_t{1025}, int64_t{100000}, int64_t{1000003}}) {
    const SeriesColumns in = Ramp(n);
    const SeriesColumns out = Downsample(in);
    ASSERT_LE(out.step.size(), kMaxChartPoints) << n;
    ASSERT_EQ(out.value.size(), out.step.size());
    ASSERT_EQ(out.min.size(), out.step.size());
    if (n <= static_cast<int64_t>(kMaxChartPoints)) {
      EXPECT_EQ(out.value, in.value);
      continue;
    }
    EXPECT_GE(out.step.size(), kMaxChartPoints / 2) << n;
    // The spikes survive in the band; every step is covered once, in order.
    EXPECT_EQ(*std::max_element(out.max.begin(), out.max.end()), 1e6);
    EXPECT_EQ(*std::min_element(out.min.begin(), out.min.end()), -1e6);
    EXPECT_EQ(out.step.front(), 0);
    EXPECT_EQ(out.last_step.back(), n - 1);
    int64_t points = 0;
    for (size_t i = 0; i < out.step.size(); ++i) {
      points += out.count[i];
      if (i > 0) {
        EXPECT_EQ(out.step[i], out.last_step[i - 1] + 1);
      }
    }
    EXPECT_EQ(points, n);
  }
}

TEST(Downsample, NonFiniteValuesDoNotPoisonTheMean) {
  SeriesColumns c = Ramp(2048);
  c.value[0] = std::numeric_limits<double>::quiet_NaN();
  c.min[0] = c.max[0] = std::numeric_limits<double>::quiet_NaN();
  const SeriesColumns out = Downsample(c);
  EXPECT_EQ(out.value[0], 1.0);  // the mean of the finite one (1)
}

TEST(JobFiles, NotAJobFolderIsOneClearError) {
  TempDir dir;
  JobFilesReader reader(Env::Default(), dir.str());
  const StatusOr<JobFiles> job = reader.Read();
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(std::string(job.status().message()), HasSubstr("not a job output folder (no status.json): " + dir.str()));
  dir.WriteFile("status.json", "{not json");
  const StatusOr<JobFiles> bad = reader.Read();
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("status.json: not valid JSON"));
}

TEST(JobFiles, SummaryRowsAreTheVerdictTablesRows) {
  FakeJob job;
  job.AddRule("A", "IssuesFound", 2, 40, 0.25, SeriesDoc("A", "mean |g|", "g1", 40));
  job.AddRule("B", "NoIssuesFound", 0, 40, 1.5);
  job.Write();
  job.dir.WriteFile("events.jsonl", job.Events({Firing("A", 9), Firing("A", 4)}));
  JobFilesReader reader(Env::Default(), job.dir.str());
  StatusOr<JobFiles> files = reader.Read();
  LITMUS_ASSERT_OK(files.status());
  const std::vector<VerdictRow> rows = VerdictRows(*files);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(FormatVerdictTable(rows),
            "rule  status         first firing  firings  datapoints   time\n"
            "A     IssuesFound               4        2          40  0.25s\n"
            "B     NoIssuesFound             -        0          40  1.50s\n");
  EXPECT_EQ(files->rules[0].last_firing, 9);
  EXPECT_EQ(files->rules[0].first_message, "fired at 4");
  EXPECT_EQ(files->rules[0].description, "checks A");
  ASSERT_EQ(files->rules[0].series.size(), 1u);
  EXPECT_EQ(files->rules[0].series[0].columns.step.size(), 40u);
  EXPECT_EQ(files->rules[0].recommendations, std::vector<std::string>{"do A"});
}

TEST(JobFiles, EventsAreReadIncrementallyAndAHalfLineWaits) {
  FakeJob job;
  job.AddRule("A", "InProgress", 0, 3, 0);
  job.status["exit_code"] = nullptr;
  job.Write();
  const std::string first = job.Events({Firing("A", 5)});
  const std::string second = Firing("A", 2).dump() + "\n";
  job.dir.WriteFile("events.jsonl", first + second.substr(0, 20));  // a line being written
  JobFilesReader reader(Env::Default(), job.dir.str());
  StatusOr<JobFiles> files = reader.Read();
  LITMUS_ASSERT_OK(files.status());
  EXPECT_FALSE(files->exit_code.has_value());
  EXPECT_EQ(files->rules[0].firing_events, 1);
  EXPECT_EQ(files->rules[0].first_firing, 5);
  job.dir.WriteFile("events.jsonl", first + second);
  files = reader.Read();
  LITMUS_ASSERT_OK(files.status());
  EXPECT_EQ(files->rules[0].firing_events, 2);
  EXPECT_EQ(files->rules[0].first_firing, 2);
  EXPECT_EQ(files->rules[0].last_firing, 5);
  // A new job in the folder starts events.jsonl anew: read from its start.
  job.dir.WriteFile("events.jsonl", job.Events({Firing("A", 7)}));
  files = reader.Read();
  LITMUS_ASSERT_OK(files.status());
  EXPECT_EQ(files->rules[0].firing_events, 1);
  EXPECT_EQ(files->rules[0].first_firing, 7);
}

TEST(ReportPage, EverythingFromTheFilesIsEscaped) {
  FakeJob job;
  Json doc = SeriesDoc(kNasty, kNasty, kNasty, 10);
  doc["recommendations"] = {kNasty};
  job.AddRule(kNasty, "IssuesFound", 1, 10, 0, doc);
  job.status["StatusDetails"] = kNasty;
  job.Write();
  job.dir.WriteFile("events.jsonl", job.Events({Firing(kNasty, 3)}));
  JobFilesReader reader(Env::Default(), job.dir.str());
  StatusOr<JobFiles> files = reader.Read();
  LITMUS_ASSERT_OK(files.status());
  const std::string page = RenderReportPage(*files, nullptr, {.generated_at = kNasty, .version = "1"});
  EXPECT_THAT(page, Not(HasSubstr("alert(1)</script>")));
  EXPECT_THAT(page, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(page, HasSubstr("x&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--&amp;&quot;&#39;"));
  // Every <script> element of the page is one of its own three.
  size_t scripts = 0;
  for (size_t at = page.find("<script"); at != std::string::npos; at = page.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 3u);
  const Json specs = Specs(page);
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0]["rule"], kNasty);
  EXPECT_EQ(specs[0]["columns"][0]["tensor"], kNasty);
}

TEST(ReportPage, ChartsHoldAtMostTheBoundAndTheThresholdsAndFirings) {
  FakeJob job;
  // A series file beyond the bound (a writer that does not downsample): the page bounds it.
  job.AddRule("Long", "IssuesFound", 1, 100000, 0, SeriesDoc("Long", "value", "t", 100000, 77777));
  job.Write();
  JobFilesReader reader(Env::Default(), job.dir.str());
  StatusOr<JobFiles> files = reader.Read();
  LITMUS_ASSERT_OK(files.status());
  const std::string page = RenderReportPage(*files, nullptr, {.generated_at = "now", .version = "1"});
  const Json specs = Specs(page);
  ASSERT_EQ(specs.size(), 1u);
  const Json& rows = specs[0]["rows"];
  EXPECT_LE(rows.size(), kMaxChartPoints);
  EXPECT_GE(rows.size(), kMaxChartPoints / 2);
  double highest = 0;
  for (const Json& row : rows) highest = std::max(highest, row[1][2].get<double>());
  EXPECT_EQ(highest, 1e9);  // the spike is in the band
  EXPECT_EQ(specs[0]["thresholds"][0]["value"], 2.5);
  EXPECT_EQ(specs[0]["thresholds"][0]["fires_when"], "above");
  EXPECT_EQ(specs[0]["firings"][0][0], 3);
  // EVAL steps are shaded.
  ASSERT_FALSE(specs[0]["shade"].empty());
  EXPECT_EQ(specs[0]["shade"][0][2], "EVAL");
  EXPECT_THAT(page, Not(HasSubstr("http-equiv=\"refresh\"")));  // a finished job's page stays
}

// `litmus run --report` takes the series from the runner's stores, `litmus report DIR` from the
// files the stores wrote: the same page. Merged buckets, NaN/inf, -0, firings, thresholds, a
// recommendation and a name with invalid UTF-8 (the file carries U+FFFD).
TEST(JobFiles, SeriesFromTheStoreMakeTheSamePageAsTheFile) {
  SeriesStore store;
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t step = 0; step < 3000; ++step) {
    const int32_t mode = step % 10 >= 8 ? 2 : 1;
    double v = std::sin(static_cast<double>(step) / 7) * 1e3 / 3;
    if (step % 97 == 0) v = std::nan("");
    if (step % 101 == 0) v = -inf;
    if (step == 5) v = -0.0;
    store.Add("grad", "layer/w", step, mode, v);
    store.Add("grad", std::string("bad\xff\xfename"), step, mode, static_cast<double>(step) * 0.1);
    if (step % 400 == 3) store.MarkFiring(step);
    if (step < 900) store.Add("short", "", step, mode, step == 7 ? std::nan("") : 1.0 / (1 + static_cast<double>(step)));
  }
  store.Add("late", "t", 5000, 0, -0.0);
  store.SetThreshold("grad", 0.5, 1);
  store.SetThreshold("grad", -0.25, 2);
  store.SetThreshold("short", std::nan(""), 1);
  store.AddRecommendation("lower the learning rate");
  FakeJob job;
  job.AddRule("R", "IssuesFound", 3, 3000, 1.5);
  job.Write();
  job.dir.WriteFile("rule-reports/R.series.json", store.ToJson("R", "SomeRule"));
  const LiveSeries live = {{"R", &store}};
  JobFilesReader from_file(Env::Default(), job.dir.str());
  JobFilesReader from_store(Env::Default(), job.dir.str());
  StatusOr<JobFiles> a = from_file.Read();
  LITMUS_ASSERT_OK(a.status());
  std::filesystem::remove(job.dir.str() + "/rule-reports/R.series.json");  // the store is read, not the file
  StatusOr<JobFiles> b = from_store.Read(&live);
  LITMUS_ASSERT_OK(b.status());
  ASSERT_EQ(a->rules.size(), 1u);
  ASSERT_EQ(b->rules.size(), 1u);
  ASSERT_EQ(b->rules[0].series.size(), 4u);
  EXPECT_EQ(b->rules[0].series[1].tensor, "bad\xef\xbf\xbd\xef\xbf\xbdname");
  EXPECT_GT(b->rules[0].series[0].points_per_bucket, 1);
  const PageOptions options{.generated_at = "now", .version = "1"};
  const std::string page = RenderReportPage(*a, nullptr, options);
  EXPECT_EQ(RenderReportPage(*b, nullptr, options), page);
  EXPECT_EQ(Specs(page).size(), 3u);  // (the two tensors of "grad" share a chart)
  // An empty store (a resumed rule that published nothing yet) leaves the file to be read.
  SeriesStore empty;
  const LiveSeries none = {{"R", &empty}};
  StatusOr<JobFiles> c = JobFilesReader(Env::Default(), job.dir.str()).Read(&none);
  LITMUS_ASSERT_OK(c.status());
  EXPECT_TRUE(c->rules[0].series.empty());  // (the file was removed above)
}

TEST(ReportGenerator, WritesAtomicallyAndNamesTheFileItCannotWrite) {
  FakeJob job;
  job.AddRule("A", "NoIssuesFound", 0, 1, 0);
  job.Write();
  ReportGenerator generator({.output_dir = job.dir.str(), .file = "", .trial = ""}, Env::Default(), Env::Default());
  LITMUS_ASSERT_OK(generator.Write());
  EXPECT_EQ(generator.path(), job.dir.str() + "/report.html");
  EXPECT_THAT(testing::ReadWholeFile(generator.path()), HasSubstr("</html>"));
  EXPECT_FALSE(std::filesystem::exists(generator.path() + ".tmp"));
  ReportGenerator nowhere({.output_dir = job.dir.str(), .file = job.dir.str() + "/no/such/dir/r.html", .trial = ""}, Env::Default(),
                          Env::Default());
  const Status status = nowhere.Write();
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("cannot write " + job.dir.str() + "/no/such/dir/r.html"));
}

}  // namespace
}  // namespace litmus::report
