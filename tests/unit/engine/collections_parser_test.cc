// Tests of ParseCollectionsJson / ParseReductionList / MakeCollection
// (engine/core/src/collections_parser.h): fixture files and smdebug's loading rules (§5).
#include "collections_parser.h"

#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::FixturePath;
using testing::ReadWholeFile;

constexpr std::string_view kFile = "collections/000000000/worker_0_collections.json";

const CollectionJson* Find(const CollectionsFile& file, std::string_view name) {
  for (const CollectionJson& c : file.collections) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

void ExpectRejected(std::string_view json, std::string_view needle = "") {
  StatusOr<CollectionsFile> parsed = ParseCollectionsJson(json, kFile);
  ASSERT_FALSE(parsed.ok()) << json;
  EXPECT_EQ(parsed.status().code(), StatusCode::kDataLoss) << parsed.status().ToString();
  EXPECT_NE(parsed.status().message().find(kFile), std::string::npos) << parsed.status().ToString();
  EXPECT_NE(parsed.status().message().find(needle), std::string::npos) << parsed.status().ToString();
}

std::string OneCollection(std::string_view body) {
  return R"({"collections": {"c": )" + std::string(body) + R"(}, "_meta": {"num_workers": 1}})";
}

TEST(CollectionsParserTest, PyTorchFixture) {
  const std::string json =
      ReadWholeFile(FixturePath("pt_run_complete") / "collections/000000000/worker_0_collections.json");
  LITMUS_ASSERT_OK_AND_ASSIGN(CollectionsFile file, ParseCollectionsJson(json, kFile));
  EXPECT_EQ(file.num_workers, 1);
  EXPECT_EQ(file.collections.size(), 6u);
  const CollectionJson* losses = Find(file, "losses");
  ASSERT_NE(losses, nullptr);
  EXPECT_EQ(losses->include_regex, std::vector<std::string>{"[Ll]oss_(?!input).*output"});
  EXPECT_EQ(losses->tensor_names, std::vector<std::string>{"CrossEntropyLoss_output_0"});
  ASSERT_TRUE(losses->reduction_config.has_value());
  EXPECT_TRUE(losses->reduction_config->save_raw_tensor);
  EXPECT_EQ(losses->reduction_config->reductions, "");
  EXPECT_FALSE(losses->reduction_config->save_shape);
  EXPECT_FALSE(losses->save_histogram);
  ASSERT_TRUE(losses->save_config.has_value());
  ASSERT_EQ(losses->save_config->size(), 4u);
  const std::optional<ModeSaveConfig>& train = losses->save_config->at(Mode::kTrain);
  ASSERT_TRUE(train.has_value());
  EXPECT_EQ(train->save_interval, 1);
  EXPECT_TRUE(train->save_steps.empty());
  EXPECT_EQ(train->start_step, 0);
  EXPECT_FALSE(train->end_step.has_value());
  const CollectionJson* weights = Find(file, "weights");
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ(weights->include_regex, std::vector<std::string>{"^(?!gradient).*weight"});
}

TEST(CollectionsParserTest, DdpFixturesAgreeOnNumWorkers) {
  for (const char* worker : {"worker_0", "worker_1"}) {
    const std::string json = ReadWholeFile(FixturePath("pt_ddp_two_workers") / "collections/000000000" /
                                           (std::string(worker) + "_collections.json"));
    LITMUS_ASSERT_OK_AND_ASSIGN(CollectionsFile file, ParseCollectionsJson(json, kFile));
    EXPECT_EQ(file.num_workers, 2) << worker;
  }
}

TEST(CollectionsParserTest, NullConfigsAccepted) {
  const std::string json =
      ReadWholeFile(FixturePath("synthetic_dtypes") / "collections/000000000/worker_0_collections.json");
  LITMUS_ASSERT_OK_AND_ASSIGN(CollectionsFile file, ParseCollectionsJson(json, kFile));
  EXPECT_EQ(file.collections.size(), 4u);
  const CollectionJson* weights = Find(file, "weights");
  ASSERT_NE(weights, nullptr);
  EXPECT_FALSE(weights->reduction_config.has_value());
  EXPECT_FALSE(weights->save_config.has_value());
  EXPECT_TRUE(weights->tensor_names.empty());
  EXPECT_EQ(weights->include_regex, std::vector<std::string>{"^dtypes/float"});
  // Per-mode nulls too, and missing optional keys.
  LITMUS_ASSERT_OK_AND_ASSIGN(
      CollectionsFile partial,
      ParseCollectionsJson(OneCollection(R"({"save_config": {"TRAIN": null, "EVAL": {"save_steps": [1, 5]}}})"), kFile));
  ASSERT_EQ(partial.collections.size(), 1u);
  EXPECT_EQ(partial.collections[0].name, "c");
  ASSERT_TRUE(partial.collections[0].save_config.has_value());
  EXPECT_FALSE(partial.collections[0].save_config->at(Mode::kTrain).has_value());
  EXPECT_EQ(partial.collections[0].save_config->at(Mode::kEval)->save_steps, (std::vector<int64_t>{1, 5}));
}

TEST(CollectionsParserTest, RejectsExtraTopLevelKey) {
  ExpectRejected(R"({"collections": {}, "_meta": {"num_workers": 1}, "mode": "TRAIN"})", "'mode'");
}

TEST(CollectionsParserTest, RejectsBadReductionItem) {
  ExpectRejected(OneCollection(R"({"reduction_config": {"save_raw_tensor": true, "reductions": "mean,median"}})"),
                 "'median'");
  ExpectRejected(OneCollection(R"({"reduction_config": {"reductions": "l1"}})"), "'l1'");
  ExpectRejected(OneCollection(R"({"reduction_config": {"reductions": "abs_l3_norm"}})"), "'abs_l3_norm'");
  ExpectRejected(OneCollection(R"({"reduction_config": {"reductions": "mean_norm"}})"), "'mean_norm'");
}

TEST(CollectionsParserTest, RejectsWrongTypes) {
  ExpectRejected("not json");
  ExpectRejected("[]");
  ExpectRejected(R"({"collections": {}})", "_meta");
  ExpectRejected(R"({"collections": {}, "_meta": {"num_workers": "2"}})", "num_workers");
  ExpectRejected(R"({"collections": {}, "_meta": {"num_workers": 0}})", "num_workers");
  ExpectRejected(R"({"collections": {}, "_meta": {"num_workers": 1.5}})", "num_workers");
  ExpectRejected(R"({"collections": [], "_meta": {"num_workers": 1}})");
  ExpectRejected(OneCollection(R"("weights")"), "'c'");
  ExpectRejected(OneCollection(R"({"include_regex": "^a"})"), "include_regex");
  ExpectRejected(OneCollection(R"({"include_regex": ["^a", 3]})"), "include_regex");
  ExpectRejected(OneCollection(R"({"tensor_names": "a,b"})"), "tensor_names");
  ExpectRejected(OneCollection(R"({"reduction_config": "mean"})"), "reduction_config");
  ExpectRejected(OneCollection(R"({"reduction_config": {"reductions": ["mean"]}})"), "reductions");
  ExpectRejected(OneCollection(R"({"reduction_config": {"save_raw_tensor": "yes"}})"), "save_raw_tensor");
  ExpectRejected(OneCollection(R"({"save_config": {"TRAINING": null}})"), "TRAINING");
  ExpectRejected(OneCollection(R"({"save_config": {"TRAIN": {"save_interval": "1"}}})"), "save_interval");
  ExpectRejected(OneCollection(R"({"save_config": {"TRAIN": {"end_step": 1.5}}})"), "end_step");
  ExpectRejected(OneCollection(R"({"save_config": [1]})"), "save_config");
  ExpectRejected(OneCollection(R"({"save_histogram": 1})"), "save_histogram");
  ExpectRejected(OneCollection(R"({"name": 5})"), "name");
}

TEST(CollectionsParserTest, UnknownKeysInsideACollectionAreIgnored) {
  LITMUS_ASSERT_OK_AND_ASSIGN(CollectionsFile file,
                              ParseCollectionsJson(OneCollection(R"({"future_key": [1, 2], "include_regex": false})"), kFile));
  ASSERT_EQ(file.collections.size(), 1u);
  EXPECT_TRUE(file.collections[0].include_regex.empty());
}

TEST(CollectionsParserTest, ReductionList) {
  using layout::Reduction;
  LITMUS_ASSERT_OK_AND_ASSIGN(auto all, ParseReductionList(" min,max ,mean,std,variance,sum,prod,l1_norm,l2_norm,"
                                                           "abs_min,abs_max,abs_mean,abs_std,abs_variance,abs_sum,"
                                                           "abs_prod,abs_l1_norm,abs_l2_norm,,"));
  ASSERT_EQ(all.size(), 18u);
  EXPECT_EQ(all[0], std::make_pair(Reduction::kMin, false));
  EXPECT_EQ(all[7], std::make_pair(Reduction::kL1, false));
  EXPECT_EQ(all[8], std::make_pair(Reduction::kL2, false));
  EXPECT_EQ(all[11], std::make_pair(Reduction::kMean, true));
  EXPECT_EQ(all[17], std::make_pair(Reduction::kL2, true));
  LITMUS_ASSERT_OK_AND_ASSIGN(auto none, ParseReductionList(""));
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(ParseReductionList("abs_").ok());
  EXPECT_FALSE(ParseReductionList("MEAN").ok());
  EXPECT_FALSE(ParseReductionList("l2").ok());
}

TEST(CollectionsParserTest, MakeCollectionCompilesRegexesOnce) {
  CollectionJson json;
  json.name = "weights";
  json.include_regex = {"^(?!gradient).*weight", "bias$"};
  json.tensor_names = {"x"};
  Status regex_status = InternalError("not set");
  const Collection c = MakeCollection(json, &regex_status);
  LITMUS_EXPECT_OK(regex_status);
  EXPECT_EQ(c.name, "weights");
  ASSERT_EQ(c.compiled_regex.size(), 2u);
  EXPECT_EQ(c.tensor_names, json.tensor_names);

  json.include_regex = {"ok", "(unclosed"};
  const Collection bad = MakeCollection(json, &regex_status);
  EXPECT_EQ(regex_status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(regex_status.message().find("weights"), std::string::npos) << regex_status.ToString();
  EXPECT_EQ(bad.compiled_regex.size(), 1u);
}

}  // namespace
}  // namespace litmus
