// Trial step bookkeeping on hand-written trials: completeness across workers, the incomplete-step
// window, the end marker, the availability table (§8.5), modes, incremental refresh (including
// new P9 folders and straggler files), range filtering, stored-reduction folding.
#include <gtest/gtest.h>

#include "litmus/engine/trial.h"
#include "litmus/format/forwarding_env.h"
#include "synthetic_trial.h"

namespace litmus {
namespace {

using testing::SyntheticTrial;

TrialOptions NoDelay() {
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  return options;
}

std::unique_ptr<Trial> OpenOrDie(const SyntheticTrial& t, TrialOptions options = NoDelay()) {
  StatusOr<std::unique_ptr<Trial>> trial = Trial::Open(Env::Default(), t.root(), options);
  EXPECT_TRUE(trial.ok()) << trial.status().ToString();
  return trial.ok() ? std::move(trial).value() : nullptr;
}

using Steps = std::vector<int64_t>;

TEST(TrialCompletenessTest, LaggingWorker) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0", "worker_1"}, 2);
  t.WriteSimpleStep(0, "worker_0", Mode::kTrain, 0);
  t.WriteSimpleStep(1, "worker_0", Mode::kTrain, 1);
  std::unique_ptr<Trial> trial = OpenOrDie(t);
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(trial->num_workers(), 2);
  EXPECT_EQ(trial->workers(), (std::vector<std::string>{"worker_0", "worker_1"}));
  EXPECT_EQ(trial->Steps(), Steps{});
  EXPECT_EQ(trial->Steps(Mode::kGlobal, true), (Steps{0, 1}));
  EXPECT_EQ(trial->Steps(Mode::kTrain), Steps{});
  EXPECT_EQ(trial->Steps(Mode::kTrain, true), (Steps{0, 1}));
  EXPECT_EQ(trial->last_complete_step(), -1);
  EXPECT_FALSE(trial->IsStepComplete(0));
  EXPECT_EQ(trial->StepAvailability(0), StepState::kNotYetAvailable);
  EXPECT_EQ(trial->TensorSteps("loss"), Steps{});
  EXPECT_EQ(trial->TensorSteps("loss", true), (Steps{0, 1}));
  // Even an incomplete step's value can be read (smdebug finds the entry before checking state).
  LITMUS_EXPECT_OK(trial->Value("loss", 0).status());

  t.WriteSimpleStep(0, "worker_1", Mode::kTrain, 0);  // both wrote step 0 now
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(trial->last_complete_step(), 0);
  EXPECT_EQ(trial->Steps(), (Steps{0}));
  EXPECT_EQ(trial->StepAvailability(0), StepState::kAvailable);
  EXPECT_EQ(trial->StepAvailability(1), StepState::kNotYetAvailable);
  EXPECT_EQ(trial->StepAvailability(2), StepState::kNotYetAvailable);
  EXPECT_EQ(trial->WorkersForStep(0), (std::vector<std::string>{"worker_0", "worker_1"}));
  EXPECT_EQ(trial->WorkersForStep(1), (std::vector<std::string>{"worker_0"}));

  // A later complete step makes the earlier ones complete too; a skipped step is UNAVAILABLE.
  t.WriteSimpleStep(3, "worker_0", Mode::kTrain, 2);
  t.WriteSimpleStep(3, "worker_1", Mode::kTrain, 2);
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(trial->last_complete_step(), 3);
  EXPECT_EQ(trial->Steps(), (Steps{0, 1, 3}));
  EXPECT_TRUE(trial->IsStepComplete(1));
  EXPECT_FALSE(trial->IsStepComplete(2));
  EXPECT_EQ(trial->StepAvailability(1), StepState::kAvailable);
  EXPECT_EQ(trial->StepAvailability(2), StepState::kUnavailable);
  EXPECT_EQ(trial->StepAvailability(4), StepState::kNotYetAvailable);
  EXPECT_EQ(trial->TensorSteps("loss"), (Steps{0, 1, 3}));
  EXPECT_EQ(GetTrialError(trial->Value("loss", 2).status()), TrialError::kStepUnavailable);
  EXPECT_EQ(GetTrialError(trial->Value("loss", 4).status()), TrialError::kStepNotYetAvailable);
  EXPECT_EQ(GetTrialError(trial->Value("loss", 1, Mode::kGlobal, "worker_1").status()), TrialError::kInvalidWorker);
  EXPECT_FALSE(trial->loaded_all_steps());
}

TEST(TrialCompletenessTest, ExtraWorkersDoNotUndoCompleteness) {
  // last_complete_step is raised the moment a step's worker count *equals* num_workers (files
  // are read one at a time, in path order); a further worker does not undo it.
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  t.WriteSimpleStep(0, "worker_0", Mode::kTrain, 0);
  t.WriteSimpleStep(1, "worker_0", Mode::kTrain, 1);
  t.WriteSimpleStep(1, "worker_1", Mode::kTrain, 1);
  t.WriteSimpleStep(2, "worker_1", Mode::kTrain, 2);
  std::unique_ptr<Trial> trial = OpenOrDie(t);
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(trial->last_complete_step(), 2);
  EXPECT_EQ(trial->Steps(), (Steps{0, 1, 2}));
  EXPECT_EQ(trial->WorkersForStep(1), (std::vector<std::string>{"worker_0", "worker_1"}));
  EXPECT_EQ(trial->workers(), std::vector<std::string>{"worker_0"});  // from collections files only
}

TEST(TrialCompletenessTest, IncompleteStepWaitWindow) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0", "worker_1"}, 2);
  for (int64_t s = 0; s < 6; ++s) t.WriteSimpleStep(s, "worker_0", Mode::kTrain, s);  // worker_1 is dead
  TrialOptions options = NoDelay();
  options.incomplete_step_wait_window = 4;
  std::unique_ptr<Trial> trial = OpenOrDie(t, options);
  ASSERT_NE(trial, nullptr);
  // K = 6 known steps, 6 - (-1 + 1) = 6 > 4, so last_complete_step = -1 + 4 / 2 = 1.
  EXPECT_EQ(trial->last_complete_step(), 1);
  EXPECT_EQ(trial->Steps(), (Steps{0, 1}));
  EXPECT_EQ(trial->StepAvailability(1), StepState::kAvailable);
  EXPECT_EQ(trial->StepAvailability(2), StepState::kNotYetAvailable);

  // Applied once per refresh that finds new files: K = 8, 8 - 2 = 6 > 4 -> 3.
  t.WriteSimpleStep(6, "worker_0", Mode::kTrain, 6);
  t.WriteSimpleStep(7, "worker_0", Mode::kTrain, 7);
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(trial->last_complete_step(), 3);
  EXPECT_EQ(trial->Steps(), (Steps{0, 1, 2, 3}));
  // No new files: nothing moves.
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(trial->last_complete_step(), 3);

  // With the default window nothing is forced.
  std::unique_ptr<Trial> patient = OpenOrDie(t);
  ASSERT_NE(patient, nullptr);
  EXPECT_EQ(patient->last_complete_step(), -1);
  EXPECT_EQ(patient->Steps(), Steps{});
}

TEST(TrialCompletenessTest, EndMarker) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0", "worker_1"}, 2);
  for (const int64_t s : {0, 1, 2, 5}) t.WriteSimpleStep(s, "worker_0", Mode::kTrain, s);
  t.WriteSimpleStep(0, "worker_1", Mode::kTrain, 0);
  std::unique_ptr<Trial> trial = OpenOrDie(t);
  ASSERT_NE(trial, nullptr);
  EXPECT_FALSE(trial->end_marker_seen());
  EXPECT_EQ(trial->Steps(), (Steps{0}));
  EXPECT_EQ(trial->StepAvailability(9), StepState::kNotYetAvailable);
  EXPECT_EQ(GetTrialError(trial->Value("loss", 9).status()), TrialError::kStepNotYetAvailable);

  t.WriteEndMarker();
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_TRUE(trial->end_marker_seen());
  EXPECT_TRUE(trial->loaded_all_steps());
  EXPECT_EQ(trial->last_complete_step(), 5);
  EXPECT_EQ(trial->Steps(), (Steps{0, 1, 2, 5}));
  EXPECT_EQ(trial->TensorSteps("loss"), (Steps{0, 1, 2, 5}));
  EXPECT_EQ(trial->StepAvailability(2), StepState::kAvailable);
  EXPECT_EQ(trial->StepAvailability(3), StepState::kUnavailable);
  EXPECT_EQ(trial->StepAvailability(5), StepState::kAvailable);
  EXPECT_EQ(trial->StepAvailability(6), StepState::kNoMoreData);
  EXPECT_EQ(GetTrialError(trial->Value("loss", 3).status()), TrialError::kStepUnavailable);
  EXPECT_EQ(GetTrialError(trial->Value("loss", 6).status()), TrialError::kNoMoreData);
  EXPECT_EQ(GetTrialError(trial->Value("loss", 6).status()), TrialError::kNoMoreData);

  // After the final refresh nothing is listed again.
  const int64_t parsed = trial->index_files_parsed();
  t.WriteSimpleStep(7, "worker_0", Mode::kTrain, 6);
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(trial->index_files_parsed(), parsed);
  EXPECT_EQ(trial->Steps(), (Steps{0, 1, 2, 5}));
}

// The end marker on a complete trial ends it at once, whatever SMDEBUG_TRAINING_END_DELAY_REFRESH
// says (smdebug sleeps the delay every time; nothing can arrive, so we do not).
TEST(TrialCompletenessTest, CompleteTrialEndsAtTheMarkerWithoutWaiting) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0", "worker_1"}, 2);
  for (const int64_t s : {0, 1}) {
    t.WriteSimpleStep(s, "worker_0", Mode::kTrain, s);
    t.WriteSimpleStep(s, "worker_1", Mode::kTrain, s);
  }
  t.WriteEndMarker();
  TrialOptions options;
  options.training_end_delay_refresh_s = 3600;  // a wait would hang the test
  std::unique_ptr<Trial> trial = OpenOrDie(t, options);
  ASSERT_NE(trial, nullptr);
  EXPECT_TRUE(trial->loaded_all_steps());
  EXPECT_EQ(trial->StepAvailability(2), StepState::kNoMoreData);
}

// A step that a worker has not written yet when the marker appears (the first worker to finish
// writes it) keeps the trial open for up to the delay, and the late worker's files are read.
TEST(TrialCompletenessTest, IncompleteStepAtTheMarkerWaitsForTheLateWorker) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0", "worker_1"}, 2);
  t.WriteSimpleStep(0, "worker_0", Mode::kTrain, 0);
  t.WriteSimpleStep(0, "worker_1", Mode::kTrain, 0);
  t.WriteSimpleStep(1, "worker_0", Mode::kTrain, 1);
  t.WriteEndMarker();
  TrialOptions options;
  options.training_end_delay_refresh_s = 3600;
  std::unique_ptr<Trial> trial = OpenOrDie(t, options);
  ASSERT_NE(trial, nullptr);
  EXPECT_TRUE(trial->end_marker_seen());
  EXPECT_FALSE(trial->loaded_all_steps()) << "step 1 lacks worker_1";
  EXPECT_EQ(trial->StepAvailability(1), StepState::kNotYetAvailable);
  LITMUS_ASSERT_OK(trial->Refresh());  // lists again; does not sleep
  EXPECT_FALSE(trial->loaded_all_steps());
  t.WriteSimpleStep(1, "worker_1", Mode::kTrain, 1);
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_TRUE(trial->loaded_all_steps());
  EXPECT_EQ(trial->WorkersForStep(1), (std::vector<std::string>{"worker_0", "worker_1"}));
  EXPECT_EQ(trial->StepAvailability(1), StepState::kAvailable);
  EXPECT_EQ(trial->StepAvailability(2), StepState::kNoMoreData);
}

// The delay stays the upper bound: a worker that never writes its step does not hold the trial
// open beyond it (here 0 s: loaded at the marker, the incomplete step counts as complete).
TEST(TrialCompletenessTest, IncompleteStepAtTheMarkerEndsAfterTheDelay) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0", "worker_1"}, 2);
  t.WriteSimpleStep(0, "worker_0", Mode::kTrain, 0);
  t.WriteEndMarker();
  std::unique_ptr<Trial> trial = OpenOrDie(t);  // delay 0
  ASSERT_NE(trial, nullptr);
  EXPECT_TRUE(trial->loaded_all_steps());
  EXPECT_EQ(trial->StepAvailability(0), StepState::kAvailable);
}

TEST(TrialCompletenessTest, EndMarkerWithoutSteps) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  t.WriteEndMarker();
  std::unique_ptr<Trial> trial = OpenOrDie(t);
  ASSERT_NE(trial, nullptr);
  EXPECT_TRUE(trial->loaded_all_steps());
  EXPECT_EQ(trial->last_complete_step(), -1);
  EXPECT_EQ(trial->StepAvailability(0), StepState::kNoMoreData);
}

TEST(TrialCompletenessTest, AvailabilityInModeSteps) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  t.WriteSimpleStep(0, "worker_0", Mode::kTrain, 0);
  t.WriteSimpleStep(1, "worker_0", Mode::kEval, 0);
  t.WriteSimpleStep(2, "worker_0", Mode::kTrain, 1);
  t.WriteSimpleStep(3, "worker_0", Mode::kEval, 2);  // EVAL mode step 1 skipped
  std::unique_ptr<Trial> trial = OpenOrDie(t);
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(trial->Steps(Mode::kEval), (Steps{0, 2}));
  EXPECT_EQ(trial->GlobalStep(Mode::kEval, 2), 3);
  EXPECT_FALSE(trial->GlobalStep(Mode::kEval, 1).has_value());
  EXPECT_EQ(trial->GlobalStep(Mode::kGlobal, 42), 42);
  EXPECT_EQ(trial->StepAvailability(0, Mode::kEval), StepState::kAvailable);
  EXPECT_EQ(trial->StepAvailability(1, Mode::kEval), StepState::kUnavailable);  // global 3 complete
  EXPECT_EQ(trial->StepAvailability(3, Mode::kEval), StepState::kNotYetAvailable);
  EXPECT_EQ(trial->StepAvailability(2, Mode::kTrain), StepState::kNotYetAvailable);
  EXPECT_EQ(trial->StepAvailability(0, Mode::kPredict), StepState::kNotYetAvailable);
  EXPECT_FALSE(trial->HasMode(Mode::kPredict));
  EXPECT_TRUE(trial->HasMode(Mode::kGlobal));
  // Value by mode step goes through the mode map; by global step through global_to_mode.
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr by_mode, trial->Value("loss", 2, Mode::kEval));
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr by_global, trial->Value("loss", 3));
  EXPECT_EQ(by_mode.get(), by_global.get());  // same cache entry
  EXPECT_EQ(GetTrialError(trial->Value("loss", 1, Mode::kEval).status()), TrialError::kStepUnavailable);
  EXPECT_EQ(trial->TensorSteps("loss", Mode::kEval), (Steps{0, 2}));
  EXPECT_EQ(trial->TensorSteps("loss", Mode::kTrain), (Steps{0, 1}));
}

TEST(TrialCompletenessTest, PerTensorModeStepsCompareModeStepWithLastCompleteStep) {
  // smdebug's Tensor.steps(mode=M) keeps a mode step s when s <= last_complete_step (a global
  // step); the trial-level steps(mode=M) checks the global step instead (§8.3).
  SyntheticTrial t;
  t.WriteCollections({"worker_0", "worker_1"}, 2);
  t.WriteSimpleStep(0, "worker_0", Mode::kTrain, 0);
  t.WriteSimpleStep(0, "worker_1", Mode::kTrain, 0);
  t.WriteSimpleStep(1, "worker_0", Mode::kEval, 0);  // incomplete: worker_1 has not written it
  std::unique_ptr<Trial> trial = OpenOrDie(t);
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(trial->last_complete_step(), 0);
  EXPECT_EQ(trial->Steps(Mode::kEval), Steps{});
  EXPECT_EQ(trial->Steps(Mode::kEval, true), (Steps{0}));
  EXPECT_EQ(trial->TensorSteps("loss", Mode::kEval), (Steps{0}));
  EXPECT_EQ(trial->TensorSteps("loss"), (Steps{0}));
  EXPECT_EQ(trial->TensorSteps("loss", Mode::kGlobal, true), (Steps{0, 1}));
}

TEST(TrialCompletenessTest, FirstSeenWinsAndGlobalMode) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0", "worker_1"}, 2);
  // The workers disagree about step 0's mode; worker_0's file sorts first and wins.
  t.WriteSimpleStep(0, "worker_0", Mode::kTrain, 0);
  t.WriteSimpleStep(0, "worker_1", Mode::kEval, 0);
  // A GLOBAL-mode step (FileWriter's default): mode step = global step.
  t.WriteSimpleStep(7, "worker_0", Mode::kGlobal, 7);
  t.WriteSimpleStep(7, "worker_1", Mode::kGlobal, 7);
  std::unique_ptr<Trial> trial = OpenOrDie(t);
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(trial->ModeOfGlobalStep(0), std::make_pair(Mode::kTrain, int64_t{0}));
  EXPECT_EQ(trial->ModeOfGlobalStep(7), std::make_pair(Mode::kGlobal, int64_t{7}));
  EXPECT_EQ(trial->GlobalStep(Mode::kEval, 0), 0);  // mode_to_global is filled by every entry
  EXPECT_TRUE(trial->HasMode(Mode::kEval));
  EXPECT_EQ(trial->Steps(Mode::kTrain), (Steps{0}));
  EXPECT_EQ(trial->Steps(Mode::kGlobal), (Steps{0, 7}));
  EXPECT_EQ(trial->TensorNamesForMode(Mode::kTrain), (std::vector<std::string>{"loss"}));
  const std::vector<TensorEntry> entries = trial->Entries("loss", 0);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].mode, Mode::kTrain);
  EXPECT_EQ(entries[1].mode, Mode::kEval);  // each entry keeps its own file's mode
  LITMUS_EXPECT_OK(trial->Value("loss", 7).status());
  LITMUS_EXPECT_OK(trial->Value("loss", 7, Mode::kGlobal, "worker_1").status());
}

TEST(TrialCompletenessTest, IncrementalRefreshAndNewFolders) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  for (int64_t s = 997; s < 1000; ++s) t.WriteSimpleStep(s, "worker_0", Mode::kTrain, s);
  // Files that are not final index files are ignored.
  t.WriteRaw("index/000000000/000000001000_worker_0.json.tmp", "");
  t.WriteRaw("index/000000000/000000000005_worker_0.csv", "garbage");
  t.WriteRaw("index/000000000/notes.txt", "garbage");
  std::unique_ptr<Trial> trial = OpenOrDie(t);
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(trial->index_files_parsed(), 3);
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(trial->index_files_parsed(), 3);

  // Step 1000 lives in index/000000001/.
  t.WriteSimpleStep(1000, "worker_0", Mode::kTrain, 1000);
  t.WriteSimpleStep(1001, "worker_0", Mode::kTrain, 1001);
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(trial->index_files_parsed(), 5);
  EXPECT_EQ(trial->Steps(), (Steps{997, 998, 999, 1000, 1001}));
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(trial->index_files_parsed(), 5);
  t.WriteSimpleStep(2500, "worker_0", Mode::kTrain, 2500);
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(trial->index_files_parsed(), 6);
  EXPECT_EQ(trial->Steps().back(), 2500);
  EXPECT_TRUE(trial->warnings().empty());
}

TEST(TrialCompletenessTest, StragglerFileForAnOldStepIsPickedUp) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0", "worker_1"}, 2);
  for (int64_t s = 0; s < 4; ++s) t.WriteSimpleStep(s, "worker_0", Mode::kTrain, s);
  for (const int64_t s : {0, 2, 3}) t.WriteSimpleStep(s, "worker_1", Mode::kTrain, s);
  std::unique_ptr<Trial> trial = OpenOrDie(t);
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(trial->index_files_parsed(), 7);
  EXPECT_EQ(trial->WorkersForStep(1), (std::vector<std::string>{"worker_0"}));
  // worker_1's step-1 file sorts before everything listed last time.
  t.WriteSimpleStep(1, "worker_1", Mode::kTrain, 1, {"late_tensor"});
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(trial->index_files_parsed(), 8);
  EXPECT_EQ(trial->WorkersForStep(1), (std::vector<std::string>{"worker_0", "worker_1"}));
  EXPECT_TRUE(trial->HasTensor("late_tensor"));
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(trial->index_files_parsed(), 8);
}

// Counts the listing questions a refresh asks and the entries they return (local files).
class ListingCountingEnv final : public ForwardingEnv {
 public:
  ListingCountingEnv() : ForwardingEnv(Env::Default()) {}
  Status ListFiles(const std::string& dir, std::string_view start_after, std::vector<FileEntry>* out) override {
    ++lists;
    const Status s = base()->ListFiles(dir, start_after, out);
    listed += static_cast<int64_t>(out->size());
    return s;
  }
  StatusOr<bool> FileExists(const std::string& path) override {
    ++exists;
    return base()->FileExists(path);
  }

  void Reset() { lists = listed = exists = 0; }
  int64_t lists = 0, listed = 0, exists = 0;

};

struct PollCost {
  int64_t lists, listed, exists;
};

// What the second of two refreshes that find nothing new asks of the Env, on a live trial
// (no end marker) where `workers` workers wrote `steps` steps and worker_0 one more step if
// `worker_0_ahead`.
PollCost IdlePollCost(int64_t steps, int64_t workers, bool worker_0_ahead) {
  SyntheticTrial t;
  std::vector<std::string> names;
  for (int64_t w = 0; w < workers; ++w) names.push_back("worker_" + std::to_string(w));
  t.WriteCollections(names, workers);
  for (int64_t s = 0; s < steps; ++s) {
    for (const std::string& w : names) t.WriteSimpleStep(s, w, Mode::kTrain, s);
  }
  if (worker_0_ahead) t.WriteSimpleStep(steps, "worker_0", Mode::kTrain, steps);
  ListingCountingEnv env;
  StatusOr<std::unique_ptr<Trial>> trial = Trial::Open(&env, t.root(), NoDelay());
  EXPECT_TRUE(trial.ok()) << trial.status().ToString();
  if (!trial.ok()) return {-1, -1, -1};
  EXPECT_TRUE((*trial)->Refresh().ok());
  env.Reset();
  EXPECT_TRUE((*trial)->Refresh().ok());
  EXPECT_EQ((*trial)->Steps(Mode::kGlobal, true).size(), static_cast<size_t>(steps + (worker_0_ahead ? 1 : 0)));
  return {env.lists, env.listed, env.exists};
}

// Issue 16: an idle poll costs what is new, not what the trial holds: the same listing calls
// returning the same entries (the collections files) after 5 steps as after 150 (it used to
// re-list the whole index folder of the last step, 150 entries here, each poll).
TEST(TrialCompletenessTest, IdlePollListsNothingOldWhateverTheTrialSize) {
  const PollCost small = IdlePollCost(5, 1, false);
  const PollCost large = IdlePollCost(150, 1, false);
  EXPECT_EQ(large.lists, small.lists);
  EXPECT_EQ(large.listed, small.listed);
  EXPECT_EQ(large.exists, small.exists);
  EXPECT_LE(large.lists, 3);
  EXPECT_EQ(large.listed, 1) << "only the collections file";
  EXPECT_EQ(large.exists, 1) << "the end marker";
}

// With several workers the straggler re-listing runs only while a step lacks a worker, and then
// from that step on: bounded by the steps in flight, not by the trial.
TEST(TrialCompletenessTest, IdlePollOfSeveralWorkersListsOnlyTheStepsInFlight) {
  const PollCost complete_small = IdlePollCost(5, 2, false);
  const PollCost complete_large = IdlePollCost(150, 2, false);
  EXPECT_EQ(complete_large.listed, complete_small.listed);
  EXPECT_EQ(complete_large.listed, 2) << "the two collections files";
  const PollCost ahead_small = IdlePollCost(5, 2, true);
  const PollCost ahead_large = IdlePollCost(150, 2, true);
  EXPECT_EQ(ahead_large.lists, ahead_small.lists);
  EXPECT_EQ(ahead_large.listed, ahead_small.listed);
  EXPECT_EQ(ahead_large.listed, 3) << "the collections files and worker_0's file of the step in flight";
}

TEST(TrialCompletenessTest, RangeSteps) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  for (int64_t s = 0; s < 5; ++s) t.WriteSimpleStep(s, "worker_0", Mode::kTrain, s);
  TrialOptions options = NoDelay();
  options.range_begin = 1;
  options.range_end = 3;
  std::unique_ptr<Trial> trial = OpenOrDie(t, options);
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(trial->Steps(), (Steps{1, 2}));
  EXPECT_EQ(trial->index_files_parsed(), 2);
}

TEST(TrialCompletenessTest, CollectionsArriveLateAndDisagree) {
  SyntheticTrial t;
  t.WriteSimpleStep(0, "worker_0", Mode::kTrain, 0);
  std::unique_ptr<Trial> trial = OpenOrDie(t);
  ASSERT_NE(trial, nullptr);
  EXPECT_FALSE(trial->collections_ready());
  EXPECT_TRUE(trial->Steps(Mode::kGlobal, true).empty());
  t.WriteCollections({"worker_0"}, 2);
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_TRUE(trial->collections_ready());
  EXPECT_EQ(trial->num_workers(), 2);
  EXPECT_EQ(trial->Steps(Mode::kGlobal, true), (Steps{0}));
  EXPECT_TRUE(trial->warnings().empty());
  t.WriteCollections({"worker_1"}, 3);
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_EQ(trial->workers(), (std::vector<std::string>{"worker_0", "worker_1"}));
  EXPECT_EQ(trial->num_workers(), 2);
  ASSERT_EQ(trial->warnings().size(), 1u);
  EXPECT_NE(trial->warnings()[0].find("worker_1_collections.json"), std::string::npos) << trial->warnings()[0];
}

TEST(TrialCompletenessTest, CorruptIndexFileIsAnErrorNamingIt) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  t.WriteSimpleStep(0, "worker_0", Mode::kTrain, 0);
  t.WriteRaw("index/000000000/000000000001_worker_0.json", R"({"meta": {"mode": "TRAIN", "mode_step": 1})");
  StatusOr<std::unique_ptr<Trial>> trial = Trial::Open(Env::Default(), t.root(), NoDelay());
  ASSERT_FALSE(trial.ok());
  EXPECT_EQ(trial.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(trial.status().message().find("000000000001_worker_0.json"), std::string::npos);
  t.WriteRaw("index/000000000/000000000001_worker_0.json",
             R"({"meta": {"mode": "TRAIN", "mode_step": 1, "event_file_name": "../../etc/passwd"}, "tensor_payload": []})");
  trial = Trial::Open(Env::Default(), t.root(), NoDelay());
  ASSERT_FALSE(trial.ok());
  EXPECT_EQ(trial.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(trial.status().message().find("000000000001_worker_0.json"), std::string::npos);
}

TEST(TrialCompletenessTest, CollectionMembership) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  t.WriteSimpleStep(0, "worker_0", Mode::kTrain, 0, {"loss", "fc.weight", "gradient/fc.weight", "fc.bias"});
  std::unique_ptr<Trial> trial = OpenOrDie(t);
  ASSERT_NE(trial, nullptr);
  LITMUS_ASSERT_OK_AND_ASSIGN(auto weights, trial->TensorNamesInCollection("weights"));
  EXPECT_EQ(weights, std::vector<std::string>{"fc.weight"});
  LITMUS_ASSERT_OK_AND_ASSIGN(auto listed, trial->TensorNamesInCollection("listed"));
  EXPECT_EQ(listed, std::vector<std::string>{"loss"});  // never_saved is dropped
  LITMUS_ASSERT_OK_AND_ASSIGN(auto matching, trial->TensorNamesMatching("fc\\.(?P<kind>w|b)"));
  EXPECT_EQ(matching, (std::vector<std::string>{"fc.bias", "fc.weight", "gradient/fc.weight"}));
  EXPECT_EQ(trial->TensorNamesMatching("(").status().code(), StatusCode::kInvalidArgument);
}

// Matches are remembered per pattern (rules ask at every step) and computed again once new
// names appear; a bad pattern is refused at every call.
TEST(TrialCompletenessTest, RememberedMatchesFollowNewNames) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  t.WriteSimpleStep(0, "worker_0", Mode::kTrain, 0, {"loss", "fc.weight"});
  std::unique_ptr<Trial> trial = OpenOrDie(t);
  ASSERT_NE(trial, nullptr);
  LITMUS_ASSERT_OK_AND_ASSIGN(auto first, trial->TensorNamesMatching("weight"));
  EXPECT_EQ(first, std::vector<std::string>{"fc.weight"});
  LITMUS_ASSERT_OK_AND_ASSIGN(auto again, trial->TensorNamesMatching("weight"));
  EXPECT_EQ(again, std::vector<std::string>{"fc.weight"});
  t.WriteSimpleStep(1, "worker_0", Mode::kTrain, 1, {"loss", "fc.weight", "conv.weight"});
  LITMUS_ASSERT_OK(trial->Refresh());
  LITMUS_ASSERT_OK_AND_ASSIGN(auto grown, trial->TensorNamesMatching("weight"));
  EXPECT_EQ(grown, (std::vector<std::string>{"conv.weight", "fc.weight"}));
  LITMUS_ASSERT_OK_AND_ASSIGN(auto views, trial->TensorNameViewsMatching("^conv"));
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].data(), trial->SavedTensorName("conv.weight")->data());  // the trial's own copy
  EXPECT_EQ(trial->TensorNamesMatching("(").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(trial->TensorNamesMatching("(").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace litmus
