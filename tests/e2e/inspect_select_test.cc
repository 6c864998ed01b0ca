// End-to-end: `litmus inspect` filters (--tensor, --collection, --mode, --step), --values, the
// compact step listing and the streamed --json document, on trials written by litmus::writer
// with known values (so the statistics can be checked exactly).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "litmus/writer/writer.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::LitmusBinary;
using testing::RunProcess;
using Json = nlohmann::json;

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// The trial of these tests, one worker:
//   global 0-5 TRAIN (mode steps 0-5), 6-8 EVAL (0-2), 9-10 TRAIN (6-7).
//   gradient/fc1.weight  float32 (4,)    [1.5, -2, nan, inf]          TRAIN only (gradients)
//   fc1.weight           float32 (1000,) i - 500 for i in 0..999:     min -500 max 499 mean -0.5
//   fc2.weight           float32 (100,)  1..100 but 2 NaN, 3 +inf, 1 -inf
//   CrossEntropyLoss_output_0  float32 ()  the global step              (collection losses)
class InspectSelectTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    writer::WriterOptions options;
    options.save_config = writer::SaveConfig::Every(1);
    auto w = writer::Writer::Open(dir_->str(), options);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    std::vector<float> big(1000), odd(100);
    for (int i = 0; i < 1000; ++i) big[i] = static_cast<float>(i - 500);
    for (int i = 0; i < 100; ++i) odd[i] = static_cast<float>(i + 1);
    odd[3] = odd[50] = nan;
    odd[7] = odd[8] = odd[9] = inf;
    odd[99] = -inf;
    int64_t global = 0;
    for (const auto& [mode, count] : std::vector<std::pair<Mode, int>>{{Mode::kTrain, 6}, {Mode::kEval, 3}, {Mode::kTrain, 2}}) {
      ASSERT_TRUE((*w)->SetMode(mode).ok());
      for (int i = 0; i < count; ++i, ++global) {
        ASSERT_TRUE((*w)->BeginStep().ok());
        ASSERT_TRUE((*w)->SaveTensor("gradient/fc1.weight", std::vector<float>{1.5f, -2.0f, nan, inf}, {4}).ok());
        ASSERT_TRUE((*w)->SaveTensor("fc1.weight", big, {1000}).ok());
        ASSERT_TRUE((*w)->SaveTensor("fc2.weight", odd, {100}).ok());
        ASSERT_TRUE((*w)->SaveTensor("CrossEntropyLoss_output_0", std::vector<float>{static_cast<float>(global)}, {}).ok());
        ASSERT_TRUE((*w)->EndStep().ok());
      }
    }
    ASSERT_TRUE((*w)->Close().ok());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static testing::ProcessResult Inspect(std::vector<std::string> args) {
    args.insert(args.begin(), {LitmusBinary(), "inspect", dir_->str()});
    return RunProcess(args);
  }
  // Runs inspect --json with `args` and parses the document.
  static Json InspectJson(std::vector<std::string> args) {
    args.push_back("--json");
    const auto result = Inspect(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    return Json::parse(result.out);
  }
  static std::vector<std::string> Keys(const Json& object) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : object.items()) keys.push_back(key);
    return keys;
  }
  static std::set<int64_t> PerStepSteps(const Json& doc) {
    std::set<int64_t> steps;
    for (const auto& [name, tensor] : doc["tensors"].items()) {
      for (const auto& [step, record] : tensor["per_step"].items()) steps.insert(std::stoll(step));
    }
    return steps;
  }

  static testing::TempDir* dir_;
};
testing::TempDir* InspectSelectTest::dir_ = nullptr;

TEST_F(InspectSelectTest, JsonWithoutFiltersHasNoSelectionKeyAndEveryRecord) {
  const Json doc = InspectJson({});
  EXPECT_FALSE(doc.contains("selection"));
  EXPECT_EQ(doc["tensor_names"].size(), 4u);
  EXPECT_EQ(doc["tensors"]["fc1.weight"]["per_step"].size(), 11u);
  EXPECT_EQ(doc["tensors"]["gradient/fc1.weight"]["per_step"].size(), 8u) << "gradients are not saved in EVAL";
}

TEST_F(InspectSelectTest, TensorRegexIsSearchedAnywhereAndRepeatable) {
  Json doc = InspectJson({"--tensor", "fc1"});
  EXPECT_THAT(Keys(doc["tensors"]), ElementsAre("fc1.weight", "gradient/fc1.weight"));
  EXPECT_EQ(doc["tensor_names"], Json({"fc1.weight", "gradient/fc1.weight"}));
  EXPECT_EQ(doc["selection"]["tensor_regex"], Json({"fc1"}));

  doc = InspectJson({"--tensor", "^fc", "--tensor", "Loss"});
  EXPECT_THAT(Keys(doc["tensors"]), ElementsAre("CrossEntropyLoss_output_0", "fc1.weight", "fc2.weight"));

  // The summary lists only the selected tensors.
  const auto summary = Inspect({"--tensor", "^gradient/"});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_THAT(summary.out, HasSubstr("tensors: 1 of 4 selected"));
  EXPECT_THAT(summary.out, HasSubstr("gradient/fc1.weight"));
  EXPECT_THAT(summary.out, Not(HasSubstr("fc2.weight")));
}

TEST_F(InspectSelectTest, CollectionSelectsItsMembersAndIntersectsWithTensor) {
  Json doc = InspectJson({"--collection", "losses"});
  EXPECT_THAT(Keys(doc["tensors"]), ElementsAre("CrossEntropyLoss_output_0"));
  doc = InspectJson({"--collection", "weights", "--tensor", "fc2"});
  EXPECT_THAT(Keys(doc["tensors"]), ElementsAre("fc2.weight"));
  doc = InspectJson({"--collection", "weights", "--collection", "gradients"});
  EXPECT_THAT(Keys(doc["tensors"]), ElementsAre("fc1.weight", "fc2.weight", "gradient/fc1.weight"));
}

TEST_F(InspectSelectTest, StepAndRangeSelectGlobalSteps) {
  EXPECT_THAT(PerStepSteps(InspectJson({"--step", "3"})), ElementsAre(3));
  EXPECT_THAT(PerStepSteps(InspectJson({"--step", "2:5"})), ElementsAre(2, 3, 4));
  EXPECT_THAT(PerStepSteps(InspectJson({"--step", "9:"})), ElementsAre(9, 10));
  EXPECT_THAT(PerStepSteps(InspectJson({"--step", ":2"})), ElementsAre(0, 1));
  const Json doc = InspectJson({"--step", "2:5"});
  EXPECT_EQ(doc["tensors"]["fc1.weight"]["steps"], Json({2, 3, 4}));
  EXPECT_EQ(doc["selection"]["steps"], Json({{"begin", 2}, {"end", 5}}));
  EXPECT_THAT(Keys(doc["tensor_names_by_step"]), ElementsAre("2", "3", "4"));
  // Trial-level keys still describe the whole trial.
  EXPECT_EQ(doc["steps"].size(), 11u);
}

TEST_F(InspectSelectTest, ModeSelectsItsStepsAndStepCountsModeSteps) {
  Json doc = InspectJson({"--mode", "EVAL"});
  EXPECT_THAT(PerStepSteps(doc), ElementsAre(6, 7, 8));
  // Gradients are not saved in EVAL: not selected.
  EXPECT_THAT(Keys(doc["tensors"]), ElementsAre("CrossEntropyLoss_output_0", "fc1.weight", "fc2.weight"));
  EXPECT_THAT(PerStepSteps(InspectJson({"--mode", "EVAL", "--step", "1"})), ElementsAre(7));
  EXPECT_THAT(PerStepSteps(InspectJson({"--mode", "train", "--step", "6:"})), ElementsAre(9, 10));
  doc = InspectJson({"--mode", "EVAL", "--step", "1"});
  EXPECT_EQ(doc["tensors"]["fc1.weight"]["per_step"]["7"]["mode_step"], 1);
  // GLOBAL selects every step, counted as global steps (smdebug's steps(mode=GLOBAL)).
  EXPECT_THAT(PerStepSteps(InspectJson({"--mode", "GLOBAL", "--step", "5:7"})), ElementsAre(5, 6));
}

TEST_F(InspectSelectTest, NoValuesLeavesOutPerStepButHonoursFilters) {
  const Json doc = InspectJson({"--no-values", "--tensor", "Loss", "--step", "0:3"});
  EXPECT_FALSE(doc["tensors"]["CrossEntropyLoss_output_0"].contains("per_step"));
  EXPECT_EQ(doc["tensors"]["CrossEntropyLoss_output_0"]["steps"], Json({0, 1, 2}));
}

TEST_F(InspectSelectTest, ValuesOfSmallTensorsInFull) {
  const auto result = Inspect({"--values", "--tensor", "^gradient/", "--step", "0"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "gradient/fc1.weight\n  step 0 (TRAIN 0): float32 (4,) [1.5, -2, nan, inf]\n");
  const auto loss = Inspect({"--values", "--collection", "losses", "--mode", "EVAL"});
  ASSERT_EQ(loss.exit_code, 0) << loss.err;
  EXPECT_EQ(loss.out,
            "CrossEntropyLoss_output_0\n"
            "  step 6 (EVAL 0): float32 () [6]\n"
            "  step 7 (EVAL 1): float32 () [7]\n"
            "  step 8 (EVAL 2): float32 () [8]\n");
}

TEST_F(InspectSelectTest, ValuesOfLargeTensorsAsStatistics) {
  const auto result = Inspect({"--values", "--tensor", "^fc", "--step", "10"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "fc1.weight\n"
            "  step 10 (TRAIN 7): float32 (1000,) 1000 elements: min -500 max 499 mean -0.5, nan 0, +inf 0, -inf 0\n"
            "fc2.weight\n"
            "  step 10 (TRAIN 7): float32 (100,) 100 elements: min nan max nan mean nan, nan 2, +inf 3, -inf 1\n");
  // The same counts as the JSON document's.
  const Json doc = InspectJson({"--tensor", "^fc2", "--step", "10"});
  const Json& value = doc["tensors"]["fc2.weight"]["per_step"]["10"]["by_worker"]["worker_0"]["value"];
  EXPECT_EQ(value["nan_count"], 2);
  EXPECT_EQ(value["posinf_count"], 3);
  EXPECT_EQ(value["neginf_count"], 1);
}

TEST_F(InspectSelectTest, BadFiltersAreOneLineErrors) {
  for (const auto& [args, mention] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--step", "abc"}, "invalid step 'abc'"},
           {{"--step", "5:3"}, "holds no step"},
           {{"--step", "-1"}, "invalid step"},
           {{"--mode", "TEST"}, "invalid --mode 'TEST'"},
           {{"--tensor", "("}, "--tensor"},
           {{"--collection", "nope"}, "unknown collection 'nope'; collections of this trial: all, "},
       }) {
    const auto result = Inspect(args);
    EXPECT_EQ(result.exit_code, 2) << args[1];
    EXPECT_EQ(Lines(result.err), 1) << result.err;
    EXPECT_THAT(result.err, HasSubstr(mention));
    EXPECT_EQ(result.out, "");
  }
  const auto both = Inspect({"--values", "--no-values"});
  EXPECT_EQ(both.exit_code, 2);
}

TEST_F(InspectSelectTest, EmptySelectionSaysSo) {
  const auto result = Inspect({"--tensor", "nothing-like-this"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("tensors: 0 of 4 selected"));
}

TEST(InspectCompact, StepListingStaysShortForManySteps) {
  // 3000 steps alternating TRAIN and EVAL: every mode's global steps are 1500 ranges of one step.
  testing::TempDir dir;
  writer::WriterOptions options;
  options.save_config = writer::SaveConfig::Every(1);
  auto w = writer::Writer::Open(dir.str(), options);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  for (int step = 0; step < 3000; ++step) {
    ASSERT_TRUE((*w)->SetMode(step % 2 == 0 ? Mode::kTrain : Mode::kEval).ok());
    ASSERT_TRUE((*w)->BeginStep().ok());
    ASSERT_TRUE((*w)->SaveTensor("CrossEntropyLoss_output_0", std::vector<float>{1.0f}, {}).ok());
    ASSERT_TRUE((*w)->EndStep().ok());
  }
  ASSERT_TRUE((*w)->Close().ok());
  const auto result = RunProcess({LitmusBinary(), "inspect", "--no-values", dir.str()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_LT(result.out.size(), 1500u) << result.out;
  EXPECT_THAT(result.out, HasSubstr("3000 complete (0-2999)"));
  EXPECT_THAT(result.out, HasSubstr("TRAIN: 1500 steps, mode steps 0-1499 -> global steps 0-2998 every 2\n"));
  EXPECT_THAT(result.out, HasSubstr("EVAL: 1500 steps, mode steps 0-1499 -> global steps 1-2999 every 2\n"));
}

// --values on a fixture written by smdebug itself, against its expected.json: small tensors'
// values exactly (as float32), large ones' min/max/mean (smdebug reduces in float32, litmus in
// float64: equal to about 1e-6) and NaN/inf counts.
TEST(InspectValuesFixture, MatchesTheExpectedJson) {
  const std::string fixture = "pt_run_complete";
  const Json expected = Json::parse(testing::ReadWholeFile(testing::FixturePath(fixture).string() + ".expected.json"));
  const auto result = RunProcess({LitmusBinary(), "inspect", testing::FixturePath(fixture).string(), "--values", "--step", "0"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::map<std::string, std::string> line_of;  // tensor -> its (only) value line
  std::istringstream lines(result.out);
  std::string current;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  ", 0) != 0) {
      current = line;
    } else {
      EXPECT_FALSE(line_of.contains(current)) << "one worker, one step: " << line;
      line_of[current] = line;
    }
  }
  const std::regex stats(R"(.*: float32 \(.*\) (\d+) elements: min (\S+) max (\S+) mean (\S+), nan (\d+), \+inf (\d+), -inf (\d+))");
  const std::regex listed(R"(.*: float32 \(.*\) \[(.*)\])");
  int compared_small = 0, compared_large = 0;
  for (const auto& [name, tensor] : expected["tensors"].items()) {
    if (!tensor.contains("per_step") || !tensor["per_step"].contains("0")) continue;
    const Json& value = tensor["per_step"]["0"]["by_worker"]["worker_0"]["value"];
    if (!value.is_object() || value.contains("error") || value["dtype"] != "float32") continue;
    ASSERT_TRUE(line_of.contains(name)) << name << "\n" << result.out;
    const std::string& line = line_of[name];
    std::smatch m;
    if (value["size"].get<int64_t>() > 16) {
      ASSERT_TRUE(std::regex_match(line, m, stats)) << line;
      EXPECT_EQ(std::stoll(m[1]), value["size"].get<int64_t>()) << name;
      const Json& r = tensor["per_step"]["0"]["by_worker"]["worker_0"]["reductions"];
      EXPECT_NEAR(std::stod(m[2]), r["min"]["value"].get<double>(), 1e-6 * std::abs(r["min"]["value"].get<double>())) << name;
      EXPECT_NEAR(std::stod(m[3]), r["max"]["value"].get<double>(), 1e-6 * std::abs(r["max"]["value"].get<double>())) << name;
      EXPECT_NEAR(std::stod(m[4]), r["mean"]["value"].get<double>(), 1e-9 + 1e-5 * std::abs(r["mean"]["value"].get<double>())) << name;
      EXPECT_EQ(std::stoll(m[5]), value["nan_count"].get<int64_t>()) << name;
      EXPECT_EQ(std::stoll(m[6]), value["posinf_count"].get<int64_t>()) << name;
      EXPECT_EQ(std::stoll(m[7]), value["neginf_count"].get<int64_t>()) << name;
      ++compared_large;
    } else {
      ASSERT_TRUE(std::regex_match(line, m, listed)) << line;
      std::vector<float> printed;
      std::istringstream items(m[1].str());
      for (std::string item; std::getline(items, item, ',');) printed.push_back(std::stof(item));
      ASSERT_EQ(printed.size(), value["values"].size()) << name;
      for (size_t i = 0; i < printed.size(); ++i) {
        if (value["values"][i].is_string()) continue;  // nan/inf spelled as strings
        EXPECT_EQ(printed[i], static_cast<float>(value["values"][i].get<double>())) << name << "[" << i << "]";
      }
      ++compared_small;
    }
  }
  EXPECT_GT(compared_large, 5);
  EXPECT_GT(compared_small, 0);
}

}  // namespace
}  // namespace litmus
