// Tests of TrialCatalog's compact bookkeeping (trial_catalog.h): per-tensor mode steps derived
// from the trial's mode maps while every (mode, mode step) has one global step, and built (first
// seen wins) the first time one has two; workers per step
// kept in name order once each; rare steps, multi-worker steps, stored reductions and shapes in
// their files' side tables; entries that keep their address while the maps grow.
#include "trial_catalog.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "litmus/format/trial_layout.h"

namespace litmus::internal {
namespace {

IndexFile File(Mode mode, int64_t mode_step, const std::vector<std::string>& tensors, uint64_t start = 100) {
  IndexFile file;
  file.mode = mode;
  file.mode_step = mode_step;
  file.event_file_name = "events/" + std::to_string(mode_step) + ".tfevents";
  for (const std::string& name : tensors) {
    file.tensor_payload.push_back({name, start, 40});
    start += 40;
  }
  return file;
}

// StepPosition of every step of `name` against its place in TensorSteps, and none elsewhere.
void ExpectStepPositions(const TrialCatalog& catalog, const std::string& name, int64_t last_step) {
  const TensorRecord& tensor = *catalog.FindTensor(name);
  const std::vector<int64_t> steps = catalog.TensorSteps(name, true);
  for (int64_t s = -1; s <= last_step + 1; ++s) {
    const auto at = std::find(steps.begin(), steps.end(), s);
    const std::optional<size_t> want =
        at == steps.end() ? std::nullopt : std::optional<size_t>(static_cast<size_t>(at - steps.begin()));
    EXPECT_EQ(catalog.StepPosition(tensor, s), want) << name << " at " << s;
  }
}

void Add(TrialCatalog& catalog, int64_t step, const std::string& worker, IndexFile file) {
  std::vector<std::string> warnings;
  catalog.AddIndexFile(step, worker, IndexFileView::Of(std::move(file)), &warnings);
  EXPECT_TRUE(warnings.empty());
}

// The global step tensor.value(step, mode) reads, or -1.
int64_t Resolve(const TrialCatalog& catalog, const std::string& name, int64_t step, Mode mode) {
  const TensorRecord* tensor = catalog.FindTensor(name);
  if (tensor == nullptr) return -1;
  const auto resolved = catalog.ResolveTensorStep(*tensor, step, mode);
  return resolved ? resolved->global_step : -1;
}

TEST(TrialCatalogTest, ModeStepsAreDerivedWhileUnique) {
  TrialCatalog catalog;
  catalog.SetNumWorkers(1);
  // TRAIN 0..4 at global 0..4, EVAL 0..1 at global 5..6; "eval_only" only in EVAL.
  for (int64_t s = 0; s < 5; ++s) Add(catalog, s, "worker_0", File(Mode::kTrain, s, {"a", "b"}));
  Add(catalog, 5, "worker_0", File(Mode::kEval, 0, {"a", "eval_only"}));
  Add(catalog, 6, "worker_0", File(Mode::kEval, 1, {"a", "eval_only"}));
  catalog.MarkAllStepsLoaded();
  EXPECT_TRUE(catalog.mode_steps_derived());
  EXPECT_TRUE(catalog.FindTensor("a")->mode_steps.empty());

  EXPECT_EQ(catalog.TensorModeSteps("a", Mode::kTrain, false), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(catalog.TensorModeSteps("a", Mode::kEval, false), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(catalog.TensorModeSteps("b", Mode::kEval, false), (std::vector<int64_t>{}));
  EXPECT_EQ(catalog.TensorModeSteps("eval_only", Mode::kEval, false), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(catalog.TensorModeSteps("eval_only", Mode::kTrain, false), (std::vector<int64_t>{}));
  EXPECT_EQ(Resolve(catalog, "a", 1, Mode::kEval), 6);
  EXPECT_EQ(Resolve(catalog, "b", 1, Mode::kEval), -1);
  EXPECT_EQ(Resolve(catalog, "b", 3, Mode::kTrain), 3);
  EXPECT_EQ(Resolve(catalog, "eval_only", 5, Mode::kGlobal), 5);
  EXPECT_EQ(Resolve(catalog, "eval_only", 4, Mode::kGlobal), -1);
  EXPECT_EQ(Resolve(catalog, "eval_only", 9, Mode::kGlobal), -1);
  EXPECT_EQ(catalog.TensorGlobalStep(*catalog.FindTensor("a"), Mode::kTrain, 4), 4);
  EXPECT_EQ(catalog.TensorGlobalStep(*catalog.FindTensor("a"), Mode::kPredict, 0), std::nullopt);
}

// A (mode, mode step) at a second global step builds the maps (before that file's entries are
// added); first seen wins (a straggler for an older global step comes later, so it loses).
TEST(TrialCatalogTest, NonUniqueModeStepsBuildTheMaps) {
  TrialCatalog catalog;
  catalog.SetNumWorkers(1);
  Add(catalog, 10, "worker_0", File(Mode::kTrain, 5, {"a"}));
  Add(catalog, 11, "worker_0", File(Mode::kTrain, 6, {"a"}));
  EXPECT_TRUE(catalog.mode_steps_derived());
  Add(catalog, 3, "worker_0", File(Mode::kTrain, 5, {"a", "b"}));  // straggler, same mode step
  EXPECT_FALSE(catalog.mode_steps_derived());
  Add(catalog, 12, "worker_0", File(Mode::kTrain, 6, {"a", "b"}));
  catalog.MarkAllStepsLoaded();

  const TensorRecord& a = *catalog.FindTensor("a");
  EXPECT_FALSE(a.mode_steps_unique);
  EXPECT_EQ(catalog.TensorGlobalStep(a, Mode::kTrain, 5), 10);  // seen first, though a larger step
  EXPECT_EQ(catalog.TensorGlobalStep(a, Mode::kTrain, 6), 11);
  EXPECT_EQ(Resolve(catalog, "a", 5, Mode::kTrain), 10);
  EXPECT_EQ(Resolve(catalog, "a", 12, Mode::kGlobal), 11);  // global 12 is (TRAIN, 6) -> 11
  EXPECT_EQ(Resolve(catalog, "a", 3, Mode::kGlobal), 10);
  const TensorRecord& b = *catalog.FindTensor("b");
  EXPECT_TRUE(b.mode_steps_unique);
  EXPECT_EQ(Resolve(catalog, "b", 5, Mode::kTrain), 3);
  EXPECT_EQ(Resolve(catalog, "b", 12, Mode::kGlobal), 12);
  EXPECT_EQ(catalog.TensorModeSteps("a", Mode::kTrain, false), (std::vector<int64_t>{5, 6}));
}

// GLOBAL-mode entries are found by their own mode step, derived or not.
TEST(TrialCatalogTest, GlobalModeEntriesByTheirModeStep) {
  for (const bool duplicate : {false, true}) {
    TrialCatalog catalog;
    catalog.SetNumWorkers(1);
    Add(catalog, 0, "worker_0", File(Mode::kTrain, 0, {"a"}));
    Add(catalog, 1, "worker_0", File(Mode::kGlobal, 7, {"g"}));
    if (duplicate) Add(catalog, 2, "worker_0", File(Mode::kTrain, 0, {"a"}));
    catalog.MarkAllStepsLoaded();
    EXPECT_EQ(catalog.mode_steps_derived(), !duplicate);
    EXPECT_EQ(Resolve(catalog, "g", 7, Mode::kGlobal), 1) << duplicate;
    EXPECT_EQ(Resolve(catalog, "g", 1, Mode::kGlobal), 1) << duplicate;  // global 1 is (GLOBAL, 7)
    EXPECT_EQ(Resolve(catalog, "g", 0, Mode::kGlobal), -1) << duplicate;
    EXPECT_EQ(catalog.TensorModeSteps("g", Mode::kGlobal, false), (std::vector<int64_t>{1}));
  }
}

TEST(TrialCatalogTest, MultiWorkerStepsKeepWorkersInOrderOnce) {
  TrialCatalog catalog;
  catalog.SetNumWorkers(3);
  Add(catalog, 0, "worker_2", File(Mode::kTrain, 0, {"a"}));
  Add(catalog, 0, "worker_10", File(Mode::kTrain, 0, {"a", "b"}));
  EXPECT_FALSE(catalog.IsStepComplete(0));
  Add(catalog, 0, "worker_10", File(Mode::kTrain, 0, {"a"}, 500));  // again: replaces, not a new worker
  EXPECT_FALSE(catalog.IsStepComplete(0));
  Add(catalog, 0, "worker_0", File(Mode::kTrain, 0, {"a"}));
  EXPECT_TRUE(catalog.IsStepComplete(0));
  EXPECT_EQ(catalog.WorkersForStep(0), (std::vector<std::string>{"worker_0", "worker_10", "worker_2"}));
  EXPECT_EQ(catalog.WorkersForStep(1), (std::vector<std::string>{}));
  const StepEntryList entries = catalog.StepEntries(*catalog.FindTensor("a"), 0);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(catalog.files().worker(entries.front()), "worker_0");
  EXPECT_EQ(catalog.files().start(*entries.Find("worker_10", catalog.files())), 500u);
  EXPECT_EQ(catalog.StepEntries(*catalog.FindTensor("b"), 0).size(), 1u);
}

TEST(TrialCatalogTest, RareStepsAndStepsOfOtherTensors) {
  TrialCatalog catalog;
  catalog.SetNumWorkers(1);
  for (int64_t s = 0; s < 100; ++s) {
    std::vector<std::string> names{"every"};
    if (s % 10 == 3) names.push_back("rare");
    catalog.set_files_ahead(static_cast<size_t>(99 - s));
    Add(catalog, s, "worker_0", File(Mode::kTrain, s, names));
  }
  catalog.MarkAllStepsLoaded();
  EXPECT_EQ(catalog.TensorSteps("rare", false), (std::vector<int64_t>{3, 13, 23, 33, 43, 53, 63, 73, 83, 93}));
  EXPECT_EQ(catalog.TensorNamesAtStep(13), (std::vector<std::string>{"every", "rare"}));
  EXPECT_EQ(catalog.TensorNamesAtStep(14), (std::vector<std::string>{"every"}));
  EXPECT_EQ(Resolve(catalog, "rare", 53, Mode::kGlobal), 53);
  EXPECT_EQ(Resolve(catalog, "rare", 54, Mode::kGlobal), -1);
  EXPECT_EQ(Resolve(catalog, "rare", 63, Mode::kTrain), 63);
  EXPECT_EQ(catalog.TensorModeSteps("rare", Mode::kTrain, false).size(), 10u);
  EXPECT_TRUE(catalog.StepEntries(*catalog.FindTensor("rare"), 4).empty());
}

TEST(TrialCatalogTest, StoredReductionsAndShapesLiveInTheirFilesSideTable) {
  TrialCatalog catalog;
  catalog.SetNumWorkers(1);
  IndexFile file = File(Mode::kTrain, 0, {"a", "b"});
  file.tensor_payload.push_back(
      {layout::ReductionTensorName(layout::Reduction::kMax, true, "a"), 900, 30});
  file.shape_payload.push_back({"b", "b", {4, 2}});
  file.shape_payload.push_back({"c", "c", {1}});  // a shape alone: an entry without a location
  Add(catalog, 0, "worker_0", std::move(file));
  const CatalogEntry& a = catalog.StepEntries(*catalog.FindTensor("a"), 0).front();
  const EntryFiles& files = catalog.files();
  const IndexEntry* stored = &files.extras(a)->stored_reductions.at({layout::Reduction::kMax, true});
  for (int64_t s = 1; s < 3000; ++s) Add(catalog, s, "worker_0", File(Mode::kTrain, s, {"a", "b"}));

  const CatalogEntry& a_again = catalog.StepEntries(*catalog.FindTensor("a"), 0).front();
  EXPECT_EQ(&a_again, &a);
  ASSERT_TRUE(files.has_stored_reductions(a_again));
  EXPECT_EQ(&files.extras(a_again)->stored_reductions.at({layout::Reduction::kMax, true}), stored);
  EXPECT_EQ(stored->start_idx, 900u);
  EXPECT_EQ(files.shape(a_again), nullptr);
  const CatalogEntry& b = catalog.StepEntries(*catalog.FindTensor("b"), 0).front();
  EXPECT_FALSE(files.has_stored_reductions(b));
  ASSERT_NE(files.shape(b), nullptr);
  EXPECT_EQ(*files.shape(b), (std::vector<int64_t>{4, 2}));
  EXPECT_TRUE(b.has_location());
  const CatalogEntry& c = catalog.StepEntries(*catalog.FindTensor("c"), 0).front();
  EXPECT_FALSE(c.has_location());
  EXPECT_EQ(*files.shape(c), (std::vector<int64_t>{1}));
  EXPECT_EQ(files.extras(catalog.StepEntries(*catalog.FindTensor("a"), 1).front()), nullptr);
  const TensorEntry public_b = files.ToTensorEntry(b, "b");
  EXPECT_EQ(public_b.shape, (std::vector<int64_t>{4, 2}));
  ASSERT_TRUE(public_b.location);
  EXPECT_EQ(public_b.location->length, 40u);
}

// Entries keep their address while the step maps grow, in one large refresh (files ahead known)
// and in many small ones, and are found by step afterwards.
TEST(TrialCatalogTest, EntriesFoundAfterGrowth) {
  TrialCatalog catalog;
  catalog.SetNumWorkers(1);
  std::vector<const CatalogEntry*> first;
  constexpr int64_t kSteps = 20000;
  for (int64_t s = 0; s < kSteps; ++s) {
    // One refresh of 10000 files, then refreshes of 7.
    catalog.set_files_ahead(s < 10000 ? static_cast<size_t>(9999 - s) : static_cast<size_t>(6 - (s % 7)));
    Add(catalog, s, "worker_0", File(Mode::kTrain, s, {"t0", "t1"}, 1000 + static_cast<uint64_t>(s)));
    if (s % 1000 == 0) first.push_back(&catalog.StepEntries(*catalog.FindTensor("t1"), s).front());
  }
  for (size_t i = 0; i < first.size(); ++i) {
    const int64_t s = static_cast<int64_t>(i) * 1000;
    const CatalogEntry& now = catalog.StepEntries(*catalog.FindTensor("t1"), s).front();
    EXPECT_EQ(&now, first[i]) << s;
    EXPECT_EQ(catalog.files().start(now), 1040u + static_cast<uint64_t>(s));
    EXPECT_EQ(catalog.files().of(now).mode_step, s);
  }
  EXPECT_EQ(catalog.TensorSteps("t0", true).size(), static_cast<size_t>(kSteps));
}

// The start of the record of `name` at `step` (of worker_0 unless given), or 0 if none.
uint64_t StartAt(const TrialCatalog& catalog, const std::string& name, int64_t step,
                 const std::string& worker = "worker_0") {
  const StepEntryList entries = catalog.StepEntries(*catalog.FindTensor(name), step);
  const CatalogEntry* entry = entries.Find(worker, catalog.files());
  return entry == nullptr ? 0 : catalog.files().start(*entry);
}

// A tensor saved at every step keeps no step map: its entries are found by the step's position
// among the known steps (also for one that appears late, or stops being saved), and only a
// tensor saved at some steps, or by several workers at a step, keeps one.
TEST(TrialCatalogLayoutTest, DenseWhileSavedAtEveryStepSparseOtherwise) {
  TrialCatalog catalog;
  catalog.SetNumWorkers(1);
  for (int64_t s = 0; s < 50; ++s) {
    std::vector<std::string> names{"every"};
    if (s >= 20) names.push_back("late");
    if (s < 10) names.push_back("early");
    if (s % 2 == 0) names.push_back("even");
    // (Global steps 0, 10, 20, ...: positions differ from steps.)
    Add(catalog, s * 10, "worker_0", File(Mode::kTrain, s, names, 1000 * static_cast<uint64_t>(s + 1)));
  }
  catalog.MarkAllStepsLoaded();
  const TensorRecord& every = *catalog.FindTensor("every");
  const TensorRecord& late = *catalog.FindTensor("late");
  const TensorRecord& early = *catalog.FindTensor("early");
  const TensorRecord& even = *catalog.FindTensor("even");
  EXPECT_TRUE(every.dense);
  EXPECT_TRUE(every.steps.empty());
  EXPECT_TRUE(late.dense);
  EXPECT_EQ(late.dense_first, 20u);
  EXPECT_TRUE(late.steps.empty());
  EXPECT_TRUE(early.dense);
  EXPECT_FALSE(even.dense);
  EXPECT_EQ(even.steps.size(), 25u);

  for (int64_t s = 0; s < 50; ++s) {
    const uint64_t base = 1000 * static_cast<uint64_t>(s + 1);
    EXPECT_EQ(StartAt(catalog, "every", s * 10), base) << s;
    EXPECT_EQ(StartAt(catalog, "late", s * 10), s >= 20 ? base + 40 : 0) << s;
    EXPECT_EQ(StartAt(catalog, "early", s * 10) != 0, s < 10) << s;
    EXPECT_EQ(StartAt(catalog, "even", s * 10) != 0, s % 2 == 0) << s;
    EXPECT_TRUE(catalog.StepEntries(every, s * 10 + 1).empty());  // not a known step
    EXPECT_EQ(Resolve(catalog, "late", s * 10, Mode::kGlobal), s >= 20 ? s * 10 : -1) << s;
    EXPECT_EQ(Resolve(catalog, "late", s, Mode::kTrain), s >= 20 ? s * 10 : -1) << s;
  }
  std::vector<int64_t> late_steps;
  for (int64_t s = 20; s < 50; ++s) late_steps.push_back(s * 10);
  EXPECT_EQ(catalog.TensorSteps("late", false), late_steps);
  EXPECT_EQ(catalog.TensorModeSteps("early", Mode::kTrain, false), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(catalog.TensorNamesAtStep(90), (std::vector<std::string>{"early", "every"}));
  EXPECT_EQ(catalog.TensorNamesAtStep(200), (std::vector<std::string>{"even", "every", "late"}));
  EXPECT_EQ(catalog.TensorNamesAtStep(210), (std::vector<std::string>{"every", "late"}));
  EXPECT_EQ(catalog.TensorNamesAtStep(215), (std::vector<std::string>{}));
  for (const char* name : {"every", "late", "early", "even"}) ExpectStepPositions(catalog, name, 500);
}

// A second worker at a step makes the tensor sparse with both entries in worker order; the
// first entry keeps its address (the reader's cache key); the same worker again replaces its
// entry in place, dense or not.
TEST(TrialCatalogLayoutTest, MultiWorkerStepsMakeTheTensorSparseInPlace) {
  TrialCatalog catalog;
  catalog.SetNumWorkers(2);
  Add(catalog, 0, "worker_1", File(Mode::kTrain, 0, {"a", "b"}, 100));
  Add(catalog, 1, "worker_1", File(Mode::kTrain, 1, {"a", "b"}, 200));
  const CatalogEntry* first = &catalog.StepEntries(*catalog.FindTensor("a"), 0).front();
  Add(catalog, 1, "worker_1", File(Mode::kTrain, 1, {"a"}, 300));  // again: in place
  EXPECT_TRUE(catalog.FindTensor("a")->dense);
  EXPECT_EQ(StartAt(catalog, "a", 1, "worker_1"), 300u);
  EXPECT_EQ(catalog.FindTensor("a")->entries.size(), 2u);
  Add(catalog, 0, "worker_0", File(Mode::kTrain, 0, {"a"}, 400));
  const TensorRecord& a = *catalog.FindTensor("a");
  EXPECT_FALSE(a.dense);
  EXPECT_TRUE(catalog.FindTensor("b")->dense);
  const StepEntryList step0 = catalog.StepEntries(a, 0);
  ASSERT_EQ(step0.size(), 2u);
  EXPECT_EQ(catalog.files().worker(step0[0]), "worker_0");
  EXPECT_EQ(catalog.files().start(step0[0]), 400u);
  EXPECT_EQ(&step0[1], first);
  EXPECT_EQ(catalog.files().start(*first), 100u);
  Add(catalog, 1, "worker_0", File(Mode::kTrain, 1, {"a", "b"}, 500));
  Add(catalog, 1, "worker_1", File(Mode::kTrain, 1, {"a"}, 600));  // again, now sparse: in place
  EXPECT_EQ(catalog.FindTensor("a")->entries.size(), 4u);
  EXPECT_EQ(StartAt(catalog, "a", 1, "worker_1"), 600u);
  EXPECT_EQ(StartAt(catalog, "a", 1, "worker_0"), 500u);
  EXPECT_EQ(StartAt(catalog, "b", 1, "worker_0"), 540u);
  EXPECT_EQ(StartAt(catalog, "b", 1, "worker_1"), 240u);
  EXPECT_EQ(catalog.StepEntries(*catalog.FindTensor("b"), 0).size(), 1u);
  EXPECT_EQ(catalog.TensorSteps("a", true), (std::vector<int64_t>{0, 1}));
}

// A straggler (a new known step before the last one) moves the positions of the later steps:
// dense tensors become sparse first and are still found at the right steps, at the same
// addresses; tensors created afterwards are dense again.
TEST(TrialCatalogLayoutTest, StragglerStepsKeepEveryEntryFound) {
  TrialCatalog catalog;
  catalog.SetNumWorkers(1);
  std::vector<const CatalogEntry*> before;
  for (int64_t s : {0, 2, 4, 6}) {
    Add(catalog, s, "worker_0", File(Mode::kTrain, s, {"a"}, 100 + static_cast<uint64_t>(s)));
    before.push_back(&catalog.StepEntries(*catalog.FindTensor("a"), s).front());
  }
  EXPECT_TRUE(catalog.FindTensor("a")->dense);
  Add(catalog, 3, "worker_0", File(Mode::kTrain, 3, {"b"}, 700));
  EXPECT_FALSE(catalog.FindTensor("a")->dense);
  EXPECT_TRUE(catalog.FindTensor("b")->dense);
  Add(catalog, 8, "worker_0", File(Mode::kTrain, 8, {"a", "c"}, 800));
  Add(catalog, 10, "worker_0", File(Mode::kTrain, 10, {"c"}, 900));
  EXPECT_TRUE(catalog.FindTensor("c")->dense);
  for (size_t i = 0; i < 4; ++i) {
    const int64_t s = static_cast<int64_t>(i) * 2;
    EXPECT_EQ(&catalog.StepEntries(*catalog.FindTensor("a"), s).front(), before[i]) << s;
    EXPECT_EQ(StartAt(catalog, "a", s), 100u + static_cast<uint64_t>(s)) << s;
  }
  EXPECT_EQ(StartAt(catalog, "a", 3), 0u);
  EXPECT_EQ(StartAt(catalog, "a", 8), 800u);
  EXPECT_EQ(StartAt(catalog, "b", 3), 700u);
  EXPECT_EQ(StartAt(catalog, "c", 8), 840u);
  EXPECT_EQ(StartAt(catalog, "c", 10), 900u);
  EXPECT_EQ(catalog.TensorSteps("a", true), (std::vector<int64_t>{0, 2, 4, 6, 8}));
  for (const char* name : {"a", "b", "c"}) ExpectStepPositions(catalog, name, 10);
  EXPECT_EQ(catalog.TensorNamesAtStep(3), (std::vector<std::string>{"b"}));
  EXPECT_EQ(catalog.TensorNamesAtStep(8), (std::vector<std::string>{"a", "c"}));
}

TEST(TrialCatalogTest, LengthsAboveFourGiBSaturate) {
  TrialCatalog catalog;
  IndexFile file = File(Mode::kTrain, 0, {});
  file.tensor_payload.push_back({"huge", 0, (uint64_t{1} << 33) + 5});
  Add(catalog, 0, "worker_0", std::move(file));
  const CatalogEntry& huge = catalog.StepEntries(*catalog.FindTensor("huge"), 0).front();
  EXPECT_TRUE(huge.has_location());
  EXPECT_EQ(huge.length, UINT32_MAX);
}

}  // namespace
}  // namespace litmus::internal
