// End-to-end: `litmus inspect --json --no-values` reads a TrialOutline (steps as runs, no record
// locations). Its document must be byte for byte the one the library writes from a Trial, on the
// fixtures and on hand-made index files that exercise the catalog's rules (several workers that
// disagree, incomplete steps, the wait window, gaps, strides, repeated mode steps, stored
// reductions, shape-only entries), with and without filters; and its peak memory must not grow
// with the trial's records (measured with getrusage on a trial large enough that a catalog of
// every record shows).

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "litmus/engine/trial.h"
#include "litmus/engine/trial_document.h"
#include "litmus/engine/trial_outline.h"
#include "litmus/engine/trial_selection.h"
#include "hand_made_trials.h"
#include "inspect_variants.h"
#include "support/peak_rss.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::LitmusBinary;
using testing::PeakRssKib;
using testing::RunProcess;

// The library's document of the Trial (the reference), for `selection`, or the error message.
std::string TrialDocument(const std::string& dir, const TrialSelection& selection, int64_t window = 1000) {
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  options.incomplete_step_wait_window = window;
  auto trial = Trial::Open(Env::Default(), dir, options);
  if (!trial.ok()) return trial.status().message();
  auto selected = SelectedTrial::Resolve(**trial, selection);
  if (!selected.ok()) return selected.status().message();
  std::ostringstream out;
  TrialDocumentOptions doc_options;
  doc_options.include_values = false;
  const Status written = WriteTrialDocument(*selected, doc_options, out);
  if (!written.ok()) return written.message();
  return out.str();
}

std::vector<testing::InspectVariant> Variants() { return testing::InspectVariants("fc|loss|b$"); }

void ExpectSameDocuments(const std::string& dir, int64_t window = 1000) {
  for (const testing::InspectVariant& variant : Variants()) {
    std::vector<std::string> args = {LitmusBinary(), "inspect", dir, "--json", "--no-values"};
    args.insert(args.end(), variant.args.begin(), variant.args.end());
    const auto result = RunProcess(args, {{"SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", std::to_string(window)}});
    const std::string expected = TrialDocument(dir, variant.selection, window);
    if (result.exit_code == 0) {
      EXPECT_EQ(result.out, expected) << dir << " " << ::testing::PrintToString(variant.args);
    } else {
      // (An unknown collection: the same message.)
      EXPECT_NE(result.err.find(expected), std::string::npos) << dir << " " << result.err;
    }
  }
}

TEST(InspectOutline, FixtureDocumentsAreTheTrialDocuments) {
  for (const char* fixture : {"pt_ddp_two_workers", "pt_exploding", "pt_run_complete", "pt_run_partial",
                              "synthetic_dtypes"}) {
    ExpectSameDocuments(testing::FixturePath(fixture).string());
  }
}


TEST(InspectOutline, HandMadeTrialsGiveTheTrialDocuments) {
  {  // Several workers (names whose file order is not their name order), one behind, modes that
     // disagree between workers at a step, a tensor saved every other step, one step skipped.
    testing::TempDir dir;
    WriteCollections(dir, {"w", "w-1", "a"}, 3);
    for (int64_t step = 0; step < 12; ++step) {
      if (step == 7) continue;
      const std::string mode = step >= 4 && step < 6 ? "EVAL" : "TRAIN";
      const int64_t mode_step = mode == "EVAL" ? step - 4 : step;
      std::vector<std::string> tensors = {"fc1.w", "loss"};
      if (step % 2 == 0) tensors.push_back("fc1.b");
      if (step == 3) tensors.push_back("shape:fc2.w");
      if (step == 5) tensors.push_back("smdebug/reductions/fc1.w/max");
      WriteIndex(dir, step, "w", mode, mode_step, tensors);
      if (step < 10) WriteIndex(dir, step, "w-1", step == 2 ? "EVAL" : mode, step == 2 ? 9 : mode_step, {"loss"});
      if (step < 9) WriteIndex(dir, step, "a", mode, mode_step, {"fc1.w"});
    }
    ExpectSameDocuments(dir.str());
    ExpectSameDocuments(dir.str(), /*window=*/4);
  }
  {  // One worker, no end marker: a gap in the index folders, strides, mode steps that repeat
     // (a second TRAIN 0) and GLOBAL-mode files; an index file without entries.
    testing::TempDir dir;
    WriteCollections(dir, {"worker_0"}, 1);
    const std::vector<int64_t> steps = {0, 1, 2, 3, 10, 20, 30, 999, 1000, 1001, 3500, 3600, 3700, 5000};
    for (size_t i = 0; i < steps.size(); ++i) {
      const int64_t step = steps[i];
      std::string mode = i % 5 == 4 ? "GLOBAL" : "TRAIN";
      const int64_t mode_step = step == 30 ? 0 : static_cast<int64_t>(i);
      std::vector<std::string> tensors = {"fc1.w"};
      if (i % 3 == 0) tensors.push_back("loss");
      if (step == 1001) tensors.clear();
      WriteIndex(dir, step, "worker_0", mode, mode_step, tensors);
    }
    ExpectSameDocuments(dir.str());
    dir.WriteFile("training_job_end.ts", "0");
    ExpectSameDocuments(dir.str());
  }
}

// A tensor saved at every step, or every other step, is one run of steps, however many steps.
TEST(InspectOutline, RegularStepsAreOneRun) {
  testing::TempDir dir;
  WriteCollections(dir, {"worker_0"}, 1);
  for (int64_t step = 0; step < 2500; ++step) {
    std::vector<std::string> tensors = {"a"};
    if (step % 2 == 1) tensors.push_back("b");
    WriteIndex(dir, step, "worker_0", "TRAIN", step, tensors);
  }
  LITMUS_ASSERT_OK_AND_ASSIGN(auto outline, TrialOutline::Open(Env::Default(), dir.str(), TrialOptions()));
  ASSERT_NE(outline->TensorStepRuns("a"), nullptr);
  EXPECT_EQ(outline->TensorStepRuns("a")->size(), 2500u);
  EXPECT_EQ(outline->TensorStepRuns("a")->runs().size(), 1u);
  EXPECT_EQ(outline->TensorStepRuns("b")->size(), 1250u);
  EXPECT_EQ(outline->TensorStepRuns("b")->runs().size(), 1u);
  EXPECT_EQ(outline->step_runs(), 1u);
}

// The document of a trial with 8000 steps x 100 tensors takes about as much memory as that of a
// trial with 1000 steps (both larger than the chunks of index files read at a time): measured
// +1.0 MB with the outline, +14.2 MB with a Trial, whose catalog holds every one of the 700k
// records more (16-30 bytes each). The bound lies well apart from both.
TEST(InspectOutline, MemoryDoesNotGrowWithTheRecords) {
  testing::TempDir small, large;
  std::vector<std::string> tensors;
  for (int t = 0; t < 100; ++t) tensors.push_back("layer_" + std::to_string(t) + "/weight");
  for (const auto& [dir, steps] : {std::pair(&small, 1000), std::pair(&large, 8000)}) {
    WriteCollections(*dir, {"worker_0"}, 1);
    for (int64_t step = 0; step < steps; ++step) WriteIndex(*dir, step, "worker_0", "TRAIN", step, tensors);
    dir->WriteFile("training_job_end.ts", "0");
  }
  const long small_kib = PeakRssKib({LitmusBinary(), "inspect", small.str(), "--json", "--no-values"});
  const long large_kib = PeakRssKib({LitmusBinary(), "inspect", large.str(), "--json", "--no-values"});
  ASSERT_GT(small_kib, 0);
  ASSERT_GT(large_kib, 0);
  EXPECT_LT(large_kib - small_kib, 5 * 1024) << "peak RSS " << small_kib << " KiB at 1000 steps, " << large_kib
                                             << " KiB at 8000 steps";
}

}  // namespace
}  // namespace litmus
