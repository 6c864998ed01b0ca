// Trial::Value / Reduction / Shape: spot checks on the smdebug fixtures (values, error
// subcodes, worker selection), stored-reduction folding and shape entries on hand-written
// trials, missing/short event files during and after training, and concurrent reads.
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>

#include "litmus/engine/trial.h"
#include "litmus/format/forwarding_env.h"
#include "synthetic_trial.h"

namespace litmus {
namespace {

using testing::FixturePath;
using testing::SyntheticTensor;
using testing::SyntheticTrial;

std::unique_ptr<Trial> OpenFixture(std::string_view name) {
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  StatusOr<std::unique_ptr<Trial>> trial = Trial::Open(Env::Default(), FixturePath(name).string(), options);
  EXPECT_TRUE(trial.ok()) << trial.status().ToString();
  return trial.ok() ? std::move(trial).value() : nullptr;
}

std::unique_ptr<Trial> OpenDir(const std::string& root) {
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  StatusOr<std::unique_ptr<Trial>> trial = Trial::Open(Env::Default(), root, options);
  EXPECT_TRUE(trial.ok()) << trial.status().ToString();
  return trial.ok() ? std::move(trial).value() : nullptr;
}

// 1 where a prefetch handed out a decoded value, else 0.
std::vector<uint8_t> Decoded(const std::vector<Trial::Prefetched>& prefetched) {
  std::vector<uint8_t> out;
  for (const Trial::Prefetched& p : prefetched) {
    EXPECT_EQ(p.decoded, p.value != nullptr) << "a prefetch with values hands out every decoded value";
    out.push_back(p.decoded ? 1 : 0);
  }
  return out;
}

TEST(TrialValueTest, ExplodingLossAtStepZero) {
  std::unique_ptr<Trial> trial = OpenFixture("pt_exploding");
  ASSERT_NE(trial, nullptr);
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr loss, trial->Value("MSELoss_output_0", 0));
  EXPECT_EQ(loss->dtype(), DType::kFloat32);
  EXPECT_TRUE(loss->shape().empty());
  ASSERT_EQ(loss->num_elements(), 1);
  EXPECT_EQ(loss->as<float>()[0], 2.4746315f);
  EXPECT_EQ(static_cast<float>(loss->ElementAsDouble(0)), 2.4746315f);
  // The same (tensor, step, worker) comes from the cache, through either addressing.
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr again, trial->Value("MSELoss_output_0", 0, Mode::kTrain));
  EXPECT_EQ(again.get(), loss.get());
  LITMUS_ASSERT_OK_AND_ASSIGN(std::vector<int64_t> shape, trial->Shape("MSELoss_output_0", 0));
  EXPECT_TRUE(shape.empty());
  LITMUS_ASSERT_OK_AND_ASSIGN(double mean, trial->Reduction("MSELoss_output_0", 0, layout::Reduction::kMean, false));
  EXPECT_EQ(static_cast<float>(mean), 2.4746315f);
  EXPECT_EQ(GetTrialError(trial->Value("no/such", 0).status()), TrialError::kTensorUnavailable);
  EXPECT_EQ(trial->Value("no/such", 0).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(GetTrialError(trial->Value("MSELoss_output_0", 16).status()), TrialError::kNoMoreData);
}

TEST(TrialValueTest, EvalStepHasNoGradients) {
  std::unique_ptr<Trial> trial = OpenFixture("pt_run_complete");
  ASSERT_NE(trial, nullptr);
  ASSERT_EQ(trial->ModeOfGlobalStep(6), std::make_pair(Mode::kEval, int64_t{0}));
  const Status s = trial->Value("gradient/MLP_fc1.weight", 6).status();
  EXPECT_EQ(GetTrialError(s), TrialError::kTensorUnavailableForStep) << s.ToString();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(GetTrialError(trial->Reduction("gradient/MLP_fc1.weight", 6, layout::Reduction::kMean, true).status()),
            TrialError::kTensorUnavailableForStep);
  EXPECT_EQ(GetTrialError(trial->Shape("gradient/MLP_fc1.weight", 6).status()), TrialError::kTensorUnavailableForStep);
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr w, trial->Value("MLP_fc1.weight", 0, Mode::kEval));  // global 6
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr w6, trial->Value("MLP_fc1.weight", 6));
  EXPECT_EQ(w.get(), w6.get());
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr g, trial->Value("gradient/MLP_fc1.weight", 6, Mode::kTrain));  // global 8
  EXPECT_EQ(g->dtype(), DType::kFloat32);
  LITMUS_ASSERT_OK_AND_ASSIGN(std::vector<int64_t> shape, trial->Shape("gradient/MLP_fc1.weight", 8));
  EXPECT_EQ(shape, g->shape());
}

TEST(TrialValueTest, DdpWorkerSelection) {
  std::unique_ptr<Trial> trial = OpenFixture("pt_ddp_two_workers");
  ASSERT_NE(trial, nullptr);
  const std::string name = "CrossEntropyLoss_output_0";
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr by_default, trial->Value(name, 0));
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr w0, trial->Value(name, 0, Mode::kGlobal, "worker_0"));
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr w1, trial->Value(name, 0, Mode::kGlobal, "worker_1"));
  EXPECT_EQ(by_default.get(), w0.get());
  EXPECT_NE(w0.get(), w1.get());
  EXPECT_EQ(static_cast<float>(w0->ElementAsDouble(0)), 1.345528244972229f);  // expected.json
  const Status invalid = trial->Value(name, 0, Mode::kGlobal, "worker_7").status();
  EXPECT_EQ(GetTrialError(invalid), TrialError::kInvalidWorker) << invalid.ToString();
  EXPECT_NE(invalid.message().find("worker_7"), std::string::npos);
  EXPECT_EQ(trial->Entries(name, 0).size(), 2u);
}

TEST(TrialValueTest, SyntheticDtypesGapsAndEnd) {
  std::unique_ptr<Trial> trial = OpenFixture("synthetic_dtypes");
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(GetTrialError(trial->Value("dtypes/float32", 3).status()), TrialError::kStepUnavailable);
  EXPECT_EQ(trial->Value("dtypes/float32", 3).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(GetTrialError(trial->Value("dtypes/float32", 6).status()), TrialError::kNoMoreData);
  EXPECT_EQ(trial->StepAvailability(3), StepState::kUnavailable);
  EXPECT_EQ(trial->StepAvailability(6), StepState::kNoMoreData);
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr f, trial->Value("dtypes/float32", 0));
  EXPECT_EQ(f->dtype(), DType::kFloat32);
  // The unindexed record at the end of step 1 stays invisible.
  EXPECT_FALSE(trial->HasTensor("hidden/not_in_index"));
  EXPECT_FALSE(trial->HasTensor("tb_only/scalar"));
}

TEST(TrialValueTest, PartialRunStepNotYetAvailable) {
  std::unique_ptr<Trial> trial = OpenFixture("pt_run_partial");
  ASSERT_NE(trial, nullptr);
  EXPECT_FALSE(trial->end_marker_seen());
  EXPECT_EQ(trial->StepAvailability(9), StepState::kNotYetAvailable);
  const Status s = trial->Value("CrossEntropyLoss_output_0", 9).status();
  EXPECT_EQ(GetTrialError(s), TrialError::kStepNotYetAvailable) << s.ToString();
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  LITMUS_EXPECT_OK(trial->Value("CrossEntropyLoss_output_0", 8).status());
}

// The first element of the value `trial` reads for (name, step, mode), or -1 if it fails.
double ValueAt(const Trial& trial, const std::string& name, int64_t step, Mode mode = Mode::kGlobal) {
  StatusOr<TensorPtr> value = trial.Value(name, step, mode);
  return value.ok() ? (*value)->ElementAsDouble(0) : -1.0;
}

// tensor.value(step) resolves a global step through the (mode, mode step) maps, first seen
// winning (docs/trial-format.md §8). The reader shortcuts the usual case (a tensor read at a global
// step it was saved at, every (mode, mode step) of it at one global step); each value here tells
// which step's record was read, so a shortcut taken where it does not hold shows.
TEST(TrialValueTest, StepResolutionFollowsTheModeStepMaps) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  // "a" is saved at every step; its (TRAIN, 1) appears at global steps 1 and 3 (a restarted
  // mode counter), so global step 3 reads step 1's record, as smdebug does. "b" is saved at
  // step 3 only, so its (TRAIN, 1) is unambiguous.
  t.WriteStep(0, "worker_0", Mode::kTrain, 0, {{"a", {0.0f}}});
  t.WriteStep(1, "worker_0", Mode::kTrain, 1, {{"a", {1.0f}}});
  t.WriteStep(2, "worker_0", Mode::kEval, 0, {{"a", {2.0f}}});
  t.WriteStep(3, "worker_0", Mode::kTrain, 1, {{"a", {3.0f}}, {"b", {30.0f}}});
  t.WriteStep(4, "worker_0", Mode::kTrain, 2, {{"a", {4.0f}}});
  t.WriteEndMarker();
  std::unique_ptr<Trial> trial = OpenDir(t.root());
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(ValueAt(*trial, "a", 0), 0.0);
  EXPECT_EQ(ValueAt(*trial, "a", 1), 1.0);
  EXPECT_EQ(ValueAt(*trial, "a", 2), 2.0);
  EXPECT_EQ(ValueAt(*trial, "a", 3), 1.0);  // (TRAIN, 1) was first seen at global step 1
  EXPECT_EQ(ValueAt(*trial, "a", 4), 4.0);
  EXPECT_EQ(ValueAt(*trial, "a", 1, Mode::kTrain), 1.0);
  EXPECT_EQ(ValueAt(*trial, "a", 0, Mode::kEval), 2.0);
  EXPECT_EQ(ValueAt(*trial, "b", 3), 30.0);
  EXPECT_EQ(ValueAt(*trial, "b", 1, Mode::kTrain), 30.0);
  EXPECT_EQ(ValueAt(*trial, "b", 1), 30.0);  // step 1 is (TRAIN, 1), which "b" has at step 3
  EXPECT_EQ(GetTrialError(trial->Value("b", 4).status()), TrialError::kTensorUnavailableForStep);
}

// A GLOBAL-mode entry is found by its mode step: a global step equal to the mode step of such an
// entry reads that entry, whatever the tensor saved at the global step itself.
TEST(TrialValueTest, GlobalModeEntriesAreFoundByTheirModeStep) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  // "g" has a GLOBAL-mode entry whose mode step (2) is not its global step (5); "h" has a TRAIN
  // entry at step 4 and a GLOBAL entry with mode step 4 at step 6; "k" at step 7 has mode step 3,
  // which is no known global step.
  t.WriteStep(2, "worker_0", Mode::kEval, 0, {{"e", {2.0f}}});
  t.WriteStep(4, "worker_0", Mode::kTrain, 2, {{"h", {40.0f}}});
  t.WriteStep(5, "worker_0", Mode::kGlobal, 2, {{"g", {50.0f}}});
  t.WriteStep(6, "worker_0", Mode::kGlobal, 4, {{"h", {60.0f}}});
  t.WriteStep(7, "worker_0", Mode::kGlobal, 3, {{"k", {70.0f}}});
  t.WriteEndMarker();
  std::unique_ptr<Trial> trial = OpenDir(t.root());
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(ValueAt(*trial, "g", 2), 50.0);  // (GLOBAL, 2) -> step 5
  EXPECT_EQ(ValueAt(*trial, "g", 5), 50.0);  // step 5 is (GLOBAL, 2) -> step 5
  EXPECT_EQ(ValueAt(*trial, "h", 4), 60.0);  // (GLOBAL, 4) -> step 6, not the TRAIN entry at step 4
  EXPECT_EQ(ValueAt(*trial, "h", 6), 60.0);
  EXPECT_EQ(ValueAt(*trial, "h", 2, Mode::kTrain), 40.0);
  EXPECT_EQ(ValueAt(*trial, "e", 2), 2.0);
  EXPECT_EQ(GetTrialError(trial->Value("g", 4).status()), TrialError::kTensorUnavailableForStep);
  EXPECT_EQ(ValueAt(*trial, "k", 3), 70.0);  // (GLOBAL, 3) -> step 7, though 3 is no global step
}

// A name is found by the address of the trial's own copy (SavedTensorName) or else by its
// characters: a view of the start of a saved name is another name, and a copy of a name is
// that name.
TEST(TrialValueTest, NamesAreFoundByTheTrialsOwnViewOrByContent) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  const std::string long_name = "layer/with/a/name/longer/than/sso/buffers";
  const std::string short_name = "layer/with/a/name";
  t.WriteStep(0, "worker_0", Mode::kTrain, 0, {{long_name, {1.0f}}, {short_name, {2.0f}}, {"ab", {3.0f}}, {"abc", {4.0f}}});
  t.WriteEndMarker();
  std::unique_ptr<Trial> trial = OpenDir(t.root());
  ASSERT_NE(trial, nullptr);
  const auto first = [&trial](std::string_view name) {
    StatusOr<TensorPtr> value = trial->Value(name, 0);
    return value.ok() ? (*value)->ElementAsDouble(0) : -1.0;
  };
  for (const auto& [name, prefix, whole, part] :
       {std::tuple<std::string, size_t, double, double>{long_name, short_name.size(), 1.0, 2.0},
        std::tuple<std::string, size_t, double, double>{"abc", 2, 4.0, 3.0}}) {
    const std::optional<std::string_view> own = trial->SavedTensorName(name);
    ASSERT_TRUE(own.has_value()) << name;
    EXPECT_NE(own->data(), name.data());
    EXPECT_EQ(first(*own), whole) << name;
    EXPECT_EQ(first(name), whole) << name;                  // a copy: by content
    EXPECT_EQ(first(own->substr(0, prefix)), part) << name;  // same address, shorter: another name
    EXPECT_EQ(first(own->substr(0, 1)), -1.0) << name;       // no such tensor
    EXPECT_EQ(trial->SavedTensorName(own->substr(0, prefix)), trial->SavedTensorName(std::string(name.substr(0, prefix))));
  }
}

TEST(TrialValueTest, StoredReductionsAndShapesFold) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  // "w" has its raw value, a stored abs_mean (deliberately not the true value, to see that the
  // stored one wins) and a shape entry; "r" has only a stored reduction; "s" only a shape.
  t.WriteStep(0, "worker_0", Mode::kTrain, 0,
              {{"smdebug/reductions/abs_mean/w", {42.0f}}, {"w", {-1.0f, 3.0f}}, {"smdebug/reductions/max/r", {7.0f}}},
              {ShapeEntry{"w", "w", {2}}, ShapeEntry{"s", "s:0", {3, 4}}});
  std::unique_ptr<Trial> trial = OpenDir(t.root());
  ASSERT_NE(trial, nullptr);
  EXPECT_EQ(trial->TensorNames(), (std::vector<std::string>{"r", "s", "w"}));
  EXPECT_EQ(trial->TensorNamesAtStep(0), (std::vector<std::string>{"r", "s", "w"}));
  const std::vector<TensorEntry> w = trial->Entries("w", 0);
  ASSERT_EQ(w.size(), 1u);
  ASSERT_TRUE(w[0].location.has_value());  // the shape entry did not replace the location
  EXPECT_EQ(w[0].shape, (std::vector<int64_t>{2}));
  ASSERT_EQ(w[0].stored_reductions.size(), 1u);
  EXPECT_TRUE(w[0].stored_reductions.contains({layout::Reduction::kMean, true}));
  EXPECT_EQ(*w[0].event_file, "events/000000000000/000000000000_worker_0.tfevents");

  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr value, trial->Value("w", 0));
  EXPECT_EQ(value->shape(), (std::vector<int64_t>{2}));
  LITMUS_ASSERT_OK_AND_ASSIGN(double stored, trial->Reduction("w", 0, layout::Reduction::kMean, true));
  EXPECT_EQ(stored, 42.0);
  LITMUS_ASSERT_OK_AND_ASSIGN(double computed, trial->Reduction("w", 0, layout::Reduction::kMean, false));
  EXPECT_EQ(computed, 1.0);
  LITMUS_ASSERT_OK_AND_ASSIGN(double max_r, trial->Reduction("r", 0, layout::Reduction::kMax, false));
  EXPECT_EQ(max_r, 7.0);
  const Status no_raw = trial->Value("r", 0).status();
  EXPECT_EQ(GetTrialError(no_raw), TrialError::kTensorUnavailableForStep) << no_raw.ToString();
  EXPECT_EQ(GetTrialError(trial->Reduction("r", 0, layout::Reduction::kMin, false).status()),
            TrialError::kTensorUnavailableForStep);
  LITMUS_ASSERT_OK_AND_ASSIGN(std::vector<int64_t> s_shape, trial->Shape("s", 0));
  EXPECT_EQ(s_shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(GetTrialError(trial->Value("s", 0).status()), TrialError::kTensorUnavailableForStep);
}

// An event file above 4 GiB (sparse here): records past 2^32 are read from where the index
// says, through Value() and through a prefetch (the catalog keeps such offsets whole, beside
// the entry: catalog_entries.h).
TEST(TrialValueTest, RecordsBeyondFourGiBAreReadWhereTheIndexSays) {
  SyntheticTrial synthetic;
  synthetic.WriteCollections({"worker_0"}, 1);
  synthetic.WriteStep(0, "worker_0", Mode::kTrain, 0, {{"near", {1.0f, 2.0f}}, {"far", {3.0f, 4.0f, 5.0f}}});
  const std::string event_path = synthetic.root() + "/" + layout::EventFilePath(0, "worker_0");
  std::string events;
  {
    std::ifstream in(event_path, std::ios::binary);
    events.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // The two records as WriteStep framed them: "near" first, then "far" (a record is its
  // 8-byte payload length, a 4-byte CRC, the payload and a 4-byte CRC).
  uint64_t near_payload = 0;
  ASSERT_GE(events.size(), sizeof(near_payload));
  std::memcpy(&near_payload, events.data(), sizeof(near_payload));
  const uint64_t near_length = 16 + near_payload;
  IndexFile index;
  index.mode = Mode::kTrain;
  index.mode_step = 0;
  index.event_file_name = layout::EventFilePath(0, "worker_0");
  index.tensor_payload = {{"near", 0, near_length}, {"far", near_length, events.size() - near_length}};
  IndexEntry& far = index.tensor_payload[1];
  const std::string far_record = events.substr(far.start_idx, far.length);
  far.start_idx = (uint64_t{5} << 32) + 3;  // 20 GiB and a little: beyond every 32-bit offset
  {
    std::ofstream out(event_path, std::ios::binary | std::ios::in | std::ios::out);
    out.seekp(static_cast<std::streamoff>(far.start_idx));
    out.write(far_record.data(), static_cast<std::streamsize>(far_record.size()));
    ASSERT_TRUE(out.good());
  }
  synthetic.dir().WriteFile(layout::IndexFilePath(0, "worker_0"), SerializeIndexJson(index));
  synthetic.WriteEndMarker();
  ASSERT_GT(std::filesystem::file_size(event_path), uint64_t{1} << 32);

  for (const bool prefetch_first : {false, true}) {
    std::unique_ptr<Trial> trial = OpenDir(synthetic.root());
    ASSERT_NE(trial, nullptr);
    if (prefetch_first) {
      std::vector<Trial::Prefetched> prefetched;
      trial->Prefetch({{"near", 0}, {"far", 0}}, &prefetched, true);
      EXPECT_EQ(Decoded(prefetched), (std::vector<uint8_t>{1, 1}));
    }
    LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr value, trial->Value("far", 0));
    ASSERT_EQ(value->num_elements(), 3);
    EXPECT_EQ(value->as<float>()[2], 5.0f);
    LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr near_value, trial->Value("near", 0));
    EXPECT_EQ(near_value->as<float>()[1], 2.0f);
  }
}

TEST(TrialValueTest, MissingAndShortEventFiles) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  t.WriteStep(0, "worker_0", Mode::kTrain, 0, {{"a", {1.0f, 2.0f}}}, {}, /*event_file=*/false);
  t.WriteStep(1, "worker_0", Mode::kTrain, 1, {{"a", {1.0f, 2.0f}}, {"b", {3.0f}}});
  // Truncate step 1's event file in the middle of the second record.
  const std::filesystem::path events = t.dir().path() / layout::EventFilePath(1, "worker_0");
  std::filesystem::resize_file(events, std::filesystem::file_size(events) - 5);
  std::unique_ptr<Trial> trial = OpenDir(t.root());
  ASSERT_NE(trial, nullptr);
  // A prefetch skips what it cannot read and says so.
  const std::vector<Trial::StepTensor> keys = {{"a", 0}, {"a", 1}, {"b", 1}};
  std::vector<Trial::Prefetched> prefetched;
  trial->Prefetch(keys, &prefetched, /*with_values=*/true);
  ASSERT_EQ(prefetched.size(), 3u);
  EXPECT_FALSE(prefetched[0].decoded);
  EXPECT_FALSE(prefetched[2].decoded);
  Status s = trial->Value("a", 0).status();
  EXPECT_EQ(GetTrialError(s), TrialError::kStepNotYetAvailable) << s.ToString();
  EXPECT_NE(s.message().find("000000000000_worker_0.tfevents"), std::string::npos) << s.ToString();
  LITMUS_EXPECT_OK(trial->Value("a", 1).status());
  s = trial->Value("b", 1).status();
  EXPECT_EQ(GetTrialError(s), TrialError::kStepNotYetAvailable) << s.ToString();
  trial->Prefetch(keys, &prefetched, /*with_values=*/true);
  EXPECT_EQ(Decoded(prefetched), (std::vector<uint8_t>{0, 1, 0})) << "a value read since is readable";

  // The event file appears: the next read succeeds (failures are not cached).
  t.WriteStep(0, "worker_0", Mode::kTrain, 0, {{"a", {1.0f, 2.0f}}});
  LITMUS_EXPECT_OK(trial->Value("a", 0).status());

  // After the end marker the same situation is final: a damaged trial, never "not saved".
  t.WriteEndMarker();
  LITMUS_ASSERT_OK(trial->Refresh());
  s = trial->Value("b", 1).status();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  EXPECT_EQ(GetTrialError(s), std::nullopt) << s.ToString();
  for (const char* part : {"damaged trial", "000000000001_worker_0.tfevents", "tensor 'b'", "step 1",
                           "worker 'worker_0'", "offset ", "training has ended"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s.ToString();
  }
}

// While training runs, a record that is not there is waited for within
// SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT refreshes, then it is damage.
TEST(TrialValueTest, MissingEventFileRetryBudget) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  t.WriteStep(0, "worker_0", Mode::kTrain, 0, {{"a", {1.0f, 2.0f}}}, {}, /*event_file=*/false);
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  options.missing_event_file_retry_limit = 3;
  StatusOr<std::unique_ptr<Trial>> opened = Trial::Open(Env::Default(), t.root(), options);
  LITMUS_ASSERT_OK(opened.status());
  Trial& trial = **opened;
  for (int poll = 0; poll < 3; ++poll) {
    const Status s = trial.Value("a", 0).status();
    EXPECT_EQ(GetTrialError(s), TrialError::kStepNotYetAvailable) << poll << ": " << s.ToString();
    LITMUS_ASSERT_OK(trial.Refresh());
  }
  const Status s = trial.Value("a", 0).status();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  EXPECT_NE(s.message().find("still missing after 3 polls"), std::string::npos) << s.ToString();
}

TEST(TrialValueTest, MissingEventFileRetryLimitFromEnvironment) {
  setenv("SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT", "7", 1);
  EXPECT_EQ(TrialOptions::FromEnvironment().missing_event_file_retry_limit, 7);
  setenv("SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT", "x", 1);
  EXPECT_EQ(TrialOptions::FromEnvironment().missing_event_file_retry_limit, 100);
  unsetenv("SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT");
  EXPECT_EQ(TrialOptions::FromEnvironment().missing_event_file_retry_limit, 100);
}

TEST(TrialValueTest, ConcurrentReadsShareOneDecode) {
  std::unique_ptr<Trial> trial = OpenFixture("pt_run_complete");
  ASSERT_NE(trial, nullptr);
  const std::vector<std::string> names = trial->TensorNames();
  const std::vector<int64_t> steps = trial->Steps();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  std::vector<std::vector<const Tensor*>> seen(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (const int64_t step : steps) {
        for (const std::string& name : names) {
          StatusOr<TensorPtr> v = trial->Value(name, step);
          if (!v.ok()) {
            if (GetTrialError(v.status()) != TrialError::kTensorUnavailableForStep) ++failures;
            seen[t].push_back(nullptr);
            continue;
          }
          seen[t].push_back(v->get());
          if (!trial->Reduction(name, step, layout::Reduction::kL2, false).ok()) ++failures;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  // Every thread got the very same decoded tensor objects (cache budget is ample).
  for (int t = 1; t < 4; ++t) EXPECT_EQ(seen[t], seen[0]);
}

// Local files whose reads are counted (bytes and calls) and whose coalescing hint is set by the
// test, to see how Trial::Prefetch batches records.
class CountingEnv : public ForwardingEnv {
 public:
  explicit CountingEnv(RandomAccessFile::Coalescing coalescing)
      : ForwardingEnv(Env::Default()), coalescing_(coalescing) {}
  int reads() const { return reads_; }

  StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override {
    LITMUS_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, base()->NewRandomAccessFile(path));
    return std::unique_ptr<RandomAccessFile>(new File(this, std::move(file)));
  }

 private:
  class File : public RandomAccessFile {
   public:
    File(CountingEnv* env, std::unique_ptr<RandomAccessFile> base) : env_(env), base_(std::move(base)) {}
    StatusOr<size_t> Read(uint64_t offset, std::span<std::byte> out) const override {
      ++env_->reads_;
      return base_->Read(offset, out);
    }
    StatusOr<uint64_t> Size() const override { return base_->Size(); }
    Coalescing coalescing() const override { return env_->coalescing_; }

   private:
    CountingEnv* const env_;
    const std::unique_ptr<RandomAccessFile> base_;
  };
  const RandomAccessFile::Coalescing coalescing_;
  std::atomic<int> reads_{0};
};

// Prefetch reads the records of one event file with one read where the hint allows, caches
// exactly what Value() would decode, and Release makes the next Value() read again.
TEST(TrialValueTest, PrefetchCoalescesReadsAndReleaseDrops) {
  const std::string root = FixturePath("pt_run_complete").string();
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  std::unique_ptr<Trial> plain = OpenDir(root);
  ASSERT_NE(plain, nullptr);
  const int64_t step = plain->Steps().front();
  const std::vector<std::string> names = plain->TensorNamesAtStep(step);  // (keys view them)
  std::vector<Trial::StepTensor> keys;
  for (const std::string& name : names) {
    if (!plain->Entries(name, step).front().location) continue;
    keys.emplace_back(name, step);
  }
  ASSERT_GE(keys.size(), 3u);
  keys.emplace_back("no_such_tensor", step);  // skipped, not an error
  keys.emplace_back(keys.front().first, 999999);

  struct Case {
    RandomAccessFile::Coalescing hint;
    bool one_read;
  };
  for (const Case& c : {Case{{}, true}, Case{{.max_record_bytes = 0}, false},
                        Case{{.max_record_bytes = UINT64_MAX, .max_gap_bytes = 0, .max_read_bytes = 1}, false}}) {
    CountingEnv env(c.hint);
    LITMUS_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Trial> trial, Trial::Open(&env, root, options));
    const int opening_reads = env.reads();  // index and collections files
    std::vector<Trial::Prefetched> prefetched;
    trial->Prefetch(keys, &prefetched, /*with_values=*/true);
    const int prefetch_reads = env.reads() - opening_reads;
    // Every saved key decoded; the unknown name and the unknown step did not.
    std::vector<uint8_t> expected(keys.size(), 1);
    expected[keys.size() - 2] = expected[keys.size() - 1] = 0;
    EXPECT_EQ(Decoded(prefetched), expected);
    if (c.one_read) {
      EXPECT_EQ(prefetch_reads, 1) << "the step's records lie in one event file";
    } else {
      EXPECT_EQ(prefetch_reads, static_cast<int>(keys.size()) - 2) << "one read per record";
    }
    for (size_t i = 0; i + 2 < keys.size(); ++i) {
      const std::string name(keys[i].first);
      const int64_t s = keys[i].second;
      LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr cached, trial->Value(name, s));
      LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr fresh, plain->Value(name, s));
      EXPECT_EQ(cached->dtype(), fresh->dtype()) << name;
      EXPECT_EQ(cached->shape(), fresh->shape()) << name;
      ASSERT_EQ(cached->bytes().size(), fresh->bytes().size()) << name;
      EXPECT_EQ(std::memcmp(cached->bytes().data(), fresh->bytes().data(), fresh->bytes().size()), 0) << name;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(cached->bytes().data()) % DTypeSize(cached->dtype()), 0u) << name;
      EXPECT_EQ(prefetched[i].value, cached) << name << ": the prefetch hands out the cached value";
      EXPECT_FALSE(prefetched[i].stored_reductions) << name;
    }
    const int after = opening_reads + prefetch_reads;
    EXPECT_EQ(env.reads(), after) << "Value() after Prefetch is a cache hit";
    trial->Prefetch(keys, &prefetched, /*with_values=*/true);
    EXPECT_EQ(env.reads(), after) << "cached keys are not read again";
    EXPECT_EQ(Decoded(prefetched), expected) << "cached keys are readable";
    std::vector<Trial::Prefetched> flags_only;
    trial->Prefetch(keys, &flags_only);
    ASSERT_EQ(flags_only.size(), keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      EXPECT_EQ(flags_only[i].decoded, expected[i] != 0) << i;
      EXPECT_EQ(flags_only[i].value, nullptr) << i << ": no value unless asked for";
    }
    trial->Release({keys.front()});
    LITMUS_ASSERT_OK(trial->Value(std::string(keys.front().first), step).status());
    EXPECT_EQ(env.reads(), after + 1) << "a released key is read again";
  }
}

// Prefetch's reductions_only keys: a large value is reduced and only its summary kept (dtype,
// shape, memos, no data), which Reduction() answers from without a read; Value() still reads the
// whole value, and its reductions agree with the summary's. The summary holds the reductions
// asked of its tensor so far, or, before any was asked, those one pass gives (sums, means, L1,
// max |x|): Reduction() records what it is asked either way. Small values and unflagged keys
// keep their data; Release drops summaries too.
TEST(TrialValueTest, PrefetchKeepsOnlySummariesOfValuesWantedForReductions) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  const auto values = [](int64_t step, size_t count) {
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>((i * 7 + static_cast<size_t>(step) * 3) % 101) - 50.5f;
    return v;
  };
  for (int64_t step = 0; step < 4; ++step) {
    t.WriteStep(step, "worker_0", Mode::kTrain, step,
                {{"big", values(step, 40000)}, {"other", values(step + 1, 40000)}, {"small", values(step, 100)}});
  }
  t.WriteEndMarker();
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  CountingEnv env({});
  LITMUS_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Trial> trial, Trial::Open(&env, t.root(), options));
  std::unique_ptr<Trial> plain = OpenDir(t.root());
  ASSERT_NE(plain, nullptr);
  constexpr auto kMean = layout::Reduction::kMean;
  constexpr uint32_t kAbsMean = static_cast<uint32_t>(kMean) * 2 + 1;  // (the trial's memo key)
  // The rule's first step: the tensors' reductions become known.
  for (const char* name : {"big", "small"}) LITMUS_ASSERT_OK(trial->Reduction(name, 0, kMean, true).status());
  const std::vector<Trial::StepTensor> keys = {{"big", 1}, {"other", 1}, {"small", 1}, {"big", 2}};
  const std::vector<uint8_t> reductions_only = {1, 1, 1, 0};
  std::vector<Trial::Prefetched> prefetched;
  trial->Prefetch(keys, &prefetched, /*with_values=*/true, reductions_only);
  EXPECT_EQ(Decoded(prefetched), (std::vector<uint8_t>{1, 1, 1, 1}));
  EXPECT_EQ(trial->values_summarized(), 2u) << "big and other at step 1";
  const TensorPtr& summary = prefetched[0].value;
  ASSERT_TRUE(summary->is_summary());
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr whole, plain->Value("big", 1));
  EXPECT_EQ(summary->dtype(), whole->dtype());
  EXPECT_EQ(summary->shape(), whole->shape());
  EXPECT_EQ(summary->num_elements(), whole->num_elements());
  EXPECT_TRUE(summary->bytes().empty()) << "no data kept";
  LITMUS_ASSERT_OK_AND_ASSIGN(const double expected, plain->Reduction("big", 1, kMean, true));
  ASSERT_TRUE(summary->Memo(kAbsMean).has_value());
  EXPECT_EQ(*summary->Memo(kAbsMean), expected);
  for (size_t i : {2, 3}) EXPECT_FALSE(prefetched[i].value->is_summary()) << keys[i].first << " keeps its data";
  // `other`, of which no reduction was asked yet: a summary of what one pass gives, each memo
  // equal to the reduction computed from the value.
  const TensorPtr& speculative = prefetched[1].value;
  ASSERT_TRUE(speculative->is_summary());
  for (const auto& [r, abs] : std::vector<std::pair<layout::Reduction, bool>>{
           {kMean, true}, {kMean, false}, {layout::Reduction::kSum, false}, {layout::Reduction::kSum, true},
           {layout::Reduction::kL1, false}, {layout::Reduction::kMax, true}}) {
    const std::optional<double> memo = speculative->Memo(static_cast<uint32_t>(r) * 2 + (abs ? 1 : 0));
    ASSERT_TRUE(memo.has_value()) << layout::ReductionName(r) << " abs " << abs;
    EXPECT_EQ(*memo, *plain->Reduction("other", 1, r, abs)) << layout::ReductionName(r) << " abs " << abs;
  }
  EXPECT_FALSE(speculative->Memo(static_cast<uint32_t>(layout::Reduction::kVariance) * 2).has_value());
  EXPECT_EQ(trial->ReductionsAsked("other"), 0u);
  const int before_other = env.reads();
  EXPECT_EQ(*trial->Reduction("other", 1, kMean, true), *speculative->Memo(kAbsMean));
  EXPECT_EQ(env.reads(), before_other) << "answered by the summary";
  EXPECT_EQ(trial->ReductionsAsked("other"), 1u << kAbsMean) << "and recorded";
  EXPECT_EQ(*trial->Reduction("other", 1, layout::Reduction::kVariance, false),
            *plain->Reduction("other", 1, layout::Reduction::kVariance, false));
  EXPECT_EQ(env.reads(), before_other + 1) << "a reduction the summary lacks reads the value";
  // Reduction() from the summary, without a read; Value() reads the whole value again.
  const int reads = env.reads();
  LITMUS_ASSERT_OK_AND_ASSIGN(const double reduced, trial->Reduction("big", 1, kMean, true));
  EXPECT_EQ(reduced, expected);
  EXPECT_EQ(env.reads(), reads) << "answered by the summary";
  LITMUS_ASSERT_OK_AND_ASSIGN(TensorPtr read, trial->Value("big", 1));
  EXPECT_FALSE(read->is_summary());
  ASSERT_EQ(read->bytes().size(), whole->bytes().size());
  EXPECT_EQ(std::memcmp(read->bytes().data(), whole->bytes().data(), whole->bytes().size()), 0);
  EXPECT_EQ(env.reads(), reads + 1);
  // A reduction the summary lacks is computed from the value (now cached).
  LITMUS_ASSERT_OK_AND_ASSIGN(const double max, trial->Reduction("big", 1, layout::Reduction::kMax, false));
  EXPECT_EQ(max, *plain->Reduction("big", 1, layout::Reduction::kMax, false));
  // A prefetch finds the summary (or the cached value) again: no read; Release drops both.
  trial->Release({{"big", 1}});
  trial->Prefetch({{"big", 1}}, &prefetched, true, reductions_only);
  EXPECT_EQ(trial->values_summarized(), 3u);
  trial->Prefetch({{"big", 1}}, &prefetched, true, reductions_only);
  EXPECT_EQ(trial->values_summarized(), 3u) << "the cached summary is found";
  EXPECT_TRUE(prefetched[0].value->is_summary());
  trial->Release({{"big", 1}});
  const int before = env.reads();
  LITMUS_ASSERT_OK(trial->Reduction("big", 1, kMean, true).status());
  EXPECT_EQ(env.reads(), before + 1) << "the released summary answers nothing";
  // Storage that reads large records together (S3) keeps them: one read, not one per record.
  CountingEnv together({.max_record_bytes = UINT64_MAX, .max_gap_bytes = 1 << 20, .max_read_bytes = 16 << 20});
  LITMUS_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Trial> coalescing, Trial::Open(&together, t.root(), options));
  for (const char* name : {"big", "other"}) LITMUS_ASSERT_OK(coalescing->Reduction(name, 0, kMean, true).status());
  const int opened = together.reads();
  coalescing->Prefetch({{"big", 3}, {"other", 3}}, &prefetched, true, std::vector<uint8_t>{1, 1});
  EXPECT_EQ(Decoded(prefetched), (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(coalescing->values_summarized(), 0u);
  EXPECT_EQ(together.reads(), opened + 1);
}

// Once a rule has read a raw value of a tensor (Value's rule_read: the host's tensor_value), its
// values are kept whole even where they are wanted for reductions only: rules that require a
// tensor for its reductions may read its values too (built-in ones do), and each value would
// otherwise be read twice.
TEST(TrialValueTest, ATensorWhoseValueARuleReadIsKeptWhole) {
  SyntheticTrial t;
  t.WriteCollections({"worker_0"}, 1);
  for (int64_t step = 0; step < 3; ++step) {
    t.WriteStep(step, "worker_0", Mode::kTrain, step, {{"big", std::vector<float>(40000, 0.5f + static_cast<float>(step))}});
  }
  t.WriteEndMarker();
  std::unique_ptr<Trial> trial = OpenDir(t.root());
  ASSERT_NE(trial, nullptr);
  LITMUS_ASSERT_OK(trial->Reduction("big", 0, layout::Reduction::kMean, true).status());
  std::vector<Trial::Prefetched> prefetched;
  trial->Prefetch({{"big", 1}}, &prefetched, /*with_values=*/true, std::vector<uint8_t>{1});
  ASSERT_TRUE(prefetched[0].decoded);
  EXPECT_TRUE(prefetched[0].value->is_summary());
  LITMUS_ASSERT_OK(trial->Value("big", 1).status());  // the runner's own read: no rule's
  trial->Prefetch({{"big", 1}}, &prefetched, /*with_values=*/true, std::vector<uint8_t>{1});
  EXPECT_FALSE(prefetched[0].value->is_summary()) << "the cached whole value is found first";
  LITMUS_ASSERT_OK(trial->Value("big", 1, Mode::kGlobal, std::nullopt, /*rule_read=*/true).status());
  trial->Prefetch({{"big", 2}}, &prefetched, /*with_values=*/true, std::vector<uint8_t>{1});
  ASSERT_TRUE(prefetched[0].decoded);
  EXPECT_FALSE(prefetched[0].value->is_summary()) << "a rule read big: kept whole";
  EXPECT_EQ(prefetched[0].value->bytes().size(), 40000u * sizeof(float));
  EXPECT_EQ(trial->values_summarized(), 1u);
}

}  // namespace
}  // namespace litmus
