// Tests for trial file naming, name parsing (incl. TF device de-serialization), validators and
// reduction tensor names.
#include "litmus/format/trial_layout.h"

#include <gtest/gtest.h>

namespace litmus::layout {
namespace {

TEST(TrialLayoutTest, Paths) {
  EXPECT_EQ(EventFilePath(7, "worker_0"), "events/000000000007/000000000007_worker_0.tfevents");
  EXPECT_EQ(IndexFilePath(7, "worker_0"), "index/000000000/000000000007_worker_0.json");
  EXPECT_EQ(IndexFilePath(1999, "w"), "index/000000001/000000001999_w.json");
  EXPECT_EQ(IndexFolder(0), "index/000000000");
  EXPECT_EQ(IndexFolder(999), "index/000000000");
  EXPECT_EQ(IndexFolder(1000), "index/000000001");
  EXPECT_EQ(IndexFolder(kMaxStep), "index/999999999");
  EXPECT_EQ(EventFilePath(kMaxStep, "w"), "events/999999999999/999999999999_w.tfevents");
  EXPECT_EQ(CollectionsFilePath("worker_1"), "collections/000000000/worker_1_collections.json");
}

TEST(TrialLayoutTest, ParseIndexFilePath) {
  auto p = ParseIndexFilePath("index/000000000/000000000007_worker_0.json");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->step, 7);
  EXPECT_EQ(p->worker, "worker_0");
  p = ParseIndexFilePath("index/000000001/000000001234_chief_0.json");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->step, 1234);
  EXPECT_EQ(p->worker, "chief_0");
  p = ParseIndexFilePath("index/999999999/999999999999_w.json");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->step, kMaxStep);
  // Round trip with IndexFilePath.
  p = ParseIndexFilePath(IndexFilePath(4321, "worker_12"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->step, 4321);
  EXPECT_EQ(p->worker, "worker_12");
}

TEST(TrialLayoutTest, DeserializesTfDeviceWorkers) {
  auto p = ParseIndexFilePath(
      "index/000000000/000000000005__job-worker_replica-0_task-1_device-GPU-0.json");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->step, 5);
  EXPECT_EQ(p->worker, "/job:worker/replica:0/task:1/device:GPU:0");
  EXPECT_EQ(ParseCollectionsFilePath(
                "collections/000000000/_job-worker_replica-0_task-1_device-GPU-0_collections.json"),
            "/job:worker/replica:0/task:1/device:GPU:0");
  // Only a leading '_' of the worker triggers it (smdebug looks for "__" anywhere in the path).
  p = ParseIndexFilePath("index/000000000/000000000005_my-worker_1.json");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->worker, "my-worker_1");
}

TEST(TrialLayoutTest, RejectsNonIndexNames) {
  for (std::string_view bad : {
           "index/000000000/000000000007_worker_0.json.tmp",
           "index/000000000/000000000007_worker_0.csv",
           "index/000000000/000000000007_worker_0.JSON",
           "index/000000000/000000000007.json",
           "index/000000000/000000000007_.json",
           "index/000000000/_worker_0.json",
           "index/000000000/x00000000007_worker_0.json",
           "index/000000000/1000000000000_worker_0.json",     // step >= 10^12
           "index/000000000/99999999999999999999999_w.json",  // would overflow int64
           "index/000000007_worker_0.json",
           "index/a/b/000000000007_worker_0.json",
           "indexes/000000000/000000000007_worker_0.json",
           "events/000000000007/000000000007_worker_0.tfevents",
           "000000000/000000000007_worker_0.json",
           "",
       }) {
    EXPECT_FALSE(ParseIndexFilePath(bad)) << bad;
  }
  // Leading zeros beyond 12 digits are still a small step.
  auto p = ParseIndexFilePath("index/000000000/0000000000005_w.json");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->step, 5);
}

TEST(TrialLayoutTest, ParseCollectionsFilePath) {
  EXPECT_EQ(ParseCollectionsFilePath("collections/000000000/worker_0_collections.json"),
            "worker_0");
  for (std::string_view bad :
       {"collections/000000000/worker_0_collections.json.tmp",
        "collections/000000000/_collections.json", "collections/000000001/w_collections.json",
        "collections/000000000/a/w_collections.json", "collections/000000000/w.json"}) {
    EXPECT_FALSE(ParseCollectionsFilePath(bad)) << bad;
  }
}

TEST(TrialLayoutTest, ValidateWorkerName) {
  for (std::string_view ok : std::initializer_list<std::string_view>{
           "worker_0", "w", "chief_0", "host-1.example", "0", std::string_view("a", 1)}) {
    EXPECT_TRUE(ValidateWorkerName(ok).ok()) << ok;
  }
  EXPECT_TRUE(ValidateWorkerName(std::string(255, 'a')).ok());
  for (std::string_view bad : {"", "_job", "a__b", "a/b", "a b", "w:0", "\xc3\xa9"}) {
    const Status s = ValidateWorkerName(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(ValidateWorkerName(std::string(256, 'a')).ok());
  EXPECT_NE(ValidateWorkerName("a b").message().find("'a b'"), std::string::npos);
}

TEST(TrialLayoutTest, ValidateTensorName) {
  for (std::string_view ok :
       {"gradient/MLP_fc1.weight", "tf_style/dense/kernel:0", "x", "caf\xc3\xa9", "a/b/c"}) {
    EXPECT_TRUE(ValidateTensorName(ok).ok()) << ok;
  }
  EXPECT_TRUE(ValidateTensorName(std::string(4096, 'a')).ok());
  for (std::string_view bad : std::initializer_list<std::string_view>{
           "", "/abs", "a//b", "a\nb", "a\rb", std::string_view("a\0b", 3), "\xff", "\xc3",
           "smdebug/reductions/min/x"}) {
    EXPECT_EQ(ValidateTensorName(bad).code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(ValidateTensorName(std::string(4097, 'a')).ok());
}

TEST(TrialLayoutTest, ReductionNames) {
  for (Reduction r : kAllReductions) EXPECT_EQ(ReductionFromName(ReductionName(r)), r);
  EXPECT_EQ(ReductionFromName("l1_norm"), Reduction::kL1);
  EXPECT_EQ(ReductionFromName("l2_norm"), Reduction::kL2);
  EXPECT_EQ(ReductionFromName("median"), std::nullopt);
  EXPECT_EQ(ReductionName(Reduction::kVariance), "variance");

  EXPECT_EQ(ReductionTensorName(Reduction::kMean, false, "x"), "smdebug/reductions/mean/x");
  EXPECT_EQ(ReductionTensorName(Reduction::kL2, true, "gradient/fc1.weight"),
            "smdebug/reductions/abs_l2/gradient/fc1.weight");
  EXPECT_EQ(ReductionTensorName(Reduction::kMax, false, "dense/kernel:0"),
            "smdebug/reductions/max/dense/kernel:0");
  EXPECT_EQ(ReductionTensorName(Reduction::kMax, false, "dense/kernel:0", true),
            "smdebug/reductions/max/dense/kernel");
  EXPECT_EQ(ReductionTensorName(Reduction::kMin, true, "a:12/b:x:3c", true),
            "smdebug/reductions/abs_min/a/b:xc");
}

TEST(TrialLayoutTest, ParseReductionTensorName) {
  auto p = ParseReductionTensorName("smdebug/reductions/abs_l2/gradient/fc1.weight");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->reduction, Reduction::kL2);
  EXPECT_TRUE(p->abs);
  EXPECT_EQ(p->tensor, "gradient/fc1.weight");
  p = ParseReductionTensorName("smdebug/reductions/variance/x:0");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->reduction, Reduction::kVariance);
  EXPECT_FALSE(p->abs);
  EXPECT_EQ(p->tensor, "x:0");
  // "contains", not "starts with" (TF name scopes can put something in front).
  p = ParseReductionTensorName("scope/smdebug/reductions/max/w");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->reduction, Reduction::kMax);
  EXPECT_EQ(p->tensor, "w");
  // Round trip over every reduction.
  for (Reduction r : kAllReductions) {
    for (bool abs : {false, true}) {
      p = ParseReductionTensorName(ReductionTensorName(r, abs, "t/u"));
      ASSERT_TRUE(p);
      EXPECT_EQ(p->reduction, r);
      EXPECT_EQ(p->abs, abs);
      EXPECT_EQ(p->tensor, "t/u");
    }
  }
  for (std::string_view bad :
       {"plain/tensor", "smdebug/reductions/median/x", "smdebug/reductions/min",
        "smdebug/reductions/min/", "smdebug/reductions/"}) {
    EXPECT_FALSE(ParseReductionTensorName(bad)) << bad;
  }
}

}  // namespace
}  // namespace litmus::layout
