// What the writer puts on disk, checked with litmus::format and a JSON parser: step and mode
// numbering, save configs, collections, stored reductions, shapes, scalars, every dtype, footers,
// file publication order, buffering, folder reuse and the end marker.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "litmus/format/crc32c.h"
#include "litmus/format/trial_layout.h"
#include "litmus/writer/writer.h"
#include "support/temp_dir.h"
#include "writer_test_util.h"

namespace litmus::writer {
namespace {

namespace fs = std::filesystem;
using layout::Reduction;
using litmus::testing::EventFile;
using litmus::testing::FaultEnv;
using litmus::testing::ListTree;
using litmus::testing::ReadEventFile;
using litmus::testing::ReadWholeFile;
using litmus::testing::TempDir;
using litmus::testing::ToString;
using nlohmann::json;

const std::vector<float> kWeights = {0.5f, -1.5f, 2.0f, 4.0f, -0.25f, 1.0f};
const std::vector<int64_t> kWeightsShape = {2, 3};

class WriterFilesTest : public ::testing::Test {
 protected:
  std::unique_ptr<Writer> Open(WriterOptions options = {}) {
    auto w = Writer::Open(dir_.str(), std::move(options));
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(w).value() : nullptr;
  }
  static WriterOptions EveryStep() {
    WriterOptions o;
    o.save_config = SaveConfig::Every(1);
    return o;
  }
  json Index(int64_t step, const std::string& worker = "worker_0") const {
    return json::parse(ReadWholeFile(dir_.path() / layout::IndexFilePath(step, worker)));
  }
  std::unique_ptr<EventFile> Events(int64_t step, const std::string& worker = "worker_0") const {
    return ReadEventFile(dir_.path() / layout::EventFilePath(step, worker));
  }
  json Collections(const std::string& worker = "worker_0") const {
    return json::parse(ReadWholeFile(dir_.path() / layout::CollectionsFilePath(worker)));
  }
  bool Exists(std::string_view relative) const { return fs::exists(dir_.path() / relative); }
  std::vector<std::string> Names(int64_t step) const {
    std::vector<std::string> names;
    const json index = Index(step);
    for (const auto& e : index["tensor_payload"]) names.push_back(e["tensorname"]);
    return names;
  }

  TempDir dir_;
};

Status SaveWeights(Writer& w, std::string_view name = "MLP_fc1.weight") {
  return w.SaveTensor(name, std::span<const float>(kWeights), kWeightsShape);
}

TEST_F(WriterFilesTest, GlobalAndModeStepsFollowTheHook) {
  auto w = Open(EveryStep());
  struct Expect {
    Mode mode;
    int64_t mode_step;
  };
  std::vector<Expect> expected;
  const auto run = [&](std::optional<Mode> mode, int steps) {
    if (mode.has_value()) LITMUS_ASSERT_OK(w->SetMode(*mode));
    for (int i = 0; i < steps; ++i) {
      LITMUS_ASSERT_OK(w->BeginStep());
      expected.push_back({w->mode(), w->mode_step()});
      LITMUS_ASSERT_OK(SaveWeights(*w));
      LITMUS_ASSERT_OK(w->EndStep());
    }
  };
  EXPECT_EQ(w->step(), -1);
  run(std::nullopt, 1);        // global 0: GLOBAL 0 (no mode set yet)
  run(Mode::kTrain, 3);        // global 1-3: TRAIN 0-2
  run(Mode::kEval, 2);         // global 4-5: EVAL 0-1
  run(Mode::kTrain, 2);        // global 6-7: TRAIN 3-4
  run(Mode::kPredict, 1);      // global 8: PREDICT 0
  run(Mode::kGlobal, 1);       // global 9: GLOBAL 9 (the GLOBAL counter follows the global step)
  const std::vector<std::pair<Mode, int64_t>> want = {
      {Mode::kGlobal, 0}, {Mode::kTrain, 0}, {Mode::kTrain, 1}, {Mode::kTrain, 2},
      {Mode::kEval, 0},   {Mode::kEval, 1},  {Mode::kTrain, 3}, {Mode::kTrain, 4},
      {Mode::kPredict, 0}, {Mode::kGlobal, 9}};
  ASSERT_EQ(expected.size(), want.size());
  for (size_t g = 0; g < want.size(); ++g) {
    EXPECT_EQ(expected[g].mode, want[g].first) << g;
    EXPECT_EQ(expected[g].mode_step, want[g].second) << g;
    const json index = Index(static_cast<int64_t>(g));
    EXPECT_EQ(index["meta"]["mode"], std::string(ModeName(want[g].first)));
    EXPECT_EQ(index["meta"]["mode_step"], want[g].second);
    EXPECT_EQ(index["meta"]["event_file_name"], layout::EventFilePath(static_cast<int64_t>(g), "worker_0"));
    auto events = Events(static_cast<int64_t>(g));
    ASSERT_EQ(events->records.size(), 1u);
    EXPECT_EQ(events->records[0].event.step, static_cast<int64_t>(g));
    EXPECT_EQ(events->records[0].event.mode, want[g].first);
    EXPECT_EQ(events->records[0].event.mode_step, want[g].second);
  }
  EXPECT_EQ(w->mode_step(Mode::kTrain), 4);
  EXPECT_EQ(w->mode_step(Mode::kEval), 1);
  LITMUS_ASSERT_OK(w->Close());
}

TEST_F(WriterFilesTest, EvalAndPredictSaveNoGradients) {
  auto w = Open(EveryStep());
  for (Mode mode : {Mode::kTrain, Mode::kEval, Mode::kPredict}) {
    LITMUS_ASSERT_OK(w->SetMode(mode));
    LITMUS_ASSERT_OK(w->BeginStep());
    EXPECT_EQ(w->ShouldSave("gradient/MLP_fc1.weight"), mode == Mode::kTrain);
    EXPECT_TRUE(w->ShouldSave("MLP_fc1.weight"));
    LITMUS_ASSERT_OK(SaveWeights(*w));
    LITMUS_ASSERT_OK(SaveWeights(*w, "gradient/MLP_fc1.weight"));
    LITMUS_ASSERT_OK(w->EndStep());
  }
  EXPECT_EQ(Names(0), (std::vector<std::string>{"MLP_fc1.weight", "gradient/MLP_fc1.weight"}));
  EXPECT_EQ(Names(1), (std::vector<std::string>{"MLP_fc1.weight"}));
  EXPECT_EQ(Names(2), (std::vector<std::string>{"MLP_fc1.weight"}));
  LITMUS_ASSERT_OK(w->Close());
}

TEST_F(WriterFilesTest, SaveConfigsSelectModeSteps) {
  WriterOptions o;
  o.save_config.Set(Mode::kTrain, SaveConfigMode{.save_interval = 2});
  // EVAL keeps the default (every 500 steps: only EVAL step 0 here).
  CollectionConfig grads;
  for (auto& c : o.collections) {
    if (c.name == "gradients") {
      SaveConfig g;
      g.Set(Mode::kTrain, SaveConfigMode{.save_interval = 100, .save_steps = {3}});
      c.save_config = g;
    }
  }
  auto w = Open(o);
  // TRAIN 0..5 = global 0..5, EVAL 0..2 = global 6..8, TRAIN 6..7 = global 9..10.
  const auto step = [&](int n) {
    for (int i = 0; i < n; ++i) {
      LITMUS_ASSERT_OK(w->BeginStep());
      LITMUS_ASSERT_OK(SaveWeights(*w));
      LITMUS_ASSERT_OK(SaveWeights(*w, "gradient/MLP_fc1.weight"));
      LITMUS_ASSERT_OK(w->EndStep());
    }
  };
  LITMUS_ASSERT_OK(w->SetMode(Mode::kTrain));
  step(6);
  LITMUS_ASSERT_OK(w->SetMode(Mode::kEval));
  step(3);
  LITMUS_ASSERT_OK(w->SetMode(Mode::kTrain));
  step(2);
  LITMUS_ASSERT_OK(w->Close());
  std::set<std::string> index_files;
  for (const auto& f : ListTree(dir_.path() / "index")) index_files.insert(f);
  // weights: TRAIN mode steps 0,2,4,6 -> global 0,2,4,9; EVAL 0 -> global 6.
  // gradients: TRAIN mode steps 0 (0 % 100) and 3 (save_steps) -> global 0, 3.
  EXPECT_EQ(index_files, (std::set<std::string>{
                             "000000000/000000000000_worker_0.json", "000000000/000000000002_worker_0.json",
                             "000000000/000000000003_worker_0.json", "000000000/000000000004_worker_0.json",
                             "000000000/000000000006_worker_0.json", "000000000/000000000009_worker_0.json"}));
  EXPECT_EQ(Names(0), (std::vector<std::string>{"MLP_fc1.weight", "gradient/MLP_fc1.weight"}));
  EXPECT_EQ(Names(2), (std::vector<std::string>{"MLP_fc1.weight"}));
  EXPECT_EQ(Names(3), (std::vector<std::string>{"gradient/MLP_fc1.weight"}));
  EXPECT_EQ(Index(6)["meta"]["mode"], "EVAL");
  EXPECT_EQ(Index(9)["meta"]["mode_step"], 6);
  // The resolved configs are exported for every mode.
  const json c = Collections()["collections"];
  EXPECT_EQ(c["weights"]["save_config"]["TRAIN"]["save_interval"], 2);
  EXPECT_EQ(c["weights"]["save_config"]["EVAL"]["save_interval"], 500);
  EXPECT_EQ(c["gradients"]["save_config"]["TRAIN"]["save_steps"], json::array({3}));
  EXPECT_EQ(c["gradients"]["save_config"]["EVAL"]["save_interval"], 500);
  EXPECT_TRUE(c["gradients"]["save_config"]["PREDICT"]["end_step"].is_null());
}

TEST_F(WriterFilesTest, StepsWithoutSavesLeaveNoFiles) {
  auto w = Open();  // default: every 500 steps
  for (int i = 0; i < 3; ++i) {
    LITMUS_ASSERT_OK(w->BeginStep());
    LITMUS_ASSERT_OK(SaveWeights(*w));
    LITMUS_ASSERT_OK(w->EndStep());
  }
  LITMUS_ASSERT_OK(w->Close());
  EXPECT_TRUE(Exists("index/000000000/000000000000_worker_0.json"));
  EXPECT_FALSE(Exists("index/000000000/000000000001_worker_0.json"));
  EXPECT_FALSE(Exists("events/000000000001"));
}

TEST_F(WriterFilesTest, CollectionsFileFollowsTheSchema) {
  WriterOptions o = EveryStep();
  o.num_workers = 1;
  o.reduction_config.reductions = {Reduction::kMax};  // default for collections without one
  CollectionConfig custom;
  custom.name = "activations";
  custom.include_regex = {"relu"};
  custom.tensor_names = {"z_listed", "a_listed"};
  custom.reduction_config = ReductionConfig{.norms = {Reduction::kL2}, .save_raw_tensor = false};
  custom.save_config = SaveConfig().Set(Mode::kTrain, SaveConfigMode{.save_interval = 5, .end_step = 50});
  o.collections.push_back(custom);
  auto w = Open(o);
  LITMUS_ASSERT_OK(w->SetMode(Mode::kTrain));
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveWeights(*w));
  LITMUS_ASSERT_OK(SaveWeights(*w, "MLP_relu1_output_0"));
  LITMUS_ASSERT_OK(SaveWeights(*w, "something_else"));
  const float loss = 0.25f;
  LITMUS_ASSERT_OK(w->SaveTensor("MSELoss_output_0", std::span(&loss, 1), {}));
  // The collections file is published with the first step, before its index.
  EXPECT_FALSE(Exists(layout::CollectionsFilePath("worker_0")));
  LITMUS_ASSERT_OK(w->EndStep());
  ASSERT_TRUE(Exists(layout::CollectionsFilePath("worker_0")));
  const std::string text = ReadWholeFile(dir_.path() / layout::CollectionsFilePath("worker_0"));
  EXPECT_NE(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), std::string::npos);
  const auto ordered = nlohmann::ordered_json::parse(text);
  std::vector<std::string> top;
  for (const auto& [k, v] : ordered.items()) top.push_back(k);
  EXPECT_EQ(top, (std::vector<std::string>{"collections", "_meta"}));
  EXPECT_EQ(ordered["_meta"], nlohmann::ordered_json::parse(R"({"num_workers": 1})"));
  std::vector<std::string> names;
  for (const auto& [k, v] : ordered["collections"].items()) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"all", "default", "biases", "weights", "gradients",
                                             "losses", "activations"}));
  std::vector<std::string> keys;
  for (const auto& [k, v] : ordered["collections"]["activations"].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"name", "include_regex", "tensor_names",
                                            "reduction_config", "save_config", "save_histogram"}));
  const json c = json::parse(text)["collections"];
  EXPECT_EQ(c["activations"]["tensor_names"],
            json::array({"MLP_relu1_output_0", "a_listed", "z_listed"}));  // sorted
  EXPECT_EQ(c["activations"]["reduction_config"],
            json::parse(R"({"save_raw_tensor": false, "reductions": "l2_norm", "save_shape": false})"));
  EXPECT_EQ(c["activations"]["save_config"]["TRAIN"],
            json::parse(R"({"save_interval": 5, "save_steps": [], "start_step": 0, "end_step": 50})"));
  EXPECT_EQ(c["activations"]["save_config"]["EVAL"]["save_interval"], 1);
  EXPECT_EQ(c["weights"]["tensor_names"], json::array({"MLP_fc1.weight"}));
  EXPECT_EQ(c["weights"]["reduction_config"]["reductions"], "max");
  EXPECT_EQ(c["default"]["tensor_names"], json::array({"something_else"}));
  EXPECT_EQ(c["losses"]["tensor_names"], json::array({"MSELoss_output_0"}));
  // Scalar collections store no reductions and export no histograms.
  EXPECT_EQ(c["losses"]["reduction_config"]["reductions"], "");
  EXPECT_EQ(c["losses"]["save_histogram"], false);
  EXPECT_EQ(c["weights"]["save_histogram"], true);
  EXPECT_EQ(c["all"]["include_regex"], json::array());
  LITMUS_ASSERT_OK(w->Close());
}

TEST_F(WriterFilesTest, IndexJsonByteFormat) {
  auto w = Open(EveryStep());
  LITMUS_ASSERT_OK(w->SetMode(Mode::kTrain));
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveWeights(*w));
  LITMUS_ASSERT_OK(SaveWeights(*w, "MLP_fc1.bias"));
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());
  auto events = Events(0);
  ASSERT_EQ(events->records.size(), 2u);
  const std::string expected =
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0, \"event_file_name\": "
      "\"events/000000000000/000000000000_worker_0.tfevents\"}, \"tensor_payload\": "
      "[{\"tensorname\": \"MLP_fc1.weight\", \"start_idx\": 0, \"length\": " +
      std::to_string(events->records[0].length) +
      "}, {\"tensorname\": \"MLP_fc1.bias\", \"start_idx\": " +
      std::to_string(events->records[0].length) + ", \"length\": " +
      std::to_string(events->records[1].length) + "}], \"shape_payload\": []}";
  EXPECT_EQ(ReadWholeFile(dir_.path() / layout::IndexFilePath(0, "worker_0")), expected);
  EXPECT_EQ(events->records[1].offset + events->records[1].length, events->bytes.size());
}

TEST_F(WriterFilesTest, FilesArePublishedInOrderThroughTmp) {
  FaultEnv env;
  WriterOptions o = EveryStep();
  o.env = &env;
  auto w = Open(o);
  for (int i = 0; i < 2; ++i) {
    LITMUS_ASSERT_OK(w->BeginStep());
    LITMUS_ASSERT_OK(SaveWeights(*w));
    LITMUS_ASSERT_OK(w->EndStep());
  }
  LITMUS_ASSERT_OK(w->Close());
  std::vector<std::string> renames;
  for (const std::string& op : env.ops()) {
    if (!op.starts_with("rename ")) continue;
    const std::string from = op.substr(7, op.find(' ', 7) - 7);
    const std::string to = op.substr(op.find(' ', 7) + 1);
    EXPECT_EQ(from, to + ".tmp");
    renames.push_back(fs::relative(to, dir_.path()).string());
  }
  EXPECT_EQ(renames, (std::vector<std::string>{
                         "events/000000000000/000000000000_worker_0.tfevents",
                         "collections/000000000/worker_0_collections.json",
                         "index/000000000/000000000000_worker_0.json",
                         "events/000000000001/000000000001_worker_0.tfevents",
                         "index/000000000/000000000001_worker_0.json",
                         "training_job_end.ts"}));
  for (const std::string& f : ListTree(dir_.path())) EXPECT_FALSE(f.ends_with(".tmp")) << f;
  EXPECT_EQ(fs::file_size(dir_.path() / "training_job_end.ts"), 0u);
}

TEST_F(WriterFilesTest, MidStepOnlyTempFilesExist) {
  auto w = Open(EveryStep());
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveWeights(*w));
  std::vector<float> big(100000, 1.0f);  // written through at once
  LITMUS_ASSERT_OK(w->SaveTensor("big.weight", std::span<const float>(big), {100000}));
  const auto files = ListTree(dir_.path());
  ASSERT_FALSE(files.empty());
  for (const std::string& f : files) EXPECT_TRUE(f.ends_with(".tmp")) << f;
  EXPECT_TRUE(files.count("events/000000000000/000000000000_worker_0.tfevents.tmp"));
  LITMUS_ASSERT_OK(w->EndStep());
  for (const std::string& f : ListTree(dir_.path())) EXPECT_FALSE(f.ends_with(".tmp")) << f;
  LITMUS_ASSERT_OK(w->Close());
}

TEST_F(WriterFilesTest, StoredReductionsPrecedeTheRawRecord) {
  WriterOptions o = EveryStep();
  ReductionConfig r;
  r.reductions = {Reduction::kMin, Reduction::kMax, Reduction::kMean, Reduction::kStd,
                  Reduction::kVariance, Reduction::kSum, Reduction::kProd};
  r.norms = {Reduction::kL1, Reduction::kL2};
  r.abs_reductions = {Reduction::kMin, Reduction::kMean};
  r.abs_norms = {Reduction::kL1};
  o.reduction_config = r;  // weights, biases, gradients inherit it; losses never store any
  auto w = Open(o);
  LITMUS_ASSERT_OK(w->SetMode(Mode::kTrain));
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveWeights(*w));
  const float loss = 3.0f;
  LITMUS_ASSERT_OK(w->SaveTensor("MSELoss_output_0", std::span(&loss, 1), {}));
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());

  const std::vector<std::pair<std::string, double>> want = {
      {"smdebug/reductions/min/MLP_fc1.weight", -1.5},
      {"smdebug/reductions/max/MLP_fc1.weight", 4.0},
      {"smdebug/reductions/mean/MLP_fc1.weight", 5.75 / 6},
      {"smdebug/reductions/std/MLP_fc1.weight", -1},  // computed below
      {"smdebug/reductions/variance/MLP_fc1.weight", -1},
      {"smdebug/reductions/sum/MLP_fc1.weight", 5.75},
      {"smdebug/reductions/prod/MLP_fc1.weight", 0.5 * -1.5 * 2.0 * 4.0 * -0.25 * 1.0},
      {"smdebug/reductions/l1/MLP_fc1.weight", 9.25},
      {"smdebug/reductions/l2/MLP_fc1.weight", std::sqrt(0.25 + 2.25 + 4 + 16 + 0.0625 + 1)},
      {"smdebug/reductions/abs_min/MLP_fc1.weight", 0.25},
      {"smdebug/reductions/abs_mean/MLP_fc1.weight", 9.25 / 6},
      {"smdebug/reductions/abs_l1/MLP_fc1.weight", 9.25},
  };
  double var = 0;
  for (float v : kWeights) var += (v - 5.75 / 6) * (v - 5.75 / 6);
  var /= 6;  // population (ddof = 0)
  auto events = Events(0);
  ASSERT_EQ(events->records.size(), want.size() + 2);
  const std::vector<std::string> names = Names(0);
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& rec = events->records[i];
    EXPECT_EQ(rec.event.tag, want[i].first);
    EXPECT_EQ(names[i], want[i].first);
    EXPECT_EQ(rec.event.raw_dtype, static_cast<int32_t>(DType::kFloat64));
    EXPECT_TRUE(rec.event.shape.empty());
    ASSERT_EQ(rec.event.content.size(), 8u);
    double value;
    std::memcpy(&value, rec.event.content.data(), 8);
    double expected = want[i].second;
    if (i == 3) expected = std::sqrt(var);
    if (i == 4) expected = var;
    EXPECT_NEAR(value, expected, 1e-12) << want[i].first;
    EXPECT_EQ(rec.event.mode, Mode::kTrain);
  }
  EXPECT_EQ(events->records[want.size()].event.tag, "MLP_fc1.weight");
  EXPECT_EQ(events->records[want.size() + 1].event.tag, "MSELoss_output_0");
  // Reduction names appear in no collection.
  EXPECT_EQ(Collections()["collections"]["weights"]["tensor_names"], json::array({"MLP_fc1.weight"}));
}

TEST_F(WriterFilesTest, ReductionsOnlyAndUnionAcrossCollections) {
  WriterOptions o = EveryStep();
  o.collections = {CollectionConfig{.name = "default"},
                   CollectionConfig{.name = "a",
                                    .include_regex = {"^x"},
                                    .reduction_config = ReductionConfig{.reductions = {Reduction::kMax},
                                                                        .save_raw_tensor = false}},
                   CollectionConfig{.name = "b",
                                    .tensor_names = {"x:0"},
                                    .reduction_config = ReductionConfig{.reductions = {Reduction::kMax, Reduction::kMin},
                                                                        .abs_norms = {Reduction::kL2},
                                                                        .save_raw_tensor = false}}};
  auto w = Open(o);
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveWeights(*w, "x:0"));
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());
  // ":0" is kept (litmus stores no raw tensor under a stripped name), max once, no raw record.
  EXPECT_EQ(Names(0), (std::vector<std::string>{"smdebug/reductions/max/x:0", "smdebug/reductions/min/x:0",
                                                "smdebug/reductions/abs_l2/x:0"}));
}

TEST_F(WriterFilesTest, ComplexAndStringReductionsAreSkippedWithAWarning) {
  WriterOptions o = EveryStep();
  o.reduction_config.reductions = {Reduction::kMean};
  o.reduction_config.abs_reductions = {Reduction::kMax};
  std::vector<std::string> logs;
  o.log = [&logs](LogLevel, std::string_view m) { logs.emplace_back(m); };
  o.collections = {CollectionConfig{.name = "default"}};
  auto w = Open(o);
  LITMUS_ASSERT_OK(w->BeginStep());
  const std::vector<std::complex<double>> z = {{3, 4}, {0, 1}};
  LITMUS_ASSERT_OK(w->SaveTensor("z", std::span<const std::complex<double>>(z), std::vector<int64_t>{2}));
  const std::vector<std::string> s = {"a", "bc"};
  LITMUS_ASSERT_OK(w->SaveStrings("s", s));
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());
  EXPECT_EQ(Names(0), (std::vector<std::string>{"smdebug/reductions/abs_max/z", "z", "s"}));
  ASSERT_EQ(logs.size(), 3u);  // mean of z; mean and abs_max of s
  EXPECT_NE(logs[0].find("mean of z"), std::string::npos) << logs[0];
}

TEST_F(WriterFilesTest, ShapesGoToShapePayload) {
  WriterOptions o = EveryStep();
  o.collections = {
      CollectionConfig{.name = "default"},
      CollectionConfig{.name = "shapes_only",
                       .include_regex = {"^only"},
                       .reduction_config = ReductionConfig{.save_raw_tensor = false, .save_shape = true}},
      CollectionConfig{.name = "shapes_and_raw",
                       .include_regex = {"^both"},
                       .reduction_config = ReductionConfig{.save_raw_tensor = true, .save_shape = true}}};
  {
    auto w = Open(o);
    LITMUS_ASSERT_OK(w->BeginStep());
    LITMUS_ASSERT_OK(SaveWeights(*w, "only_shape"));
    LITMUS_ASSERT_OK(w->EndStep());
    LITMUS_ASSERT_OK(w->BeginStep());
    LITMUS_ASSERT_OK(SaveWeights(*w, "only_shape"));
    LITMUS_ASSERT_OK(SaveWeights(*w, "both"));
    LITMUS_ASSERT_OK(w->EndStep());
    LITMUS_ASSERT_OK(w->Close());
  }
  // A step with only shapes has no event file and no event_file_name (as smdebug writes it).
  EXPECT_EQ(ReadWholeFile(dir_.path() / layout::IndexFilePath(0, "worker_0")),
            "{\"meta\": {\"mode\": \"GLOBAL\", \"mode_step\": 0}, \"tensor_payload\": [], "
            "\"shape_payload\": [{\"tensorname\": \"only_shape\", \"originalname\": \"only_shape\", "
            "\"shape\": [2, 3]}]}");
  EXPECT_FALSE(Exists("events/000000000000"));
  // With the raw record, no shape entry by default (smdebug would lose the value).
  EXPECT_EQ(Names(1), std::vector<std::string>{"both"});
  EXPECT_EQ(Index(1)["shape_payload"].size(), 1u);
  EXPECT_EQ(Index(1)["shape_payload"][0]["tensorname"], "only_shape");

  TempDir other;
  o.write_shape_with_raw_tensor = true;
  auto w = Writer::Open(other.str(), o);
  LITMUS_ASSERT_OK(w.status());
  LITMUS_ASSERT_OK((*w)->BeginStep());
  LITMUS_ASSERT_OK(SaveWeights(**w, "both"));
  LITMUS_ASSERT_OK((*w)->EndStep());
  LITMUS_ASSERT_OK((*w)->Close());
  const json index = json::parse(ReadWholeFile(other.path() / layout::IndexFilePath(0, "worker_0")));
  EXPECT_EQ(index["tensor_payload"].size(), 1u);
  EXPECT_EQ(index["shape_payload"][0]["shape"], json::array({2, 3}));
}

TEST_F(WriterFilesTest, ScalarsAreFloat64OfShapeOneAndAlwaysWritten) {
  auto w = Open();  // every 500 steps: step 1 saves no tensor
  LITMUS_ASSERT_OK(w->SetMode(Mode::kTrain));
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->BeginStep());
  EXPECT_FALSE(w->ShouldSave("MLP_fc1.weight"));
  LITMUS_ASSERT_OK(SaveWeights(*w));  // not due: ignored
  LITMUS_ASSERT_OK(w->SaveScalar("learning_rate", 0.125));
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());
  EXPECT_FALSE(Exists(layout::IndexFilePath(0, "worker_0")));
  auto events = Events(1);
  ASSERT_EQ(events->records.size(), 1u);
  const auto& e = events->records[0].event;
  EXPECT_EQ(e.tag, "scalar/learning_rate");
  EXPECT_EQ(e.raw_dtype, static_cast<int32_t>(DType::kFloat64));
  EXPECT_EQ(e.shape, std::vector<int64_t>{1});
  double v;
  std::memcpy(&v, e.content.data(), 8);
  EXPECT_EQ(v, 0.125);
  EXPECT_EQ(e.mode, Mode::kTrain);
  EXPECT_EQ(e.mode_step, 1);
  const json collections = Collections();
  for (const auto& [name, c] : collections["collections"].items()) {
    EXPECT_EQ(c["tensor_names"].dump().find("scalar/"), std::string::npos) << name;
  }
}

template <typename T>
void ExpectEncoded(Writer& w, const std::string& name, const std::vector<T>& values,
                   std::vector<int64_t> shape, DType dtype) {
  LITMUS_ASSERT_OK(w.SaveTensor(name, std::span<const T>(values), shape));
  EXPECT_EQ(DTypeOf<T>(), dtype);
}

TEST_F(WriterFilesTest, EveryDtypeIsEncodedAsSmdebugDoes) {
  WriterOptions o = EveryStep();
  o.allow_dtypes_smdebug_cannot_read = true;
  o.collections = {CollectionConfig{.name = "default"}};
  auto w = Open(o);
  LITMUS_ASSERT_OK(w->BeginStep());
  struct Case {
    std::string name;
    DType dtype;
    std::string bytes;
    std::vector<int64_t> shape;
  };
  std::vector<Case> cases;
  const auto add = [&](std::string name, auto values, std::vector<int64_t> shape) {
    using T = typename decltype(values)::value_type;
    LITMUS_ASSERT_OK(w->SaveTensor(name, std::span<const T>(values), shape));
    cases.push_back({name, DTypeOf<T>(), ToString(std::as_bytes(std::span<const T>(values))), shape});
  };
  add("f16", std::vector<Float16>{{0x3C00}, {0xC000}, {0x7E00}}, {3});
  add("f32", std::vector<float>{1.5f, -0.0f, INFINITY, NAN}, {2, 2});
  add("f64", std::vector<double>{1e300, -2.5}, {2});
  add("i8", std::vector<int8_t>{-128, -1, 0, 127}, {4});
  add("i16", std::vector<int16_t>{-32768, 7}, {2});
  add("i32", std::vector<int32_t>{INT32_MIN, 0, INT32_MAX}, {3, 1});
  add("i64", std::vector<int64_t>{INT64_MIN}, {});
  add("u8", std::vector<uint8_t>{0, 255}, {2});
  add("u16", std::vector<uint16_t>{65535}, {1});
  add("u32", std::vector<uint32_t>{4000000000u}, {1, 1, 1});
  add("u64", std::vector<uint64_t>{UINT64_MAX, 1}, {2});
  add("c64", std::vector<std::complex<float>>{{1, -1}}, {1});
  add("c128", std::vector<std::complex<double>>{{0.5, 2}, {3, 4}}, {2});
  const std::vector<uint8_t> bools = {1, 0, 1};
  LITMUS_ASSERT_OK(w->SaveTensor("b", std::as_bytes(std::span(bools)), std::vector<int64_t>{3}, DType::kBool));
  cases.push_back({"b", DType::kBool, std::string("\x01\x00\x01", 3), {3}});
  const std::vector<std::string> strings = {"hello", "", "wörld"};
  LITMUS_ASSERT_OK(w->SaveStrings("str", strings));
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());

  auto events = Events(0);
  ASSERT_EQ(events->records.size(), cases.size() + 1);
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& e = events->records[i].event;
    EXPECT_EQ(e.tag, cases[i].name);
    EXPECT_EQ(e.raw_dtype, static_cast<int32_t>(cases[i].dtype)) << cases[i].name;
    EXPECT_EQ(e.shape, cases[i].shape) << cases[i].name;
    EXPECT_EQ(ToString(e.content), cases[i].bytes) << cases[i].name;
    EXPECT_TRUE(e.has_tensor);
  }
  const auto& s = events->records.back().event;
  EXPECT_EQ(s.raw_dtype, 0);
  EXPECT_TRUE(s.content.empty());
  EXPECT_EQ(s.shape, std::vector<int64_t>{3});
  ASSERT_EQ(s.string_val.size(), 3u);
  EXPECT_EQ(s.string_val[2], "wörld");
  for (const auto& r : events->records) EXPECT_EQ(r.footer, crc32c::kPlaceholderMaskedCrc);
}

TEST_F(WriterFilesTest, RealPayloadCrcsOnRequest) {
  WriterOptions o = EveryStep();
  o.write_payload_crc = true;
  auto w = Open(o);
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveWeights(*w));
  std::vector<float> big(40000, 0.5f);  // direct-write path
  LITMUS_ASSERT_OK(w->SaveTensor("big.weight", std::span<const float>(big), {200, 200}));
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());
  auto events = Events(0);
  ASSERT_EQ(events->records.size(), 2u);
  for (const auto& r : events->records) {
    EXPECT_TRUE(r.real_crc);
    const std::string framed = r.framed();
    const uint32_t crc = crc32c::Value(framed.data() + 12, framed.size() - 16);
    EXPECT_EQ(r.footer, crc32c::Mask(crc));
  }
}

TEST_F(WriterFilesTest, SmallRecordsAreCoalescedAndLargeOnesWrittenFromTheCallersMemory) {
  FaultEnv env;
  WriterOptions o = EveryStep();
  o.env = &env;
  auto w = Open(o);
  LITMUS_ASSERT_OK(w->BeginStep());
  std::vector<float> small(1024, 0.25f);  // 4 KiB
  for (int i = 0; i < 100; ++i) {
    LITMUS_ASSERT_OK(w->SaveTensor("layer_" + std::to_string(i) + ".weight",
                                   std::span<const float>(small), {1024}));
  }
  EXPECT_EQ(env.append_calls(), 0);  // all buffered so far
  LITMUS_ASSERT_OK(w->EndStep());
  const int appends_small = env.append_calls();
  EXPECT_LE(appends_small, 3);  // event data (once), collections, index
  std::vector<float> big(262144, 0.5f);  // 1 MiB
  LITMUS_ASSERT_OK(w->BeginStep());
  for (int i = 0; i < 3; ++i) {
    LITMUS_ASSERT_OK(w->SaveTensor("big_" + std::to_string(i) + ".weight",
                                   std::span<const float>(big), {512, 512}));
  }
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());
  // One gather Append per large tensor (plus the index and the end marker's nothing).
  EXPECT_LE(env.append_calls() - appends_small, 5);
  const auto pointers = env.append_part_pointers();
  EXPECT_EQ(std::count(pointers.begin(), pointers.end(),
                       reinterpret_cast<const std::byte*>(big.data())),
            3);
  auto events = Events(1);
  ASSERT_EQ(events->records.size(), 3u);
  EXPECT_EQ(events->records[2].event.content.size(), big.size() * 4);
}

TEST_F(WriterFilesTest, UnmatchedTensorsGoToDefaultOrAreNotSaved) {
  {
    auto w = Open(EveryStep());
    LITMUS_ASSERT_OK(w->BeginStep());
    LITMUS_ASSERT_OK(SaveWeights(*w, "custom/thing"));
    LITMUS_ASSERT_OK(w->EndStep());
    LITMUS_ASSERT_OK(w->Close());
    EXPECT_EQ(Names(0), std::vector<std::string>{"custom/thing"});
    EXPECT_EQ(Collections()["collections"]["default"]["tensor_names"], json::array({"custom/thing"}));
  }
  TempDir other;
  WriterOptions o = EveryStep();
  o.collections = {CollectionConfig{.name = "gradients", .include_regex = {"^gradient"}}};
  auto w = Writer::Open(other.str(), o);
  LITMUS_ASSERT_OK(w.status());
  LITMUS_ASSERT_OK((*w)->BeginStep());
  EXPECT_FALSE((*w)->ShouldSave("custom/thing"));
  LITMUS_ASSERT_OK(SaveWeights(**w, "custom/thing"));
  LITMUS_ASSERT_OK(SaveWeights(**w, "gradient/x"));
  LITMUS_ASSERT_OK((*w)->EndStep());
  LITMUS_ASSERT_OK((*w)->Close());
  auto events = ReadEventFile(other.path() / layout::EventFilePath(0, "worker_0"));
  ASSERT_EQ(events->records.size(), 1u);
  EXPECT_EQ(events->records[0].event.tag, "gradient/x");
}

TEST_F(WriterFilesTest, TensorsFirstSeenLaterAreAddedToTheCollectionsFileAtClose) {
  auto w = Open(EveryStep());
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveWeights(*w));
  EXPECT_FALSE(w->ShouldSave(""));  // invalid names are not registered anywhere
  LITMUS_ASSERT_OK(w->EndStep());
  EXPECT_EQ(Collections()["collections"]["default"]["tensor_names"], json::array());
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveWeights(*w, "late/custom"));
  LITMUS_ASSERT_OK(SaveWeights(*w, "MLP_fc2.weight"));
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());
  const json c = Collections()["collections"];
  EXPECT_EQ(c["default"]["tensor_names"], json::array({"late/custom"}));
  EXPECT_EQ(c["weights"]["tensor_names"], json::array({"MLP_fc1.weight", "MLP_fc2.weight"}));
  for (const std::string& f : ListTree(dir_.path())) EXPECT_FALSE(f.ends_with(".tmp")) << f;
}

TEST_F(WriterFilesTest, StepsFrom1000GoToTheNextIndexFolder) {
  WriterOptions o;
  o.save_config = SaveConfig::Every(1000);
  auto w = Open(o);
  for (int i = 0; i <= 1000; ++i) {
    LITMUS_ASSERT_OK(w->BeginStep());
    LITMUS_ASSERT_OK(SaveWeights(*w));
    LITMUS_ASSERT_OK(w->EndStep());
  }
  LITMUS_ASSERT_OK(w->Close());
  EXPECT_TRUE(Exists("index/000000000/000000000000_worker_0.json"));
  EXPECT_TRUE(Exists("index/000000001/000000001000_worker_0.json"));
  EXPECT_TRUE(Exists("events/000000001000/000000001000_worker_0.tfevents"));
  EXPECT_EQ(Index(1000)["meta"]["event_file_name"], "events/000000001000/000000001000_worker_0.tfevents");
}

TEST_F(WriterFilesTest, WallTimeDefaultsToTheSystemClock) {
  const double before = std::chrono::duration<double>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
  auto w = Open(EveryStep());
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveWeights(*w));
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());
  const double after = std::chrono::duration<double>(
                           std::chrono::system_clock::now().time_since_epoch()).count();
  const double t = Events(0)->records[0].event.wall_time;
  EXPECT_GE(t, before);
  EXPECT_LE(t, after);
}

// --- folder reuse and the end marker ---

void WriteOneStep(const std::string& dir, WriterOptions o) {
  o.save_config = SaveConfig::Every(1);
  auto w = Writer::Open(dir, o);
  LITMUS_ASSERT_OK(w.status());
  LITMUS_ASSERT_OK((*w)->BeginStep());
  LITMUS_ASSERT_OK(SaveWeights(**w));
  LITMUS_ASSERT_OK((*w)->EndStep());
  LITMUS_ASSERT_OK((*w)->Close());
}

TEST_F(WriterFilesTest, RefusesAFolderHoldingATrial) {
  WriteOneStep(dir_.str(), {});
  ASSERT_TRUE(Exists("training_job_end.ts"));
  auto again = Writer::Open(dir_.str(), {});
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.status().message().find("training_job_end.ts"), std::string::npos);

  // Without the marker, this worker's index files still count as a trial ...
  fs::remove(dir_.path() / "training_job_end.ts");
  fs::remove(dir_.path() / layout::CollectionsFilePath("worker_0"));
  again = Writer::Open(dir_.str(), {});
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.status().message().find("000000000000_worker_0.json"), std::string::npos);
  // ... but another worker may join.
  WriterOptions other;
  other.worker = "worker_1";
  other.num_workers = 2;
  auto joined = Writer::Open(dir_.str(), other);
  LITMUS_ASSERT_OK(joined.status());
  LITMUS_ASSERT_OK((*joined)->Close());

  // overwrite_existing writes anyway and drops an old end marker.
  TempDir d2;
  WriteOneStep(d2.str(), {});
  WriterOptions o;
  o.overwrite_existing = true;
  auto w = Writer::Open(d2.str(), o);
  LITMUS_ASSERT_OK(w.status());
  EXPECT_FALSE(fs::exists(d2.path() / "training_job_end.ts"));
  LITMUS_ASSERT_OK((*w)->Close());
}

TEST_F(WriterFilesTest, EndMarkerPolicies) {
  const auto marker_after = [](WriterOptions o) {
    TempDir d;
    WriteOneStep(d.str(), o);
    return fs::exists(d.path() / "training_job_end.ts");
  };
  EXPECT_TRUE(marker_after({}));
  WriterOptions multi;
  multi.num_workers = 2;
  EXPECT_FALSE(marker_after(multi));
  multi.end_marker = EndMarkerPolicy::kEveryWorker;
  EXPECT_TRUE(marker_after(multi));
  WriterOptions never;
  never.end_marker = EndMarkerPolicy::kNever;
  EXPECT_FALSE(marker_after(never));

  ASSERT_EQ(setenv("TRAINING_JOB_NAME", "job", 1), 0);
  EXPECT_FALSE(marker_after({}));
  WriterOptions always;
  always.skip_end_marker_if_training_job_name_set = false;
  EXPECT_TRUE(marker_after(always));
  unsetenv("TRAINING_JOB_NAME");

  TempDir d;
  WriteOneStep(d.str(), multi);  // kEveryWorker
  fs::remove(d.path() / "training_job_end.ts");
  LITMUS_ASSERT_OK(MarkTrainingEnded(nullptr, d.str()));
  EXPECT_TRUE(fs::exists(d.path() / "training_job_end.ts"));
  EXPECT_FALSE(fs::exists(d.path() / "training_job_end.ts.tmp"));
  EXPECT_FALSE(MarkTrainingEnded(nullptr, (d.path() / "missing").string()).ok());
}

TEST_F(WriterFilesTest, CloseWithoutStepsStillWritesCollections) {
  auto w = Open();
  LITMUS_ASSERT_OK(w->Close());
  EXPECT_TRUE(Exists(layout::CollectionsFilePath("worker_0")));
  EXPECT_TRUE(Exists("training_job_end.ts"));
  EXPECT_FALSE(Exists("index"));
}

TEST_F(WriterFilesTest, CloseEndsTheOpenStep) {
  auto w = Open(EveryStep());
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveWeights(*w));
  LITMUS_ASSERT_OK(w->Close());
  EXPECT_TRUE(Exists(layout::IndexFilePath(0, "worker_0")));
  EXPECT_TRUE(w->closed());
}

}  // namespace
}  // namespace litmus::writer
