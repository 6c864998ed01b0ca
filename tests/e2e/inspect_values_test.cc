// End-to-end: `litmus inspect --values` and `litmus inspect --json` (with values) of a finished
// trial read its records an index folder at a time and spill each tensor's part of each folder
// to a temporary file (trial_folders.h). Their stdout must be byte for byte what the library
// writes from a Trial (WriteTrialValues, WriteTrialDocument), with the same exit code and error,
// on the fixtures, on a trial over several index folders, on damage that the folders meet in
// another order than the output (the output stops at the first damaged record in tensor order),
// and on layouts the folders cannot represent (then a Trial is read); and peak memory must not
// grow with the trial's records.

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "litmus/engine/trial.h"
#include "litmus/engine/trial_document.h"
#include "litmus/engine/trial_selection.h"
#include "litmus/engine/trial_values.h"
#include "litmus/writer/writer.h"
#include "hand_made_trials.h"
#include "inspect_variants.h"
#include "scalar_trials.h"
#include "support/peak_rss.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::LitmusBinary;
using testing::PeakRssKib;
using testing::RunProcess;

struct Expected {
  int exit_code = 0;
  std::string out, err;
};

// What `litmus inspect DIR --values` / `--json` printed when they read a Trial: the library's
// listing or document of a Trial opened as the command opens it, and its error line.
Expected TrialOutput(const std::string& dir, const TrialSelection& selection, bool json) {
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  options.cache_bytes = 64 << 20;
  auto trial = Trial::Open(Env::Default(), dir, options);
  if (!trial.ok()) return {2, "", trial.status().message()};
  auto selected = SelectedTrial::Resolve(**trial, selection);
  if (!selected.ok()) return {2, "", selected.status().message()};
  std::ostringstream out;
  const Status written = json ? WriteTrialDocument(*selected, TrialDocumentOptions{}, out)
                              : WriteTrialValues(*selected, TrialValuesOptions{}, out);
  Expected e;
  e.out = out.str();
  if (!written.ok()) {
    e.exit_code = 2;
    e.err = "litmus: error: " + written.message() + "\n";
  }
  return e;
}

std::vector<testing::InspectVariant> Variants() {
  std::vector<testing::InspectVariant> v = testing::InspectVariants("fc|loss|b$|t1");
  TrialSelection late;  // the second index folder and beyond
  late.steps = StepRange{999, 2600};
  v.push_back({{"--step", "999:2600"}, late});
  return v;
}

void ExpectSameOutputs(const std::string& dir) {
  for (const testing::InspectVariant& variant : Variants()) {
    for (const bool json : {false, true}) {
      std::vector<std::string> args = {LitmusBinary(), "inspect", dir, json ? "--json" : "--values"};
      args.insert(args.end(), variant.args.begin(), variant.args.end());
      const auto result = RunProcess(args);
      const Expected expected = TrialOutput(dir, variant.selection, json);
      const std::string what = dir + " " + ::testing::PrintToString(args);
      EXPECT_EQ(result.exit_code, expected.exit_code) << what << result.err;
      EXPECT_EQ(result.out, expected.out) << what;
      if (expected.out.empty() && expected.exit_code != 0) {
        // (An unknown collection: the same message.)
        EXPECT_NE(result.err.find(expected.err), std::string::npos) << what << result.err;
      } else {
        EXPECT_EQ(result.err, expected.err) << what;
      }
    }
  }
}

TEST(InspectValues, FixtureOutputsAreTheTrialOutputs) {
  for (const std::string_view fixture : testing::kInspectFixtures) ExpectSameOutputs(testing::FixturePath(fixture).string());
}

// A damaged fixture (a bad record length at step 3): the output stops at the same record.
TEST(InspectValues, DamagedFixture) {
  testing::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(testing::CopyDamagedFixture(dir));
  ExpectSameOutputs(dir.str());
}

// A trial written by litmus::writer over three index folders (2100 steps; TRAIN, then EVAL from
// step 1500, the mode steps counting on), tensors of 1, 4 and 40 float32 and an int32 vector.
void WriteFoldersTrial(const testing::TempDir& dir) {
  writer::WriterOptions options;
  options.save_config = writer::SaveConfig::Every(1);
  auto w = writer::Writer::Open(dir.str(), options);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->SetMode(Mode::kTrain).ok());
  for (int64_t step = 0; step < 2100; ++step) {
    if (step == 1500) {
      ASSERT_TRUE((*w)->SetMode(Mode::kEval).ok());
    }
    ASSERT_TRUE((*w)->BeginStep().ok());
    const float s = static_cast<float>(step);
    ASSERT_TRUE((*w)->SaveTensor("loss", std::vector<float>{s / 7}, {}).ok());
    ASSERT_TRUE((*w)->SaveTensor("fc1.b", std::vector<float>{s, -s, s / 3, 0.5f}, {4}).ok());
    std::vector<float> big(40);
    for (int i = 0; i < 40; ++i) big[i] = s * i - 3;
    ASSERT_TRUE((*w)->SaveTensor("fc1.w", big, {4, 10}).ok());
    if (step % 3 == 0) {
      ASSERT_TRUE((*w)->SaveTensor("t1", std::vector<int32_t>{1, 2, static_cast<int32_t>(step)}, {3}).ok());
    }
    ASSERT_TRUE((*w)->EndStep().ok());
  }
  ASSERT_TRUE((*w)->Close().ok());
}

TEST(InspectValues, SeveralIndexFolders) {
  testing::TempDir dir;
  WriteFoldersTrial(dir);
  ExpectSameOutputs(dir.str());
}

// Flips a byte inside the record of `tensor` at `step` (its CRC no longer matches): DataLoss.
void DamageRecord(const testing::TempDir& dir, int64_t step, const std::string& tensor) {
  char relative[96];
  std::snprintf(relative, sizeof relative, "index/%09lld/%012lld_worker_0.json", static_cast<long long>(step / 1000),
                static_cast<long long>(step));
  LITMUS_ASSERT_OK_AND_ASSIGN(const std::string text, Env::Default()->ReadFileToString(dir.str() + "/" + relative));
  const auto index = nlohmann::json::parse(text);
  for (const auto& record : index["tensor_payload"]) {
    if (record["tensorname"] != tensor) continue;
    const std::string event = dir.str() + "/" + index["meta"]["event_file_name"].get<std::string>();
    FILE* f = std::fopen(event.c_str(), "r+b");
    ASSERT_NE(f, nullptr) << event;
    std::fseek(f, record["start_idx"].get<long>() + record["length"].get<long>() - 6, SEEK_SET);
    const int c = std::fgetc(f);
    std::fseek(f, -1, SEEK_CUR);
    std::fputc(c ^ 0x55, f);
    std::fclose(f);
    return;
  }
  FAIL() << tensor << " not at step " << step;
}

// Damage that the folders meet in another order than the output's: "fc1.b" (first in name
// order) at step 1800, in the last folder; "loss" at step 20 and "t1" at step 1002. The outputs
// stop at fc1.b's step 1800, with its records before it written; filtered, at the others.
TEST(InspectValues, DamageStopsWhereTheTrialOutputStops) {
  testing::TempDir dir;
  WriteFoldersTrial(dir);
  DamageRecord(dir, 1800, "fc1.b");
  DamageRecord(dir, 20, "loss");
  DamageRecord(dir, 1002, "t1");
  const Expected expected = TrialOutput(dir.str(), {}, /*json=*/true);
  ASSERT_EQ(expected.exit_code, 2);
  ASSERT_NE(expected.err.find("000000001800_worker_0.tfevents"), std::string::npos) << expected.err;
  ASSERT_NE(expected.err.find("'fc1.b'"), std::string::npos) << expected.err;
  ExpectSameOutputs(dir.str());
}


// Layouts where a record's value may resolve to another folder's step, or a folder does not hold
// its steps' index files: the command reads a Trial, and its output is the Trial's.
TEST(InspectValues, LayoutsTheFoldersDoNotRepresent) {
  {  // Workers whose (mode, mode step) at a step disagree; shape-only entries.
    testing::TempDir dir;
    WriteCollections(dir, {"w", "w-1"}, 2);
    for (int64_t step = 0; step < 6; ++step) {
      WriteIndex(dir, step, "w", "TRAIN", step, {"fc1.w", "loss", step == 3 ? "shape:fc1.b" : "fc1.b"});
      WriteIndex(dir, step, "w-1", step == 2 ? "EVAL" : "TRAIN", step == 2 ? 9 : step, {"loss"});
    }
    dir.WriteFile("training_job_end.ts", "0");
    ExpectSameOutputs(dir.str());
  }
  {  // A repeated mode step (TRAIN 0 at steps 0 and 1500) and GLOBAL-mode steps, over folders.
    testing::TempDir dir;
    WriteCollections(dir, {"worker_0"}, 1);
    const std::vector<int64_t> steps = {0, 1, 2, 999, 1000, 1500, 2500};
    for (size_t i = 0; i < steps.size(); ++i) {
      const bool global = i == 4;
      WriteIndex(dir, steps[i], "worker_0", global ? "GLOBAL" : "TRAIN", steps[i] == 1500 ? 0 : static_cast<int64_t>(i),
                 {"fc1.w", "loss"});
    }
    dir.WriteFile("training_job_end.ts", "0");
    ExpectSameOutputs(dir.str());
  }
  {  // Step 1005's index file in folder 000000000.
    testing::TempDir dir;
    WriteCollections(dir, {"worker_0"}, 1);
    for (int64_t step : {0, 1, 2, 1005}) {
      WriteIndex(dir, step, "worker_0", "TRAIN", step, {"a", "b"}, "", step == 1005 ? "000000000" : "");
    }
    dir.WriteFile("training_job_end.ts", "0");
    ExpectSameOutputs(dir.str());
  }
}

// --values and --json of a trial of 8000 steps x 100 scalars take about as much memory as those
// of a trial of 1000 steps: one folder's catalog at a time, the rest spilled to a file. The
// bound lies well apart from both: with a Trial of the whole trial (before) the difference was
// +14.0 MB (--values) and +13.3 MB (--json), ~20 bytes for each of the 700k records more.
TEST(InspectValues, MemoryDoesNotGrowWithTheRecords) {
  testing::TempDir small, large;
  ASSERT_NO_FATAL_FAILURE(testing::WriteScalarTrials({{&small, 1000}, {&large, 8000}}));
  // (Eleven of the tensors, for time: the catalog of every record is read all the same.)
  for (const char* what : {"--values", "--json"}) {
    const long small_kib = PeakRssKib({LitmusBinary(), "inspect", small.str(), what, "--tensor", "^layer_1"});
    const long large_kib = PeakRssKib({LitmusBinary(), "inspect", large.str(), what, "--tensor", "^layer_1"});
    ASSERT_GT(small_kib, 0);
    ASSERT_GT(large_kib, 0);
    EXPECT_LT(large_kib - small_kib, 5 * 1024) << what << ": peak RSS " << small_kib << " KiB at 1000 steps, "
                                               << large_kib << " KiB at 8000 steps";
  }
}

}  // namespace
}  // namespace litmus
