// End-to-end: `litmus run --tensorboard-dir DIR` (docs/report.md "TensorBoard"). The real binary
// runs ExplodingTensor on the smdebug fixture pt_exploding (it fires at step 7); the event file is
// decoded with the project's own protos: framing and every CRC, the file_version record, and
// condition_met, the published series (equal to rule-reports/<rule>.series.json), the firing text
// (equal to events.jsonl's message) and the losses (equal to smdebug's reading of the fixture).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "litmus/format/crc32c.h"
#include "litmus/format/proto/event.pb.h"
#include "litmus/format/tfrecord.h"
#include "run_test_support.h"
#include "support/series_json.h"
#include "support/temp_dir.h"
#include "support/tensorboard_records.h"

namespace litmus {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::Json;
using testing::kFastEnd;
using testing::ProcessResult;
using testing::ReadJson;
using testing::RunArgsInto;
using testing::RunProcess;
using testing::SeriesNumber;
using testing::TempDir;

const char* const kRule = "ExplodingTensor";

std::string Trial() { return testing::FixturePath("pt_exploding").string(); }

ProcessResult RunWithTensorBoard(const fs::path& out, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--trial", Trial(), "--rule", kRule};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunProcess(RunArgsInto(out, args), kFastEnd, std::chrono::seconds(120));
}

// The one event file of the run `litmus` in `dir`.
fs::path EventFile(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir / "litmus")) {
    for (const auto& entry : fs::directory_iterator(dir / "litmus")) files.push_back(entry.path());
  }
  EXPECT_EQ(files.size(), 1u) << dir;
  return files.empty() ? fs::path() : files[0];
}


// tag -> step -> value of the scalar summaries (a step written twice fails the test).
using Scalars = std::map<std::string, std::map<int64_t, double>>;
struct Decoded {
  std::vector<format::proto::Event> events;
  Scalars scalars;
  std::vector<const format::proto::Event*> texts;  // events holding a text summary
};

Decoded Decode(const fs::path& file) {
  Decoded d;
  d.events = litmus::testing::DecodeTensorBoardFile(file);
  for (size_t i = 1; i < d.events.size(); ++i) {
    const format::proto::Event& e = d.events[i];
    EXPECT_TRUE(e.has_summary()) << "record " << i;
    EXPECT_EQ(e.summary().value_size(), 1) << "record " << i;
    for (const auto& v : e.summary().value()) {
      if (v.value_case() == format::proto::Summary::Value::kSimpleValue) {
        EXPECT_TRUE(d.scalars[v.tag()].emplace(e.step(), v.simple_value()).second) << v.tag() << " step " << e.step();
      } else {
        d.texts.push_back(&e);
      }
    }
  }
  return d;
}

// Equal as float32 (the summaries' precision), NaN equal to NaN.
void ExpectSameFloat(double actual, double expected, const std::string& what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << what;
  } else {
    EXPECT_EQ(static_cast<float>(actual), static_cast<float>(expected)) << what;
  }
}

void CheckRun(const fs::path& out, const fs::path& tb, bool losses) {
  const fs::path file = EventFile(tb);
  ASSERT_FALSE(file.empty());
  // events.out.tfevents.<10-digit seconds>.<hostname>.litmus
  const std::string name = file.filename().string();
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  ASSERT_THAT(name, ::testing::MatchesRegex(R"(events\.out\.tfevents\.[0-9]{10}\..*\.litmus)")) << name;
  EXPECT_EQ(name.substr(31), std::string(host) + ".litmus") << name;

  const Decoded d = Decode(file);
  ASSERT_FALSE(d.events.empty());
  EXPECT_EQ(d.events[0].file_version(), "brain.Event:2");
  EXPECT_GT(d.events[0].wall_time(), 0);
  for (const auto& e : d.events) EXPECT_GT(e.wall_time(), 0);

  // condition_met: 0 at steps 0..6, 1 at step 7 (the rule ends at its first firing).
  const std::string prefix = std::string("litmus/") + kRule + "/";
  std::map<int64_t, double> expected_met;
  for (int64_t step = 0; step <= 7; ++step) expected_met[step] = step == 7 ? 1 : 0;
  EXPECT_EQ(d.scalars.at(prefix + "condition_met"), expected_met);
  EXPECT_EQ(ReadJson(out / "rule-reports" / (std::string(kRule) + ".json"))["Datapoints"], 8);

  // Series: every series of the series file, point for point, and nothing else.
  const Json series = ReadJson(out / "rule-reports" / (std::string(kRule) + ".series.json"));
  std::set<std::string> expected_tags = {prefix + "condition_met"};
  ASSERT_FALSE(series["series"].empty());
  for (const Json& s : series["series"]) {
    const std::string tag = prefix + s["name"].get<std::string>() +
                            (s["tensor"] == "" ? std::string() : "/" + s["tensor"].get<std::string>());
    expected_tags.insert(tag);
    ASSERT_TRUE(d.scalars.contains(tag)) << tag;
    const std::map<int64_t, double>& got = d.scalars.at(tag);
    ASSERT_EQ(got.size(), s["step"].size()) << tag;
    for (size_t i = 0; i < s["step"].size(); ++i) {
      const int64_t step = s["step"][i];
      ASSERT_TRUE(got.contains(step)) << tag << " step " << step;
      ExpectSameFloat(got.at(step), SeriesNumber(s["value"][i]), tag + " step " + std::to_string(step));
    }
  }

  // Losses: the fixture's MSELoss_output_0 at each of its 16 steps (+inf at 7, NaN after), as
  // smdebug read it.
  if (losses) {
    expected_tags.insert("losses/MSELoss_output_0");
    const Json expected = ReadJson(testing::FixturePath("pt_exploding.expected.json"));
    const Json& per_step = expected["tensors"]["MSELoss_output_0"]["per_step"];
    const std::map<int64_t, double>& got = d.scalars.at("losses/MSELoss_output_0");
    EXPECT_EQ(got.size(), per_step.size());
    for (const auto& [step, entry] : per_step.items()) {
      const double want = SeriesNumber(entry["by_worker"]["worker_0"]["value"]["values"][0]);
      ASSERT_TRUE(got.contains(std::stoll(step))) << step;
      ExpectSameFloat(got.at(std::stoll(step)), want, "loss at step " + step);
    }
  }
  std::set<std::string> tags;
  for (const auto& [tag, points] : d.scalars) tags.insert(tag);
  EXPECT_EQ(tags, expected_tags);

  // The firing: one text summary at step 7 holding the RuleEvaluationConditionMet message.
  std::string message;
  for (const Json& event : testing::ReadEvents(out)) {
    if (event["event"] == "RuleEvaluationConditionMet") message = event["message"];
  }
  ASSERT_FALSE(message.empty());
  ASSERT_EQ(d.texts.size(), 1u);
  const format::proto::Event& text = *d.texts[0];
  EXPECT_EQ(text.step(), 7);
  const auto& v = text.summary().value(0);
  EXPECT_EQ(v.tag(), prefix + "firing");
  ASSERT_EQ(v.metadata().plugin_data_size(), 1);
  EXPECT_EQ(v.metadata().plugin_data(0).plugin_name(), "text");
  ASSERT_TRUE(v.has_tensor());
  EXPECT_EQ(v.tensor().dtype(), format::proto::DT_STRING);
  EXPECT_EQ(v.tensor().tensor_shape().dim_size(), 0);  // a scalar string
  ASSERT_EQ(v.tensor().string_val_size(), 1);
  EXPECT_EQ(v.tensor().string_val(0), message);
}

class RunTensorBoard : public ::testing::TestWithParam<std::string> {};

TEST_P(RunTensorBoard, VerdictsSeriesFiringAndLosses) {
  TempDir out, tb;
  const ProcessResult result = RunWithTensorBoard(
      out.path(), {"--isolation", GetParam(), "--tensorboard-dir", tb.str(), "--tensorboard-losses"});
  ASSERT_EQ(result.exit_code, 1) << result.err;
  CheckRun(out.path(), tb.path(), /*losses=*/true);
}

TEST_P(RunTensorBoard, NoLossesUnlessAsked) {
  TempDir out, tb;
  const ProcessResult result = RunWithTensorBoard(out.path(), {"--isolation", GetParam(), "--tensorboard-dir", tb.str()});
  ASSERT_EQ(result.exit_code, 1) << result.err;
  CheckRun(out.path(), tb.path(), /*losses=*/false);
}

INSTANTIATE_TEST_SUITE_P(Isolation, RunTensorBoard, ::testing::Values("process", "none"));

// A folder that cannot be created: one error line naming the output, the verdict unchanged.
TEST(RunTensorBoardErrors, UnwritableDirIsAnErrorOfThatOutputOnly) {
  TempDir out, scratch;
  scratch.WriteFile("plain-file", "not a folder");
  const fs::path bad = scratch.path() / "plain-file" / "tb";
  const ProcessResult result = RunWithTensorBoard(out.path(), {"--tensorboard-dir", bad.string()});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const Json status = ReadJson(out.path() / "status.json");
  EXPECT_EQ(status["RuleEvaluationStatus"], "IssuesFound");
  EXPECT_EQ(status["exit_code"], 1);
  size_t lines = 0;
  std::istringstream err(result.err);
  for (std::string line; std::getline(err, line);) {
    if (line.find("TensorBoard") == std::string::npos) continue;
    ++lines;
    EXPECT_THAT(line, HasSubstr("error")) << line;
    EXPECT_THAT(line, HasSubstr("--tensorboard-dir " + bad.string())) << line;
    EXPECT_THAT(line, HasSubstr((scratch.path() / "plain-file").string())) << line;
  }
  EXPECT_EQ(lines, 1u) << result.err;
}

// An s3:// DIR is refused the same way (it is not written to a local folder named "s3:").
TEST(RunTensorBoardErrors, S3DirIsNotSupported) {
  TempDir out;
  const ProcessResult result = RunWithTensorBoard(out.path(), {"--tensorboard-dir", "s3://bucket/tb"});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(testing::Count(result.err, "TensorBoard output (--tensorboard-dir s3://bucket/tb) stopped: an s3://"), 1u)
      << result.err;
  EXPECT_FALSE(fs::exists("s3:"));  // (the child runs in this process's working folder)
}

TEST(RunTensorBoardErrors, LossesNeedADir) {
  TempDir out;
  const ProcessResult result = RunWithTensorBoard(out.path(), {"--tensorboard-losses"});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_THAT(result.err, HasSubstr("--tensorboard-dir")) << result.err;
}

}  // namespace
}  // namespace litmus
