// Differential tests of the streaming ParseIndexJson against the DOM-based reference parser
// (tests/support/index_json_reference.h): on every fixture index file, on hand-written edge
// cases (duplicate keys, wrong types at every level, nesting) and on many deterministic
// mutations of real index files, both must return the same IndexFile or the same error. The
// fast path for smdebug's own layout (ParseCanonicalIndexJson) is also checked on its own:
// whatever it accepts, the reference parser returns alike, and it does accept the files smdebug
// wrote (else the fast path would silently never run). ParseIndexFileView (the catalog's parse,
// names viewing the file's text) must agree with ParseIndexJson on every input.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canonical_index_parser.h"
#include "index_file_view.h"
#include "index_parser.h"
#include "support/index_json_inputs.h"
#include "support/index_json_reference.h"

namespace litmus {
namespace {

constexpr std::string_view kFile = "index/000000000/000000000003_worker_0.json";

// The IndexFile a view shows (or its error).
StatusOr<IndexFile> FromView(const StatusOr<IndexFileView>& view) {
  if (!view.ok()) return view.status();
  return view->ToIndexFile();
}

// Returns true when both parsers, and the view of the catalog's parse, agree on `json`; counts
// the accepted inputs. (The view's parse is given its own copy of the text, gone once it returns.)
::testing::AssertionResult Agree(const std::string& json, int* accepted = nullptr) {
  const StatusOr<IndexFile> fast = ParseIndexJson(json, kFile);
  const StatusOr<IndexFile> reference = testing::ParseIndexJsonReference(json, kFile);
  const std::string a = testing::DescribeIndexResult(fast);
  const std::string b = testing::DescribeIndexResult(reference);
  if (a != b) return ::testing::AssertionFailure() << "input: " << json << "\nstreaming: " << a << "\nreference: " << b;
  const std::string v = testing::DescribeIndexResult(FromView(ParseIndexFileView(std::string(json), kFile)));
  if (v != b) return ::testing::AssertionFailure() << "input: " << json << "\nview: " << v << "\nreference: " << b;
  if (accepted != nullptr && fast.ok()) ++*accepted;
  return ::testing::AssertionSuccess();
}

// Returns true when the canonical fast path declines `json` or returns what the reference
// parser does; counts the inputs it accepted.
::testing::AssertionResult CanonicalAgrees(const std::string& json, int* accepted = nullptr) {
  const std::optional<IndexFile> canonical = ParseCanonicalIndexJson(json);
  if (!canonical) return ::testing::AssertionSuccess();
  if (accepted != nullptr) ++*accepted;
  const std::string a = testing::DescribeIndexResult(StatusOr<IndexFile>(*canonical));
  const std::string b = testing::DescribeIndexResult(testing::ParseIndexJsonReference(json, kFile));
  if (a != b) return ::testing::AssertionFailure() << "input: " << json << "\ncanonical: " << a << "\nreference: " << b;
  return ::testing::AssertionSuccess();
}

TEST(IndexParserDiffTest, FixtureIndexFiles) {
  const std::vector<std::string> files = testing::FixtureIndexFileTexts();
  ASSERT_GT(files.size(), 20u);
  int accepted = 0;
  for (const std::string& json : files) EXPECT_TRUE(Agree(json, &accepted));
  EXPECT_EQ(accepted, static_cast<int>(files.size())) << "every fixture index file is valid";
  int canonical = 0;
  for (const std::string& json : files) EXPECT_TRUE(CanonicalAgrees(json, &canonical));
  EXPECT_EQ(canonical, static_cast<int>(files.size())) << "smdebug's files take the fast path";
}

TEST(IndexParserDiffTest, CanonicalFastPathTakesOnlyItsLayout) {
  const std::string meta = R"("meta": {"mode": "EVAL", "mode_step": 3, "event_file_name": "events/a.tfevents"})";
  const std::string entry = R"({"tensorname": "a/b", "start_idx": 0, "length": 20})";
  const std::vector<std::string> taken = {
      "{" + meta + R"(, "tensor_payload": [], "shape_payload": []})",
      "{" + meta + R"(, "tensor_payload": []})",
      "{" + meta + R"(, "tensor_payload": [)" + entry + ", " + entry + R"(], "shape_payload": []})",
      " \n\t{\r\n" + meta + ",\n  \"tensor_payload\" :\n [ " + entry + " ]\n}\n ",
      R"({"meta": {"mode": "GLOBAL", "mode_step": 9223372036854775807, "event_file_name": "e"}, "tensor_payload": [{"tensorname": "", "start_idx": 9999999999999999983, "length": 16}]})",
  };
  for (const std::string& json : taken) {
    EXPECT_TRUE(ParseCanonicalIndexJson(json).has_value()) << json;
    EXPECT_TRUE(CanonicalAgrees(json)) << json;
    EXPECT_TRUE(Agree(json)) << json;
  }
  const std::vector<std::string> declined = {
      "",
      "{" + meta + "}",
      "{" + meta + R"(, "shape_payload": [], "tensor_payload": []})",
      "{" + meta + R"(, "tensor_payload": [], "shape_payload": [{"tensorname": "a", "shape": [1]}]})",
      "{" + meta + R"(, "tensor_payload": [], "x": 1})",
      "{" + meta + R"(, "tensor_payload": [{"start_idx": 0, "tensorname": "a", "length": 20}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 20, "x": 1}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a\u0062", "start_idx": 0, "length": 20}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 15}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 18446744073709551599, "length": 16}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 18446744073709551600, "length": 16}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 00, "length": 20}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 1.0, "length": 20}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 1e2, "length": 20}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": -1, "length": 20}]})",
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 20},]})",
      "{" + meta + R"(, "tensor_payload": []} x)",
      "{" + meta + R"(, "tensor_payload": [],})",
      R"({"meta": {"mode": "BOGUS", "mode_step": 3, "event_file_name": "e"}, "tensor_payload": []})",
      R"({"meta": {"mode": "EVAL", "mode_step": 9223372036854775808, "event_file_name": "e"}, "tensor_payload": []})",
      R"({"meta": {"mode": "EVAL", "mode_step": 3, "event_file_name": "../e"}, "tensor_payload": []})",
      R"({"meta": {"mode": "EVAL", "mode_step": 3}, "tensor_payload": []})",
      R"({"meta": {"mode_step": 3, "mode": "EVAL", "event_file_name": "e"}, "tensor_payload": []})",
      "{\"meta\": {\"mode\": \"EVAL\", \"mode_step\": 3, \"event_file_name\": \"e\xc3\xa9\"}, \"tensor_payload\": []}",
  };
  for (const std::string& json : declined) {
    EXPECT_FALSE(ParseCanonicalIndexJson(json).has_value()) << json;
    EXPECT_TRUE(Agree(json)) << json;
  }
}

// The catalog's parse of smdebug's layout allocates nothing per entry: the names and the event
// file view the text it was given (which the view owns), and stay valid when the view moves.
// Other files view the general parser's strings.
TEST(IndexParserDiffTest, ViewsOfSmdebugFilesPointIntoTheirOwnText) {
  const std::string meta = R"("meta": {"mode": "TRAIN", "mode_step": 7, "event_file_name": "events/a.tfevents"})";
  std::string json = "{" + meta + R"(, "tensor_payload": [{"tensorname": "gradients/layer_000.weight", )"
                     R"("start_idx": 0, "length": 20}, {"tensorname": "gradients/layer_001.weight", )"
                     R"("start_idx": 20, "length": 36}]})";
  StatusOr<IndexFileView> parsed = ParseIndexFileView(std::move(json), kFile);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const IndexFileView view = *std::move(parsed);
  const auto* text = static_cast<const std::string*>(view.owner.get());
  ASSERT_NE(text, nullptr);
  const auto inside = [&](std::string_view s) {
    return s.data() >= text->data() && s.data() + s.size() <= text->data() + text->size();
  };
  ASSERT_EQ(view.tensor_payload.size(), 2u);
  EXPECT_EQ(view.tensor_payload[1].tensor_name, "gradients/layer_001.weight");
  EXPECT_EQ(view.tensor_payload[1].start_idx, 20u);
  EXPECT_EQ(view.tensor_payload[1].length, 36u);
  for (const IndexEntryView& e : view.tensor_payload) EXPECT_TRUE(inside(e.tensor_name)) << e.tensor_name;
  ASSERT_TRUE(view.event_file_name.has_value());
  EXPECT_TRUE(inside(*view.event_file_name));
  EXPECT_EQ(view.mode, Mode::kTrain);
  EXPECT_EQ(view.mode_step, 7);
  // An escaped name takes the general parser; the view holds its strings.
  const StatusOr<IndexFileView> escaped = ParseIndexFileView(
      "{" + meta + R"(, "tensor_payload": [{"tensorname": "a\u0062", "start_idx": 0, "length": 20}]})", kFile);
  ASSERT_TRUE(escaped.ok()) << escaped.status().ToString();
  ASSERT_EQ(escaped->tensor_payload.size(), 1u);
  EXPECT_EQ(escaped->tensor_payload[0].tensor_name, "ab");
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
  int canonical = 0;
  int runs = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string json = testing::MutatedJson(files[rng() % files.size()], tokens, rng);
    ++runs;
    ASSERT_TRUE(Agree(json, &accepted));
    ASSERT_TRUE(CanonicalAgrees(json, &canonical));
  }
  EXPECT_EQ(runs, 20000);
  // Some mutations keep the file valid (e.g. inside a tensor name), most do not: both kinds occur.
  EXPECT_GT(accepted, 100);
  EXPECT_LT(accepted, runs);
  // Some of the valid ones keep smdebug's layout, some do not.
  EXPECT_GT(canonical, 50);
  EXPECT_LT(canonical, accepted);
}

}  // namespace
}  // namespace litmus
