// Differential tests of the streaming ParseIndexJson against the DOM-based reference parser
// (tests/support/index_json_reference.h): on every fixture index file, on hand-written edge
// cases (duplicate keys, wrong types at every level, nesting) and on many deterministic
// mutations of real index files, both must return the same IndexFile or the same error.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "index_parser.h"
#include "support/index_json_inputs.h"
#include "support/index_json_reference.h"

namespace litmus {
namespace {

constexpr std::string_view kFile = "index/000000000/000000000003_worker_0.json";

// Returns true when both parsers agree on `json`; counts the accepted inputs.
::testing::AssertionResult Agree(const std::string& json, int* accepted = nullptr) {
  const StatusOr<IndexFile> fast = ParseIndexJson(json, kFile);
  const StatusOr<IndexFile> reference = testing::ParseIndexJsonReference(json, kFile);
  const std::string a = testing::DescribeIndexResult(fast);
  const std::string b = testing::DescribeIndexResult(reference);
  if (a != b) return ::testing::AssertionFailure() << "input: " << json << "\nstreaming: " << a << "\nreference: " << b;
  if (accepted != nullptr && fast.ok()) ++*accepted;
  return ::testing::AssertionSuccess();
}

TEST(IndexParserDiffTest, FixtureIndexFiles) {
  const std::vector<std::string> files = testing::FixtureIndexFileTexts();
  ASSERT_GT(files.size(), 20u);
  int accepted = 0;
  for (const std::string& json : files) EXPECT_TRUE(Agree(json, &accepted));
  EXPECT_EQ(accepted, static_cast<int>(files.size())) << "every fixture index file is valid";
}

TEST(IndexParserDiffTest, EdgeCases) {
  const std::string meta = R"("meta": {"mode": "TRAIN", "mode_step": 3, "event_file_name": "events/a.tfevents"})";
  const std::vector<std::string> cases = {
      "", " ", "null", "[]", "[1]", "3", "\"x\"", "{}", "{", "{} {}", "{\"meta\": {}}",
      "{" + meta + "}",
      "{" + meta + R"(, "tensor_payload": []})",
      "{" + meta + R"(, "shape_payload": []})",
      "{" + meta + R"(, "tensor_payload": {}})",
      "{" + meta + R"(, "tensor_payload": 5})",
      "{" + meta + R"(, "tensor_payload": [5]})",
      "{" + meta + R"(, "tensor_payload": [[]]})",
      "{" + meta + R"(, "tensor_payload": [{}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 20}, 7, {"tensorname": 1}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 20, "tensorname": "b"}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 20, "tensorname": null}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0.0, "length": 20}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": -1, "length": 20}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": "0", "length": 20}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": [0], "length": 20}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 15}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 18446744073709551615, "length": 16}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 18446744073709551616, "length": 16}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 1, "length": 20, "x": {"y": [1, {"z": 2}]}}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 20}], "tensor_payload": []})",
      "{" + meta + R"(, "tensor_payload": [7], "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 20}]})",
      "{" + meta + R"(, "tensor_payload": 1, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 20}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "shape": [1, 2]}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "originalname": null, "shape": []}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "originalname": "b:0", "shape": [3]}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "originalname": 4, "shape": [3]}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "shape": 3}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a"}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "shape": [1, -2]}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "shape": [1, [2]]}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "shape": [1, 2.5]}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "shape": [9223372036854775808]}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "shape": [1, "x"], "shape": [4]}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "shape": [4], "shape": {}}]})",
      "{" + meta + R"(, "shape_payload": [{"tensorname": "a", "shape": [4]}, {"shape": [1]}]})",
      "{" + meta + R"(, "shape_payload": {}, "tensor_payload": [7]})",
      R"({"meta": {"mode": "TRAIN"}, "tensor_payload": []})",
      R"({"meta": {"mode_step": 1}, "tensor_payload": []})",
      R"({"meta": {"mode": "BOGUS", "mode_step": 1}, "tensor_payload": []})",
      R"({"meta": {"mode": 1, "mode_step": 1}, "tensor_payload": []})",
      R"({"meta": {"mode": "EVAL", "mode_step": 9223372036854775808}, "tensor_payload": []})",
      R"({"meta": {"mode": "EVAL", "mode_step": 9223372036854775807}, "tensor_payload": []})",
      R"({"meta": {"mode": "EVAL", "mode_step": -1}, "tensor_payload": []})",
      R"({"meta": {"mode": "EVAL", "mode_step": 1, "event_file_name": null}, "tensor_payload": []})",
      R"({"meta": {"mode": "EVAL", "mode_step": 1, "event_file_name": "../x"}, "tensor_payload": []})",
      R"({"meta": {"mode": "EVAL", "mode_step": 1, "event_file_name": {"a": 1}}, "tensor_payload": []})",
      R"({"meta": {"mode": "EVAL", "mode_step": 1}, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 20}]})",
      R"({"meta": {"mode": "EVAL", "mode_step": 1}, "meta": {}, "tensor_payload": []})",
      R"({"meta": {}, "meta": {"mode": "EVAL", "mode_step": 1}, "tensor_payload": []})",
      R"({"meta": 1, "tensor_payload": []})",
      R"({"meta": [1], "tensor_payload": []})",
      R"({"meta": {"mode": "EVAL", "mode": "TRAIN", "mode_step": 2, "x": [[[]]]}, "tensor_payload": []})",
      R"({"x": {"meta": 1}, "meta": {"mode": "PREDICT", "mode_step": 2}, "shape_payload": []})",
      R"({"meta": {"mode": "GLOBAL", "mode_step": 2}, "tensor_payload": []} trailing)",
      R"({"meta": {"mode": "GLOBAL", "mode_step": 2}, "tensor_payload": [],})",
      R"({"meta": {"mode": "GLOBAL", "mode_step": 2}, "tensor_payload": [] /* comment */})",
      R"({"meta": {"mode": "GLOBAL", "mode_step": 2}, "tensor_payload": [{"tensorname": "\u00e9\ud83d\ude00", "start_idx": 0, "length": 16}]})",
      "{\"meta\": {\"mode\": \"GLOBAL\", \"mode_step\": 2}, \"tensor_payload\": [{\"tensorname\": \"\xff\", \"start_idx\": 0, \"length\": 16}]}",
      std::string(2000, '[') + std::string(2000, ']'),
      "{\"a\": " + std::string(5000, '[') + std::string(5000, ']') + "}",
  };
  for (const std::string& json : cases) EXPECT_TRUE(Agree(json));
}

// Deterministic mutations of real index files: deleted, duplicated, replaced and inserted
// characters and whole tokens, so that both parsers see broken JSON, wrong types and
// duplicate keys in every position.
TEST(IndexParserDiffTest, MutatedFixtureFiles) {
  const std::vector<std::string> files = testing::FixtureIndexFileTexts();
  ASSERT_FALSE(files.empty());
  const std::vector<std::string> tokens = {"{", "}", "[", "]", ",", ":", "\"", "0", "-1", "1.5", "null", "true",
                                           "\"meta\": {}", "\"tensor_payload\": []", "\"length\": 3",
                                           "\"shape\": [2]", "\"mode\": \"EVAL\"", "\"originalname\": null",
                                           "18446744073709551615", "\"tensorname\": 1"};
  std::mt19937_64 rng(20261125);
  int accepted = 0;
  int runs = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string json = testing::MutatedJson(files[rng() % files.size()], tokens, rng);
    ++runs;
    ASSERT_TRUE(Agree(json, &accepted));
  }
  EXPECT_EQ(runs, 20000);
  // Some mutations keep the file valid (e.g. inside a tensor name), most do not: both kinds occur.
  EXPECT_GT(accepted, 100);
  EXPECT_LT(accepted, runs);
}

}  // namespace
}  // namespace litmus
