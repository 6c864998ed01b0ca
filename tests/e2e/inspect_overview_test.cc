// End-to-end: the `litmus inspect` overview of a finished trial reads a TrialOutline and its
// records an index folder at a time (trial_folders.h). Its stdout must be byte for byte the
// summary the library builds from a Trial, its stderr the same damage lines in the same order
// (FindDamagedRecords: tensor, step, worker, then stored reductions), with the same exit code,
// on the fixtures and on hand-made trials whose damage spreads over tensors, steps, workers and
// index folders; and its peak memory must not grow with the trial's records.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "litmus/engine/trial.h"
#include "litmus/engine/trial_document.h"
#include "litmus/engine/trial_selection.h"
#include "litmus/engine/trial_summary.h"
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

// What `litmus inspect DIR` printed before the overview streamed: the summary of a Trial, then
// the damage lines of FindDamagedRecords (the first 20 and a count), as the command prints them.
Expected TrialOverview(const std::string& dir, const TrialSelection& selection, bool no_values) {
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  options.cache_bytes = 64 << 20;
  Expected e;
  auto trial = Trial::Open(Env::Default(), dir, options);
  if (!trial.ok()) return {2, "", trial.status().message()};
  auto selected = SelectedTrial::Resolve(**trial, selection);
  if (!selected.ok()) return {2, "", selected.status().message()};
  e.out = BuildTrialSummary(*selected);
  if (no_values) return e;
  const DamageReport damage = FindDamagedRecords(*selected, 20);
  if (damage.count == 0) return e;
  e.exit_code = 2;
  for (const Status& s : damage.listed) e.err += "litmus: error: " + s.message() + "\n";
  const int64_t unlisted = damage.count - static_cast<int64_t>(damage.listed.size());
  e.err += "litmus: error: " + std::to_string(damage.count) + " damaged record" + (damage.count == 1 ? "" : "s") +
           " in trial " + dir + (unlisted > 0 ? " (" + std::to_string(unlisted) + " more not listed)" : "") +
           ": the training job's data is incomplete or corrupt\n";
  return e;
}

std::vector<testing::InspectVariant> Variants() {
  std::vector<testing::InspectVariant> v = testing::InspectVariants("fc|loss|b$|t1");
  TrialSelection late;  // the second index folder and beyond
  late.steps = StepRange{999, 2600};
  v.push_back({{"--step", "999:2600"}, late});
  return v;
}

void ExpectSameOverviews(const std::string& dir) {
  for (const testing::InspectVariant& variant : Variants()) {
    for (const bool no_values : {false, true}) {
      std::vector<std::string> args = {LitmusBinary(), "inspect", dir};
      args.insert(args.end(), variant.args.begin(), variant.args.end());
      if (no_values) args.push_back("--no-values");
      const auto result = RunProcess(args);
      const Expected expected = TrialOverview(dir, variant.selection, no_values);
      const std::string what = dir + " " + ::testing::PrintToString(args);
      EXPECT_EQ(result.exit_code, expected.exit_code) << what << result.err;
      EXPECT_EQ(result.out, expected.out) << what;
      if (expected.out.empty()) {
        // (An unknown collection: the same message.)
        EXPECT_NE(result.err.find(expected.err), std::string::npos) << what << result.err;
      } else {
        EXPECT_EQ(result.err, expected.err) << what;
      }
    }
  }
}

TEST(InspectOverview, FixtureOverviewsAreTheTrialOverviews) {
  for (const std::string_view fixture : testing::kInspectFixtures) ExpectSameOverviews(testing::FixturePath(fixture).string());
}

// A damaged fixture (a bad record length at step 3): the same lines.
TEST(InspectOverview, DamagedFixture) {
  testing::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(testing::CopyDamagedFixture(dir));
  ExpectSameOverviews(dir.str());
}


// Damage everywhere, over several index folders: the first 20 damaged records in tensor order
// are not the first 20 met step by step, so listing them as the folders come would differ.
TEST(InspectOverview, DamageIsListedTensorByTensor) {
  {  // One worker, 30 tensors, steps in four index folders, a stored reduction, a shape-only entry.
    testing::TempDir dir;
    WriteCollections(dir, {"worker_0"}, 1);
    const std::vector<int64_t> steps = {0, 1, 2, 3, 4, 998, 999, 1000, 1500, 2500, 3999};
    for (size_t i = 0; i < steps.size(); ++i) {
      std::vector<std::string> tensors;
      for (int t = 0; t < 30; ++t) {
        if (t % 7 == 3 && i % 2 == 1) continue;  // some tensors every other step
        tensors.push_back("t" + std::to_string(t));
      }
      tensors.push_back(i == 2 ? "shape:fc1.b" : "fc1.b");
      if (i % 3 == 0) tensors.push_back("red:loss");
      WriteIndex(dir, steps[i], "worker_0", i < 6 ? "TRAIN" : "EVAL", i < 6 ? static_cast<int64_t>(i) : steps[i] - 990,
                 tensors);
    }
    dir.WriteFile("training_job_end.ts", "0");
    ExpectSameOverviews(dir.str());
  }
  {  // Several workers (file order not name order), stored reductions, modes that disagree.
    testing::TempDir dir;
    WriteCollections(dir, {"w", "w-1", "a"}, 3);
    for (int64_t step = 0; step < 12; ++step) {
      if (step == 7) continue;
      const std::string mode = step >= 4 && step < 6 ? "EVAL" : "TRAIN";
      const int64_t mode_step = mode == "EVAL" ? step - 4 : step;
      std::vector<std::string> tensors = {"fc1.w", "loss"};
      if (step % 2 == 0) tensors.push_back("fc1.b");
      if (step == 3) tensors.push_back("shape:fc2.w");
      if (step % 5 == 0) tensors.push_back("red:fc1.w");
      WriteIndex(dir, step, "w", mode, mode_step, tensors);
      if (step < 10) WriteIndex(dir, step, "w-1", step == 2 ? "EVAL" : mode, step == 2 ? 9 : mode_step, {"loss", "red:loss"});
      if (step < 9) WriteIndex(dir, step, "a", mode, mode_step, {"fc1.w"});
    }
    dir.WriteFile("training_job_end.ts", "0");
    ExpectSameOverviews(dir.str());
  }
}

// An index file outside its step's folder (step 5 in folder 000000003, in step order all the
// same): the folders do not hold every record the outline lists, so the overview reads a Trial.
TEST(InspectOverview, IndexFileOutsideItsFolderFallsBackToTheTrial) {
  testing::TempDir dir;
  WriteCollections(dir, {"worker_0"}, 1);
  for (int64_t step = 0; step < 5; ++step) WriteIndex(dir, step, "worker_0", "TRAIN", step, {"a", "b"});
  dir.WriteFile("index/000000003/000000000005_worker_0.json",
                "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 5, \"event_file_name\": \"events/x.tfevents\"}, "
                "\"tensor_payload\": [{\"tensorname\": \"a\", \"start_idx\": 0, \"length\": 40}], "
                "\"shape_payload\": []}");
  dir.WriteFile("training_job_end.ts", "0");
  ExpectSameOverviews(dir.str());
}

// The overview of a trial of 8000 steps x 100 scalars takes about as much memory as that of a
// trial of 1000 steps: the records are checked a folder (1000 steps) at a time. Measured +0.9 to
// +1.7 MB (what grows is per step: the outline's step lists), against +13.5 MB when the
// overview read a Trial, whose catalog holds every one of the 700k records more (~20 bytes
// each). The bound lies well apart from both.
TEST(InspectOverview, MemoryDoesNotGrowWithTheRecords) {
  testing::TempDir small, large;
  ASSERT_NO_FATAL_FAILURE(testing::WriteScalarTrials({{&small, 1000}, {&large, 8000}}));
  const long small_kib = PeakRssKib({LitmusBinary(), "inspect", small.str()});
  const long large_kib = PeakRssKib({LitmusBinary(), "inspect", large.str()});
  ASSERT_GT(small_kib, 0);
  ASSERT_GT(large_kib, 0);
  EXPECT_LT(large_kib - small_kib, 5 * 1024) << "peak RSS " << small_kib << " KiB at 1000 steps, " << large_kib
                                             << " KiB at 8000 steps";
}

}  // namespace
}  // namespace litmus
