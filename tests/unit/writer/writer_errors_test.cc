// Bad input and failing storage: invalid names and options, size mismatches, unsupported dtypes,
// misuse of the step API, an unusable folder, a full disk and failing renames (injected through
// FaultEnv). Each must give a clear error and leave no partial file under a final name.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "litmus/format/trial_layout.h"
#include "litmus/writer/writer.h"
#include "support/temp_dir.h"
#include "writer_test_util.h"

namespace litmus::writer {
namespace {

namespace fs = std::filesystem;
using litmus::testing::FaultEnv;
using litmus::testing::ListTree;
using litmus::testing::TempDir;

const std::vector<float> kSix = {1, 2, 3, 4, 5, 6};

WriterOptions EveryStep(Env* env = nullptr) {
  WriterOptions o;
  o.save_config = SaveConfig::Every(1);
  o.env = env;
  o.log = [](LogLevel, std::string_view) {};
  return o;
}

std::unique_ptr<Writer> MustOpen(const std::string& dir, WriterOptions o) {
  auto w = Writer::Open(dir, std::move(o));
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? std::move(w).value() : nullptr;
}

Status SaveSix(Writer& w, std::string_view name = "MLP_fc1.weight") {
  return w.SaveTensor(name, std::span<const float>(kSix), std::vector<int64_t>{2, 3});
}

// No file under a final name may be partial: every final event file must parse completely and
// every final index must parse; no .tmp may be left behind.
void ExpectNoPartialFiles(const fs::path& dir) {
  for (const std::string& f : ListTree(dir)) {
    EXPECT_FALSE(f.ends_with(".tmp")) << f;
    if (f.ends_with(".tfevents")) {
      auto events = litmus::testing::ReadEventFile(dir / f);
      EXPECT_FALSE(events->records.empty()) << f;
    }
  }
}

TEST(WriterErrorsTest, InvalidOptions) {
  TempDir dir;
  const auto open_code = [&](WriterOptions o) { return Writer::Open(dir.str(), o).status().code(); };
  WriterOptions o;
  o.worker = "worker/0";
  EXPECT_EQ(open_code(o), StatusCode::kInvalidArgument);
  o.worker = "_job-worker";
  EXPECT_EQ(open_code(o), StatusCode::kInvalidArgument);
  o.worker = "a__b";
  EXPECT_EQ(open_code(o), StatusCode::kInvalidArgument);
  o = {};
  o.num_workers = 0;
  EXPECT_EQ(open_code(o), StatusCode::kInvalidArgument);
  o = {};
  o.collections.push_back(CollectionConfig{.name = "python_only", .include_regex = {"(?P<x>a)"}});
  auto s = Writer::Open(dir.str(), o).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("python_only"), std::string::npos) << s.ToString();
  o = {};
  o.collections.push_back(CollectionConfig{.name = "empty"});
  EXPECT_EQ(open_code(o), StatusCode::kInvalidArgument);
  o = {};
  o.collections.push_back(CollectionConfig{.name = "weights", .include_regex = {"w"}});
  EXPECT_EQ(open_code(o), StatusCode::kInvalidArgument);  // configured twice
  o = {};
  o.save_config.Set(Mode::kEval, SaveConfigMode{.save_interval = 0});
  EXPECT_EQ(open_code(o), StatusCode::kInvalidArgument);
  o = {};
  o.reduction_config.norms = {layout::Reduction::kMean};
  EXPECT_EQ(open_code(o), StatusCode::kInvalidArgument);
  o = {};
  o.collections.push_back(CollectionConfig{.name = "bad", .tensor_names = {"smdebug/reductions/x"}});
  EXPECT_EQ(open_code(o), StatusCode::kInvalidArgument);
  EXPECT_TRUE(ListTree(dir.path()).empty());

  EXPECT_EQ(Writer::Open((dir.path() / "run__1").string(), {}).status().code(),
            StatusCode::kInvalidArgument);
  WriterOptions allow;
  allow.allow_double_underscore_path = true;
  auto allowed = Writer::Open((dir.path() / "run__1").string(), allow);
  LITMUS_ASSERT_OK(allowed.status());
  LITMUS_ASSERT_OK((*allowed)->Close());
  EXPECT_EQ(Writer::Open("", {}).status().code(), StatusCode::kInvalidArgument);
}

TEST(WriterErrorsTest, InvalidTensors) {
  TempDir dir;
  auto w = MustOpen(dir.str(), EveryStep());
  LITMUS_ASSERT_OK(w->BeginStep());
  const auto code = [](const Status& s) { return s.code(); };
  EXPECT_EQ(code(SaveSix(*w, "")), StatusCode::kInvalidArgument);
  EXPECT_EQ(code(SaveSix(*w, "/abs")), StatusCode::kInvalidArgument);
  EXPECT_EQ(code(SaveSix(*w, "a//b")), StatusCode::kInvalidArgument);
  EXPECT_EQ(code(SaveSix(*w, "smdebug/reductions/mean/x")), StatusCode::kInvalidArgument);
  EXPECT_EQ(code(SaveSix(*w, std::string("nul\0x", 5))), StatusCode::kInvalidArgument);
  // Shape and data disagree.
  Status s = w->SaveTensor("x", std::span<const float>(kSix), std::vector<int64_t>{4});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("x"), std::string::npos);
  EXPECT_NE(s.message().find("16"), std::string::npos) << s.message();
  EXPECT_EQ(code(w->SaveTensor("x", std::span<const float>(kSix), std::vector<int64_t>{-2, -3})),
            StatusCode::kInvalidArgument);
  // Zero elements.
  EXPECT_EQ(code(w->SaveTensor("x", std::span<const float>(), std::vector<int64_t>{0, 3})),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code(w->SaveStrings("x", std::vector<std::string>{})), StatusCode::kInvalidArgument);
  // dtypes: strings through SaveTensor, unknown values, and smdebug-unreadable ones without opt-in.
  const auto bytes = std::as_bytes(std::span(kSix));
  EXPECT_EQ(code(w->SaveTensor("x", bytes, std::vector<int64_t>{6}, DType::kString)),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code(w->SaveTensor("x", bytes, std::vector<int64_t>{12}, static_cast<DType>(14))),
            StatusCode::kUnimplemented);  // bfloat16
  EXPECT_EQ(code(w->SaveTensor("x", bytes, std::vector<int64_t>{24}, DType::kInt8)),
            StatusCode::kInvalidArgument);
  s = w->SaveTensor("x", bytes, std::vector<int64_t>{3}, DType::kComplex64);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("allow_dtypes_smdebug_cannot_read"), std::string::npos);
  const std::vector<uint8_t> bad_bool = {0, 2};
  EXPECT_EQ(code(w->SaveTensor("x", std::as_bytes(std::span(bad_bool)), std::vector<int64_t>{2}, DType::kBool)),
            StatusCode::kInvalidArgument);
  // The same name twice in a step.
  LITMUS_ASSERT_OK(SaveSix(*w));
  EXPECT_EQ(code(SaveSix(*w)), StatusCode::kInvalidArgument);
  LITMUS_ASSERT_OK(w->SaveScalar("lr", 1));
  EXPECT_EQ(code(w->SaveScalar("lr", 2)), StatusCode::kInvalidArgument);
  EXPECT_EQ(code(w->SaveScalar("", 2)), StatusCode::kOk);  // "scalar/" is a valid name
  // The failures above wrote nothing.
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());
  auto events = litmus::testing::ReadEventFile(dir.path() / layout::EventFilePath(0, "worker_0"));
  ASSERT_EQ(events->records.size(), 3u);
}

TEST(WriterErrorsTest, StepApiMisuse) {
  TempDir dir;
  auto w = MustOpen(dir.str(), EveryStep());
  EXPECT_EQ(SaveSix(*w).code(), StatusCode::kFailedPrecondition);  // no step
  EXPECT_EQ(w->SaveScalar("x", 1).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w->EndStep().code(), StatusCode::kFailedPrecondition);
  LITMUS_ASSERT_OK(w->BeginStep());
  EXPECT_EQ(w->BeginStep().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w->SetMode(Mode::kEval).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w->SetMode(static_cast<Mode>(9)).code(), StatusCode::kInvalidArgument);
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());
  EXPECT_EQ(w->Close().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w->BeginStep().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(SaveSix(*w).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w->SetMode(Mode::kTrain).code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(w->ShouldSave("MLP_fc1.weight"));
}

TEST(WriterErrorsTest, UnusableFolder) {
  TempDir dir;
  dir.WriteFile("plain_file", "x");
  // A folder under a regular file cannot be created (root ignores chmod, not this).
  auto w = Writer::Open((dir.path() / "plain_file" / "trial").string(), {});
  EXPECT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("plain_file"), std::string::npos) << w.status().ToString();
  w = Writer::Open((dir.path() / "plain_file").string(), {});
  EXPECT_FALSE(w.ok());

  // A folder that cannot be written to (injected: EACCES-like) fails at the first step.
  FaultEnv env;
  env.FailCreateContaining("events/", FailedPreconditionError("events: Permission denied"));
  auto writer = MustOpen((dir.path() / "t").string(), EveryStep(&env));
  LITMUS_ASSERT_OK(writer->BeginStep());
  Status s = SaveSix(*writer);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("Permission denied"), std::string::npos);
  EXPECT_NE(s.message().find("step 0"), std::string::npos) << s.ToString();
  EXPECT_FALSE(writer->EndStep().ok());
  ExpectNoPartialFiles(dir.path() / "t");
}

TEST(WriterErrorsTest, FullDiskAbandonsTheStepAndLeavesNoPartialFile) {
  TempDir dir;
  FaultEnv env;
  auto w = MustOpen(dir.str(), EveryStep(&env));
  // Step 0 succeeds.
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveSix(*w));
  LITMUS_ASSERT_OK(w->EndStep());
  // Step 1 hits ENOSPC in the middle of a large tensor.
  env.FailAppendsAfter(5000, ResourceExhaustedError("write: No space left on device"));
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveSix(*w));  // buffered
  std::vector<float> big(100000, 1.0f);
  Status s = w->SaveTensor("big.weight", std::span<const float>(big), std::vector<int64_t>{100000});
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("000000000001_worker_0.tfevents.tmp"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("big.weight"), std::string::npos);
  // The step is abandoned: its .tmp is gone, later saves in it fail, EndStep reports it.
  EXPECT_FALSE(fs::exists(dir.path() / "events/000000000001/000000000001_worker_0.tfevents.tmp"));
  EXPECT_EQ(SaveSix(*w, "MLP_fc1.bias").code(), StatusCode::kFailedPrecondition);
  Status end = w->EndStep();
  EXPECT_EQ(end.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(end.message().find("No space left"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() / layout::IndexFilePath(1, "worker_0")));
  ExpectNoPartialFiles(dir.path());
  // Once space is back the next step works.
  env.ClearFaults();
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveSix(*w));
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());
  EXPECT_TRUE(fs::exists(dir.path() / layout::IndexFilePath(0, "worker_0")));
  EXPECT_TRUE(fs::exists(dir.path() / layout::IndexFilePath(2, "worker_0")));
  ExpectNoPartialFiles(dir.path());
}

TEST(WriterErrorsTest, FullDiskWhileFlushingAtEndStep) {
  TempDir dir;
  FaultEnv env;
  auto w = MustOpen(dir.str(), EveryStep(&env));
  env.FailAppendsAfter(100, ResourceExhaustedError("No space left on device"));
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveSix(*w));  // buffered: the failure comes at EndStep
  Status s = w->EndStep();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_TRUE(ListTree(dir.path()).empty());
  // Close then fails to write the collections file too, and writes no end marker.
  Status c = w->Close();
  EXPECT_EQ(c.code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(ListTree(dir.path()).empty());
}

TEST(WriterErrorsTest, FailingIndexPublicationRemovesTheStep) {
  TempDir dir;
  FaultEnv env;
  env.FailRenameContaining("000000000000_worker_0.json", UnavailableError("rename: I/O error"));
  auto w = MustOpen(dir.str(), EveryStep(&env));
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveSix(*w));
  Status s = w->EndStep();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("step 0"), std::string::npos) << s.ToString();
  // Neither the event file nor the index of step 0 is left (the collections file may stay).
  for (const std::string& f : ListTree(dir.path())) {
    EXPECT_TRUE(f.starts_with("collections/")) << f;
  }
  ExpectNoPartialFiles(dir.path());
  env.ClearFaults();
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveSix(*w));
  LITMUS_ASSERT_OK(w->EndStep());
  LITMUS_ASSERT_OK(w->Close());
  EXPECT_TRUE(fs::exists(dir.path() / layout::IndexFilePath(1, "worker_0")));
}

TEST(WriterErrorsTest, FailingCollectionsFileBlocksTheFirstIndex) {
  TempDir dir;
  FaultEnv env;
  env.FailCreateContaining("collections.json", ResourceExhaustedError("No space left on device"));
  auto w = MustOpen(dir.str(), EveryStep(&env));
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveSix(*w));
  EXPECT_EQ(w->EndStep().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(ListTree(dir.path()).empty());
  EXPECT_FALSE(w->Close().ok());
  EXPECT_FALSE(fs::exists(dir.path() / "training_job_end.ts"));
}

TEST(WriterErrorsTest, FailingEndMarker) {
  TempDir dir;
  FaultEnv env;
  env.FailRenameContaining("training_job_end.ts", UnavailableError("rename: I/O error"));
  auto w = MustOpen(dir.str(), EveryStep(&env));
  LITMUS_ASSERT_OK(w->BeginStep());
  LITMUS_ASSERT_OK(SaveSix(*w));
  LITMUS_ASSERT_OK(w->EndStep());
  Status s = w->Close();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("end-of-training marker"), std::string::npos) << s.ToString();
  EXPECT_FALSE(fs::exists(dir.path() / "training_job_end.ts"));
  ExpectNoPartialFiles(dir.path());
}

TEST(WriterErrorsTest, DestructorWithoutCloseDiscardsTheStepAndLogs) {
  TempDir dir;
  std::vector<std::pair<LogLevel, std::string>> logs;
  {
    WriterOptions o = EveryStep();
    o.log = [&logs](LogLevel level, std::string_view m) { logs.emplace_back(level, m); };
    auto w = MustOpen(dir.str(), o);
    LITMUS_ASSERT_OK(w->BeginStep());
    LITMUS_ASSERT_OK(SaveSix(*w));
    LITMUS_ASSERT_OK(w->EndStep());
    LITMUS_ASSERT_OK(w->BeginStep());
    std::vector<float> big(100000, 1.0f);
    LITMUS_ASSERT_OK(w->SaveTensor("big.weight", std::span<const float>(big), std::vector<int64_t>{100000}));
    ASSERT_TRUE(fs::exists(dir.path() / "events/000000000001/000000000001_worker_0.tfevents.tmp"));
  }
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].first, LogLevel::kError);
  EXPECT_NE(logs[0].second.find("without Close()"), std::string::npos) << logs[0].second;
  EXPECT_NE(logs[0].second.find("step 1"), std::string::npos) << logs[0].second;
  EXPECT_FALSE(fs::exists(dir.path() / "training_job_end.ts"));
  EXPECT_TRUE(fs::exists(dir.path() / layout::IndexFilePath(0, "worker_0")));
  EXPECT_FALSE(fs::exists(dir.path() / "events/000000000001"  / "000000000001_worker_0.tfevents"));
  ExpectNoPartialFiles(dir.path());
}

}  // namespace
}  // namespace litmus::writer
