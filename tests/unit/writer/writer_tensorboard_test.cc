// litmus::writer's TensorBoard export (WriterOptions::export_tensorboard / tensorboard_dir), the
// hook side of smdebug's TensorBoard support. The files are decoded with the project's own protos:
// framing and every CRC, the file_version record, one folder per mode and one file per saved
// step named as smdebug names them, tags, global steps, scalar values, and histograms of known
// tensors (min, max, num, sum, sum_squares, buckets summing to num).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <vector>

#include "litmus/format/crc32c.h"
#include "litmus/format/proto/event.pb.h"
#include "litmus/format/tensorboard_histogram.h"
#include "litmus/format/tfrecord.h"
#include "litmus/writer/writer.h"
#include "support/temp_dir.h"
#include "support/tensorboard_records.h"
#include "writer_test_util.h"

namespace litmus::writer {
namespace {

namespace fs = std::filesystem;
using litmus::testing::FaultEnv;
using litmus::testing::ListTree;
using litmus::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

constexpr double kWallTime = 1700000000.25;


// One decoded TensorBoard file: its summaries by tag (each tag once), all checked to be at `step`.
struct StepFile {
  std::map<std::string, format::proto::Summary::Value> values;
};

StepFile ReadStepFile(const fs::path& file, int64_t step) {
  StepFile f;
  const std::vector<format::proto::Event> events = litmus::testing::DecodeTensorBoardFile(file);
  EXPECT_FALSE(events.empty()) << file;
  if (events.empty()) return f;
  EXPECT_EQ(events[0].file_version(), "brain.Event:2") << file;
  EXPECT_FALSE(events[0].has_summary());
  for (size_t i = 1; i < events.size(); ++i) {
    const format::proto::Event& e = events[i];
    EXPECT_EQ(e.step(), step) << file << " record " << i;
    EXPECT_EQ(e.wall_time(), kWallTime);
    EXPECT_EQ(e.summary().value_size(), 1);
    for (const auto& v : e.summary().value()) {
      EXPECT_TRUE(f.values.emplace(v.tag(), v).second) << "tag " << v.tag() << " twice in " << file;
    }
  }
  return f;
}

std::vector<std::string> Tags(const StepFile& f) {
  std::vector<std::string> tags;
  for (const auto& [tag, v] : f.values) tags.push_back(tag);
  return tags;
}

// Checks a histogram against the values it was built from (finite ones only).
void ExpectHistogramOf(const format::proto::Summary::Value& v, const std::vector<double>& values) {
  ASSERT_TRUE(v.has_histo()) << v.tag();
  const auto& h = v.histo();
  std::vector<double> finite;
  for (double x : values) {
    if (std::isfinite(x)) finite.push_back(x);
  }
  ASSERT_FALSE(finite.empty());
  EXPECT_EQ(h.num(), static_cast<double>(finite.size())) << v.tag();
  EXPECT_EQ(h.min(), *std::min_element(finite.begin(), finite.end())) << v.tag();
  EXPECT_EQ(h.max(), *std::max_element(finite.begin(), finite.end())) << v.tag();
  EXPECT_DOUBLE_EQ(h.sum(), std::accumulate(finite.begin(), finite.end(), 0.0)) << v.tag();
  EXPECT_DOUBLE_EQ(h.sum_squares(), std::inner_product(finite.begin(), finite.end(), finite.begin(), 0.0))
      << v.tag();
  EXPECT_EQ(std::accumulate(h.bucket().begin(), h.bucket().end(), 0.0), h.num()) << v.tag();
  ASSERT_EQ(h.bucket_size(), h.bucket_limit_size());
  ASSERT_GE(h.bucket_size(), 2);
  EXPECT_EQ(h.bucket(0), 0) << "the first bucket is the empty one on the left";
  // Every limit is one of TensorFlow's default edges, ascending; each value lies in its bucket.
  const std::span<const double> edges = tensorboard::DefaultBucketEdges();
  for (int i = 0; i < h.bucket_limit_size(); ++i) {
    EXPECT_NE(std::find(edges.begin(), edges.end(), h.bucket_limit(i)), edges.end()) << h.bucket_limit(i);
    if (i > 0) {
      EXPECT_LT(h.bucket_limit(i - 1), h.bucket_limit(i));
    }
  }
  for (double x : finite) {
    int holding = -1;
    for (int i = 1; i < h.bucket_limit_size(); ++i) {
      if (x >= h.bucket_limit(i - 1) && x < h.bucket_limit(i)) holding = i;
    }
    ASSERT_GE(holding, 1) << x << " lies in no bucket of " << v.tag();
    EXPECT_GE(h.bucket(holding), 1) << x;
  }
}

WriterOptions TensorBoardOptions() {
  WriterOptions o;
  o.save_config = SaveConfig::Every(1);
  o.export_tensorboard = true;
  o.wall_clock = [] { return kWallTime; };
  o.log = [](LogLevel, std::string_view) {};
  return o;
}

const std::vector<float> kWeight = {1.0f, -2.0f, 0.0f, 0.5f, 3.0f, -0.25f};  // shape {2, 3}
const std::vector<float> kBias = {0.125f, -0.0625f};
const std::vector<float> kGradient = {1e-3f, -2e-3f, 0.0f, 4e-3f, -5e-3f, 6e-3f};

std::vector<double> AsDoubles(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// One step of a PyTorch-hook-like training loop (names as smdebug's PyTorch hook gives them).
void Step(Writer& w, Mode mode, float loss) {
  ASSERT_TRUE(w.SetMode(mode).ok());
  ASSERT_TRUE(w.BeginStep().ok());
  ASSERT_TRUE(w.SaveTensor("MLP_fc1.weight", kWeight, {2, 3}).ok());
  ASSERT_TRUE(w.SaveTensor("MLP_fc1.bias", kBias, {2}).ok());
  ASSERT_TRUE(w.SaveTensor("MSELoss_output_0", std::vector<float>{loss}, {}).ok());
  // Not due in EVAL (smdebug never saves gradients there): SaveTensor writes nothing.
  ASSERT_TRUE(w.SaveTensor("gradient/MLP_fc1.weight", kGradient, {2, 3}).ok());
  if (mode == Mode::kTrain) {
    ASSERT_TRUE(w.SaveScalar("learning_rate", 0.01).ok());
  }
  ASSERT_TRUE(w.EndStep().ok());
}

TEST(WriterTensorBoardTest, PerModeFilesKeyedByTheGlobalStep) {
  TempDir dir;
  const fs::path trial = dir.path() / "trial";
  auto w = Writer::Open(trial.string(), TensorBoardOptions());
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ((*w)->tensorboard_dir(), (trial / "tensorboard").string());
  Step(**w, Mode::kTrain, 0.75f);  // global 0, TRAIN 0
  Step(**w, Mode::kTrain, 0.5f);   // global 1, TRAIN 1
  Step(**w, Mode::kEval, 0.625f);  // global 2, EVAL 0
  Step(**w, Mode::kTrain, 0.25f);  // global 3, TRAIN 2
  ASSERT_TRUE((*w)->Close().ok());

  // smdebug's TensorboardFileLocation: <tensorboard_dir>/<mode name>/<global step, 12 digits>_<worker>.tfevents.
  const fs::path tb = trial / "tensorboard";
  EXPECT_THAT(ListTree(tb), ::testing::ElementsAre("EVAL/000000000002_worker_0.tfevents",
                                                   "TRAIN/000000000000_worker_0.tfevents",
                                                   "TRAIN/000000000001_worker_0.tfevents",
                                                   "TRAIN/000000000003_worker_0.tfevents"));

  const std::map<int64_t, float> train_losses = {{0, 0.75f}, {1, 0.5f}, {3, 0.25f}};
  for (const auto& [step, loss] : train_losses) {
    char name[64];
    std::snprintf(name, sizeof name, "TRAIN/%012lld_worker_0.tfevents", static_cast<long long>(step));
    SCOPED_TRACE(name);
    const StepFile f = ReadStepFile(tb / name, step);
    EXPECT_THAT(Tags(f), ElementsAre("MSELoss_output_0", "biases/MLP_fc1.bias", "gradients/gradient/MLP_fc1.weight",
                                     "scalar/learning_rate", "weights/MLP_fc1.weight"));
    EXPECT_EQ(f.values.at("MSELoss_output_0").simple_value(), loss);
    EXPECT_EQ(f.values.at("scalar/learning_rate").simple_value(), 0.01f);
    ExpectHistogramOf(f.values.at("weights/MLP_fc1.weight"), AsDoubles(kWeight));
    ExpectHistogramOf(f.values.at("biases/MLP_fc1.bias"), AsDoubles(kBias));
    ExpectHistogramOf(f.values.at("gradients/gradient/MLP_fc1.weight"), AsDoubles(kGradient));
  }
  // The known tensor, spelled out: {1, -2, 0, 0.5, 3, -0.25}.
  const StepFile first = ReadStepFile(tb / "TRAIN/000000000000_worker_0.tfevents", 0);
  const auto& h = first.values.at("weights/MLP_fc1.weight").histo();
  EXPECT_EQ(h.min(), -2.0);
  EXPECT_EQ(h.max(), 3.0);
  EXPECT_EQ(h.num(), 6);
  EXPECT_EQ(h.sum(), 2.25);
  EXPECT_EQ(h.sum_squares(), 1 + 4 + 0 + 0.25 + 9 + 0.0625);

  // EVAL at global step 2 (its mode step is 0): no gradients, no save_scalar.
  const StepFile eval = ReadStepFile(tb / "EVAL/000000000002_worker_0.tfevents", 2);
  EXPECT_THAT(Tags(eval), ElementsAre("MSELoss_output_0", "biases/MLP_fc1.bias", "weights/MLP_fc1.weight"));
  EXPECT_EQ(eval.values.at("MSELoss_output_0").simple_value(), 0.625f);

  // The trial is the same as without the export, and its reader ignores tensorboard/.
  EXPECT_TRUE(fs::exists(trial / "index/000000000/000000000003_worker_0.json"));
}

TEST(WriterTensorBoardTest, OffByDefaultAndATensorBoardDirTurnsItOn) {
  TempDir dir;
  {
    WriterOptions o = TensorBoardOptions();
    o.export_tensorboard = false;
    auto w = Writer::Open((dir.path() / "plain").string(), o);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ((*w)->tensorboard_dir(), "");
    Step(**w, Mode::kTrain, 1.0f);
    ASSERT_TRUE((*w)->Close().ok());
    EXPECT_FALSE(fs::exists(dir.path() / "plain" / "tensorboard"));
  }
  // As smdebug's get_tensorboard_dir: a tensorboard_dir without export_tensorboard exports anyway.
  WriterOptions o = TensorBoardOptions();
  o.export_tensorboard = false;
  o.tensorboard_dir = (dir.path() / "tb" / "run1/").string();
  auto w = Writer::Open((dir.path() / "trial").string(), o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ((*w)->tensorboard_dir(), (dir.path() / "tb" / "run1").string());
  Step(**w, Mode::kGlobal, 1.0f);
  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_THAT(ListTree(dir.path() / "tb" / "run1"), ElementsAre("GLOBAL/000000000000_worker_0.tfevents"));
  EXPECT_FALSE(fs::exists(dir.path() / "trial" / "tensorboard"));
}

TEST(WriterTensorBoardTest, SaveHistogramScalarCollectionsDtypesAndTags) {
  TempDir dir;
  WriterOptions o = TensorBoardOptions();
  o.allow_dtypes_smdebug_cannot_read = true;
  CollectionConfig quiet{.name = "quiet", .include_regex = {"^quiet"}};
  quiet.save_histogram = false;
  CollectionConfig acts{.name = "acts", .include_regex = {"act"}};
  CollectionConfig metrics{.name = "metrics", .include_regex = {"^accuracy"}};
  o.collections = {CollectionConfig{.name = "default"}, quiet, acts, metrics};
  auto w = Writer::Open((dir.path() / "trial").string(), o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE((*w)->SetMode(Mode::kTrain).ok());
  ASSERT_TRUE((*w)->BeginStep().ok());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // save_histogram false: none; also in `acts` (save_histogram true): that one's tag.
  ASSERT_TRUE((*w)->SaveTensor("quiet.w", std::vector<float>{1, 2}, {2}).ok());
  ASSERT_TRUE((*w)->SaveTensor("quiet_act", std::vector<float>{1, 2}, {2}).ok());
  // NaN and inf are left out of the histogram; all-NaN gives none.
  ASSERT_TRUE((*w)->SaveTensor("relu_act", std::vector<double>{nan, -1.5, inf, 2.5, -inf}, {5}).ok());
  ASSERT_TRUE((*w)->SaveTensor("nan_act", std::vector<double>{nan, nan}, {2}).ok());
  // Integers are histogrammed; bool and complex are not.
  ASSERT_TRUE((*w)->SaveTensor("int_act", std::vector<int32_t>{-3, 7, 7}, {3}).ok());
  ASSERT_TRUE((*w)->SaveTensor("uint16_act", std::vector<uint16_t>{65535, 1}, {2}).ok());
  const std::vector<uint8_t> mask = {1, 0};
  ASSERT_TRUE((*w)->SaveTensor("mask_act", std::as_bytes(std::span(mask)), {2}, DType::kBool).ok());
  ASSERT_TRUE((*w)->SaveTensor("complex_act", std::vector<std::complex<double>>{{1, 2}}, {1}).ok());
  // TensorFlow names are cleaned as smdebug cleans tags.
  ASSERT_TRUE((*w)->SaveTensor("dense/act:0", std::vector<float>{0.5f}, {1}).ok());
  // Tensors matching no collection join `default` (save_histogram true).
  ASSERT_TRUE((*w)->SaveTensor("other", std::vector<float>{4}, {1}).ok());
  // A scalar collection: a single element gives a scalar, more give nothing.
  ASSERT_TRUE((*w)->SaveTensor("accuracy", std::vector<double>{0.875}, {1, 1}).ok());
  ASSERT_TRUE((*w)->SaveTensor("accuracy_per_class", std::vector<double>{0.5, 1.0}, {2}).ok());
  ASSERT_TRUE((*w)->EndStep().ok());
  ASSERT_TRUE((*w)->Close().ok());

  const StepFile f = ReadStepFile(dir.path() / "trial/tensorboard/TRAIN/000000000000_worker_0.tfevents", 0);
  EXPECT_THAT(Tags(f), UnorderedElementsAre("acts/quiet_act", "acts/relu_act", "acts/int_act", "acts/uint16_act",
                                            "acts/dense/act_0", "default/other", "accuracy"));
  ExpectHistogramOf(f.values.at("acts/quiet_act"), {1, 2});
  ExpectHistogramOf(f.values.at("acts/relu_act"), {-1.5, 2.5});
  ExpectHistogramOf(f.values.at("acts/int_act"), {-3, 7, 7});
  ExpectHistogramOf(f.values.at("acts/uint16_act"), {65535, 1});
  ExpectHistogramOf(f.values.at("acts/dense/act_0"), {0.5});
  EXPECT_EQ(f.values.at("accuracy").simple_value(), 0.875f);
}

TEST(WriterTensorBoardTest, RefusesAFolderHoldingThisWorkersFiles) {
  TempDir dir;
  WriterOptions o = TensorBoardOptions();
  o.tensorboard_dir = (dir.path() / "tb").string();
  {
    auto w = Writer::Open((dir.path() / "a").string(), o);
    ASSERT_TRUE(w.ok());
    Step(**w, Mode::kTrain, 1.0f);
    ASSERT_TRUE((*w)->Close().ok());
  }
  auto again = Writer::Open((dir.path() / "b").string(), o);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(again.status().message(), HasSubstr((dir.path() / "tb").string()));
  EXPECT_THAT(again.status().message(), HasSubstr("TRAIN/000000000000_worker_0.tfevents"));
  EXPECT_THAT(again.status().message(), HasSubstr("overwrite_existing"));
  EXPECT_FALSE(fs::exists(dir.path() / "b")) << "nothing created when refused";

  WriterOptions other = o;  // another worker of a job shares the folder
  other.worker = "worker_1";
  EXPECT_TRUE(Writer::Open((dir.path() / "c").string(), other).ok());

  o.overwrite_existing = true;
  auto replaced = Writer::Open((dir.path() / "d").string(), o);
  ASSERT_TRUE(replaced.ok()) << replaced.status().message();
  Step(**replaced, Mode::kTrain, 2.0f);
  ASSERT_TRUE((*replaced)->Close().ok());
  const StepFile f = ReadStepFile(dir.path() / "tb/TRAIN/000000000000_worker_0.tfevents", 0);
  EXPECT_EQ(f.values.at("MSELoss_output_0").simple_value(), 2.0f);

  // A folder that cannot be created fails Open with the path.
  TempDir bad;
  bad.WriteFile("file", "x");
  WriterOptions unusable = TensorBoardOptions();
  unusable.tensorboard_dir = (bad.path() / "file" / "tb").string();
  auto refused = Writer::Open((bad.path() / "trial").string(), unusable);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("TensorBoard"));
}

TEST(WriterTensorBoardTest, AFailedWriteStopsTheExportNotTheTrial) {
  TempDir dir;
  FaultEnv env;
  env.FailCreateContaining("TRAIN/000000000001_", UnavailableError("injected"));
  WriterOptions o = TensorBoardOptions();
  o.env = &env;
  std::vector<std::string> errors;
  o.log = [&errors](LogLevel level, std::string_view m) {
    if (level == LogLevel::kError) errors.emplace_back(m);
  };
  const fs::path trial = dir.path() / "trial";
  auto w = Writer::Open(trial.string(), o);
  ASSERT_TRUE(w.ok());
  for (int s = 0; s < 3; ++s) Step(**w, Mode::kTrain, 1.0f);
  ASSERT_TRUE((*w)->Close().ok());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("TensorBoard export to " + (trial / "tensorboard").string() + " stopped at step 1"));
  EXPECT_THAT(errors[0], HasSubstr("injected"));
  EXPECT_THAT(ListTree(trial / "tensorboard"), ElementsAre("TRAIN/000000000000_worker_0.tfevents"));
  for (int s = 0; s < 3; ++s) {
    EXPECT_TRUE(fs::exists(trial / ("index/000000000/00000000000" + std::to_string(s) + "_worker_0.json")));
  }
}

TEST(WriterTensorBoardTest, AnAbandonedStepHasNoSummaries) {
  TempDir dir;
  FaultEnv env;
  env.FailCreateContaining("events/000000000001/", UnavailableError("injected"));
  WriterOptions o = TensorBoardOptions();
  o.env = &env;
  const fs::path trial = dir.path() / "trial";
  auto w = Writer::Open(trial.string(), o);
  ASSERT_TRUE(w.ok());
  Step(**w, Mode::kTrain, 1.0f);
  ASSERT_TRUE((*w)->BeginStep().ok());
  EXPECT_FALSE((*w)->SaveTensor("MLP_fc1.weight", kWeight, {2, 3}).ok());
  EXPECT_FALSE((*w)->EndStep().ok());
  env.ClearFaults();
  Step(**w, Mode::kTrain, 1.0f);
  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_THAT(ListTree(trial / "tensorboard"),
              ElementsAre("TRAIN/000000000000_worker_0.tfevents", "TRAIN/000000000002_worker_0.tfevents"));
}

}  // namespace
}  // namespace litmus::writer
