// Round trips: trials written by litmus::writer, read back with litmus::Trial (the smdebug-
// compatible reader): values, dtypes, shapes, modes and steps, collections, stored reductions,
// shapes-only entries and scalars; and two workers writing one trial concurrently, with the
// reader seeing each step complete only once both have published it.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <complex>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "litmus/engine/trial.h"
#include "litmus/format/trial_layout.h"
#include "litmus/writer/writer.h"
#include "support/temp_dir.h"
#include "writer_test_util.h"

namespace litmus::writer {
namespace {

using layout::Reduction;
using litmus::testing::TempDir;
using litmus::testing::ToString;

TrialOptions FastTrialOptions() {
  TrialOptions o;
  o.training_end_delay_refresh_s = 0;
  return o;
}

std::unique_ptr<Trial> OpenTrial(const std::string& dir) {
  auto t = Trial::Open(Env::Default(), dir, FastTrialOptions());
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

struct Written {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::string bytes;
  std::vector<std::string> strings;
};

TEST(WriterRoundTripTest, EveryDtypeShapeModeAndStep) {
  TempDir dir;
  WriterOptions o;
  o.save_config = SaveConfig::Every(1);
  o.allow_dtypes_smdebug_cannot_read = true;
  auto w = Writer::Open(dir.str(), o);
  LITMUS_ASSERT_OK(w.status());
  std::vector<std::vector<Written>> per_step;
  const std::vector<Mode> modes = {Mode::kTrain, Mode::kTrain, Mode::kEval, Mode::kTrain,
                                   Mode::kPredict};
  for (size_t step = 0; step < modes.size(); ++step) {
    LITMUS_ASSERT_OK((*w)->SetMode(modes[step]));
    LITMUS_ASSERT_OK((*w)->BeginStep());
    std::vector<Written> written;
    const double k = static_cast<double>(step);
    const auto add = [&](std::string name, auto values, std::vector<int64_t> shape) {
      using T = typename decltype(values)::value_type;
      LITMUS_ASSERT_OK((*w)->SaveTensor(name, std::span<const T>(values), shape));
      written.push_back({name, DTypeOf<T>(), shape, ToString(std::as_bytes(std::span<const T>(values))), {}});
    };
    add("t/f16", std::vector<Float16>{{0x3C00}, {static_cast<uint16_t>(0x4000 + step)}}, {2});
    add("t/f32", std::vector<float>{1.5f + static_cast<float>(k), -0.0f, INFINITY, NAN, 1e-30f, 7}, {2, 3});
    add("t/f64", std::vector<double>{k, -2.5e300}, {2, 1});
    add("t/i8", std::vector<int8_t>{-128, -1, 0, 127}, {4});
    add("t/i16", std::vector<int16_t>{-32768, static_cast<int16_t>(step)}, {2});
    add("t/i32", std::vector<int32_t>{INT32_MIN, static_cast<int32_t>(step), INT32_MAX}, {3});
    add("t/i64", std::vector<int64_t>{INT64_MIN + static_cast<int64_t>(step)}, {});
    add("t/u8", std::vector<uint8_t>{0, 255, static_cast<uint8_t>(step)}, {1, 3});
    add("t/u16", std::vector<uint16_t>{65535}, {1});
    add("t/u32", std::vector<uint32_t>{4000000000u, 1}, {2});
    add("t/u64", std::vector<uint64_t>{UINT64_MAX, step}, {2});
    add("t/c64", std::vector<std::complex<float>>{{1, -1}}, {1});
    add("t/c128", std::vector<std::complex<double>>{{0.5, k}, {3, 4}}, {2});
    const std::vector<uint8_t> bools = {1, 0, static_cast<uint8_t>(step % 2)};
    LITMUS_ASSERT_OK((*w)->SaveTensor("t/bool", std::as_bytes(std::span(bools)), std::vector<int64_t>{3}, DType::kBool));
    written.push_back({"t/bool", DType::kBool, {3}, ToString(std::as_bytes(std::span(bools))), {}});
    const std::vector<std::string> strings = {"a", "step " + std::to_string(step), "ünï"};
    LITMUS_ASSERT_OK((*w)->SaveStrings("t/str", strings));
    written.push_back({"t/str", DType::kInvalid, {3}, "", strings});
    // A large tensor (direct-write path).
    std::vector<float> big(50000);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) * 0.5f + static_cast<float>(k);
    add("t/big", big, {250, 200});
    LITMUS_ASSERT_OK((*w)->EndStep());
    per_step.push_back(std::move(written));
  }
  LITMUS_ASSERT_OK((*w)->Close());

  auto trial = OpenTrial(dir.str());
  ASSERT_NE(trial, nullptr);
  EXPECT_TRUE(trial->end_marker_seen());
  EXPECT_EQ(trial->Steps(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(trial->Steps(Mode::kTrain), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(trial->GlobalStep(Mode::kTrain, 2), 3);
  EXPECT_EQ(trial->GlobalStep(Mode::kEval, 0), 2);
  EXPECT_EQ(trial->GlobalStep(Mode::kPredict, 0), 4);
  EXPECT_EQ(trial->workers(), std::vector<std::string>{"worker_0"});
  EXPECT_EQ(trial->num_workers(), 1);
  for (size_t step = 0; step < per_step.size(); ++step) {
    const auto mode = trial->ModeOfGlobalStep(static_cast<int64_t>(step));
    ASSERT_TRUE(mode.has_value());
    EXPECT_EQ(mode->first, modes[step]);
    for (const Written& x : per_step[step]) {
      auto v = trial->Value(x.name, static_cast<int64_t>(step));
      ASSERT_TRUE(v.ok()) << x.name << " step " << step << ": " << v.status().ToString();
      EXPECT_EQ((*v)->shape(), x.shape) << x.name;
      if (x.strings.empty()) {
        EXPECT_EQ((*v)->dtype(), x.dtype) << x.name;
        EXPECT_EQ(ToString((*v)->bytes()), x.bytes) << x.name;
      } else {
        EXPECT_TRUE((*v)->is_string());
        EXPECT_EQ((*v)->strings(), x.strings);
      }
      // And through (mode, mode step).
      auto by_mode = trial->Value(x.name, mode->second, mode->first);
      ASSERT_TRUE(by_mode.ok()) << by_mode.status().ToString();
      EXPECT_EQ((*by_mode)->shape(), x.shape);
    }
  }
}

TEST(WriterRoundTripTest, CollectionsReductionsShapesAndScalars) {
  TempDir dir;
  WriterOptions o;
  o.save_config = SaveConfig::Every(1);
  for (CollectionConfig& c : o.collections) {
    if (c.name == "gradients") {
      c.reduction_config = ReductionConfig{.reductions = {Reduction::kMean, Reduction::kStd, Reduction::kMax},
                                           .abs_reductions = {Reduction::kMean},
                                           .norms = {Reduction::kL2},
                                           .save_raw_tensor = false};
    }
    if (c.name == "weights") {
      c.reduction_config = ReductionConfig{.reductions = {Reduction::kVariance}, .save_shape = true};
      c.save_config = SaveConfig().Set(Mode::kTrain, SaveConfigMode{.save_interval = 2});
    }
  }
  o.collections.push_back(CollectionConfig{.name = "shapes",
                                           .include_regex = {"^act/"},
                                           .reduction_config = ReductionConfig{.save_raw_tensor = false,
                                                                               .save_shape = true}});
  auto w = Writer::Open(dir.str(), o);
  LITMUS_ASSERT_OK(w.status());
  const std::vector<float> grad = {0.5f, -1.0f, 2.0f, -3.5f};
  const std::vector<float> weight = {1, 2, 3, 4, 5, 6};
  LITMUS_ASSERT_OK((*w)->SetMode(Mode::kTrain));
  for (int step = 0; step < 4; ++step) {
    LITMUS_ASSERT_OK((*w)->BeginStep());
    LITMUS_ASSERT_OK((*w)->SaveTensor("MLP_fc1.weight", std::span<const float>(weight), std::vector<int64_t>{2, 3}));
    LITMUS_ASSERT_OK((*w)->SaveTensor("gradient/MLP_fc1.weight", std::span<const float>(grad), std::vector<int64_t>{2, 2}));
    LITMUS_ASSERT_OK((*w)->SaveTensor("act/relu", std::span<const float>(weight), std::vector<int64_t>{3, 2}));
    const float loss = 4.0f - static_cast<float>(step);
    LITMUS_ASSERT_OK((*w)->SaveTensor("CrossEntropyLoss_output_0", std::span(&loss, 1), {}));
    LITMUS_ASSERT_OK((*w)->SaveScalar("lr", 0.1 * step));
    LITMUS_ASSERT_OK((*w)->EndStep());
  }
  LITMUS_ASSERT_OK((*w)->Close());

  auto trial = OpenTrial(dir.str());
  ASSERT_NE(trial, nullptr);
  const auto members = [&](const std::string& c) {
    auto m = trial->TensorNamesInCollection(c);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return m.ok() ? *m : std::vector<std::string>{};
  };
  EXPECT_EQ(members("weights"), std::vector<std::string>{"MLP_fc1.weight"});
  EXPECT_EQ(members("gradients"), std::vector<std::string>{"gradient/MLP_fc1.weight"});
  EXPECT_EQ(members("losses"), std::vector<std::string>{"CrossEntropyLoss_output_0"});
  EXPECT_EQ(members("shapes"), std::vector<std::string>{"act/relu"});
  EXPECT_TRUE(members("biases").empty());
  EXPECT_TRUE(trial->HasTensor("scalar/lr"));
  EXPECT_FALSE(trial->HasTensor("smdebug/reductions/mean/gradient/MLP_fc1.weight"));
  ASSERT_TRUE(trial->collections().at("gradients").reduction_config.has_value());
  EXPECT_EQ(trial->collections().at("gradients").reduction_config->reductions,
            "mean,std,max,l2_norm,abs_mean");
  EXPECT_FALSE(trial->collections().at("gradients").reduction_config->save_raw_tensor);

  // Gradients: stored reductions only (population std, element-wise l2).
  const double mean = (0.5 - 1.0 + 2.0 - 3.5) / 4;
  double var = 0;
  for (float g : grad) var += (g - mean) * (g - mean);
  var /= 4;
  for (int64_t step = 0; step < 4; ++step) {
    auto v = trial->Value("gradient/MLP_fc1.weight", step);
    EXPECT_EQ(GetTrialError(v.status()), TrialError::kTensorUnavailableForStep) << v.status().ToString();
    const auto r = [&](Reduction red, bool abs) {
      auto x = trial->Reduction("gradient/MLP_fc1.weight", step, red, abs);
      EXPECT_TRUE(x.ok()) << x.status().ToString();
      return x.ok() ? *x : NAN;
    };
    EXPECT_DOUBLE_EQ(r(Reduction::kMean, false), mean);
    EXPECT_DOUBLE_EQ(r(Reduction::kStd, false), std::sqrt(var));
    EXPECT_DOUBLE_EQ(r(Reduction::kMax, false), 2.0);
    EXPECT_DOUBLE_EQ(r(Reduction::kL2, false), std::sqrt(0.25 + 1 + 4 + 12.25));
    EXPECT_DOUBLE_EQ(r(Reduction::kMean, true), 7.0 / 4);
    const auto entries = trial->Entries("gradient/MLP_fc1.weight", step);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_FALSE(entries[0].location.has_value());
    EXPECT_EQ(entries[0].stored_reductions.size(), 5u);
    // Scalars every step, losses raw.
    auto lr = trial->Value("scalar/lr", step);
    ASSERT_TRUE(lr.ok()) << lr.status().ToString();
    EXPECT_EQ((*lr)->dtype(), DType::kFloat64);
    EXPECT_EQ((*lr)->shape(), std::vector<int64_t>{1});
    EXPECT_DOUBLE_EQ((*lr)->ElementAsDouble(0), 0.1 * static_cast<double>(step));
    auto loss = trial->Value("CrossEntropyLoss_output_0", step);
    ASSERT_TRUE(loss.ok());
    EXPECT_TRUE((*loss)->shape().empty());
    EXPECT_DOUBLE_EQ((*loss)->ElementAsDouble(0), 4.0 - static_cast<double>(step));
    // Shapes-only tensors.
    auto shape = trial->Shape("act/relu", step);
    ASSERT_TRUE(shape.ok()) << shape.status().ToString();
    EXPECT_EQ(*shape, (std::vector<int64_t>{3, 2}));
  }
  // Weights every second TRAIN step, raw + stored variance, no shape entry next to the raw record.
  EXPECT_EQ(trial->TensorSteps("MLP_fc1.weight"), (std::vector<int64_t>{0, 2}));
  auto wv = trial->Value("MLP_fc1.weight", 2);
  ASSERT_TRUE(wv.ok()) << wv.status().ToString();
  EXPECT_EQ((*wv)->shape(), (std::vector<int64_t>{2, 3}));
  auto wvar = trial->Reduction("MLP_fc1.weight", 2, Reduction::kVariance, false);
  ASSERT_TRUE(wvar.ok());
  EXPECT_DOUBLE_EQ(*wvar, 17.5 / 6);
  EXPECT_FALSE(trial->Entries("MLP_fc1.weight", 2)[0].shape.has_value());
}

// Two workers (threads) write one trial. Barriers fix the interleaving: worker_0 publishes step
// k, the reader must see k incomplete; worker_1 publishes k, the reader must see it complete.
TEST(WriterRoundTripTest, TwoConcurrentWorkersCompleteStepsTogether) {
  TempDir dir;
  constexpr int kSteps = 4;
  std::barrier sync(3);
  const auto worker = [&](int rank) {
    WriterOptions o;
    o.worker = "worker_" + std::to_string(rank);
    o.num_workers = 2;
    o.save_config = SaveConfig::Every(1);
    auto w = Writer::Open(dir.str(), o);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    LITMUS_EXPECT_OK((*w)->SetMode(Mode::kTrain));
    for (int k = 0; k < kSteps; ++k) {
      const auto write = [&] {
        std::vector<float> g(5000, static_cast<float>(rank * 100 + k));
        LITMUS_EXPECT_OK((*w)->BeginStep());
        LITMUS_EXPECT_OK((*w)->SaveTensor("gradient/fc.weight", std::span<const float>(g), std::vector<int64_t>{5000}));
        LITMUS_EXPECT_OK((*w)->EndStep());
      };
      if (rank == 0) write();
      sync.arrive_and_wait();  // 1: worker_0 has published k
      sync.arrive_and_wait();  // 2: the reader has checked
      if (rank == 1) write();
      sync.arrive_and_wait();  // 3: worker_1 has published k
    }
    LITMUS_EXPECT_OK((*w)->Close());
  };
  std::thread w0(worker, 0);
  std::thread w1(worker, 1);
  auto trial = OpenTrial(dir.str());
  ASSERT_NE(trial, nullptr);
  for (int k = 0; k < kSteps; ++k) {
    sync.arrive_and_wait();  // 1
    LITMUS_EXPECT_OK(trial->Refresh());
    EXPECT_EQ(trial->num_workers(), 2);
    EXPECT_FALSE(trial->IsStepComplete(k)) << k;
    EXPECT_EQ(trial->WorkersForStep(k), std::vector<std::string>{"worker_0"});
    EXPECT_EQ(trial->StepAvailability(k), StepState::kNotYetAvailable);
    EXPECT_EQ(trial->last_complete_step(), k - 1);
    sync.arrive_and_wait();  // 2
    sync.arrive_and_wait();  // 3
    LITMUS_EXPECT_OK(trial->Refresh());
    EXPECT_TRUE(trial->IsStepComplete(k)) << k;
    EXPECT_EQ(trial->last_complete_step(), k);
    EXPECT_EQ(trial->StepAvailability(k), StepState::kAvailable);
    for (const std::string worker_name : {"worker_0", "worker_1"}) {
      auto v = trial->Value("gradient/fc.weight", k, Mode::kGlobal, worker_name);
      ASSERT_TRUE(v.ok()) << v.status().ToString();
      EXPECT_EQ((*v)->ElementAsDouble(4999), (worker_name == std::string("worker_0") ? 0 : 100) + k);
    }
  }
  w0.join();
  w1.join();
  // Multi-worker writers leave the end marker to a coordinator.
  LITMUS_EXPECT_OK(trial->Refresh());
  EXPECT_FALSE(trial->end_marker_seen());
  EXPECT_EQ(trial->workers(), (std::vector<std::string>{"worker_0", "worker_1"}));
  LITMUS_ASSERT_OK(MarkTrainingEnded(nullptr, dir.str()));
  LITMUS_EXPECT_OK(trial->Refresh());
  EXPECT_TRUE(trial->end_marker_seen());
  EXPECT_TRUE(trial->loaded_all_steps());
  EXPECT_EQ(trial->StepAvailability(kSteps), StepState::kNoMoreData);
}

}  // namespace
}  // namespace litmus::writer
