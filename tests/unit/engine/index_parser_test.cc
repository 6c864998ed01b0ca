// Tests of ParseIndexJson (engine/core/src/index_parser.h): the fixture index files, smdebug's
// rejection rules, wrong types, 64-bit offsets and event_file_name path safety.
#include "index_parser.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace litmus {
namespace {

using testing::FixturePath;
using testing::ReadWholeFile;

constexpr std::string_view kFile = "index/000000000/000000000003_worker_0.json";

Status ParseError(std::string_view json) {
  StatusOr<IndexFile> parsed = ParseIndexJson(json, kFile);
  if (parsed.ok()) return OkStatus();
  return parsed.status();
}

// Asserts that `json` is rejected with a message naming the file.
void ExpectRejected(std::string_view json, StatusCode code = StatusCode::kDataLoss) {
  const Status s = ParseError(json);
  EXPECT_FALSE(s.ok()) << json;
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(kFile), std::string::npos) << s.ToString();
}

std::string WithEventFile(std::string_view event_file) {
  return R"({"meta": {"mode": "TRAIN", "mode_step": 3, "event_file_name": ")" + std::string(event_file) +
         R"("}, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 20}], "shape_payload": []})";
}

TEST(IndexParserTest, ParsesTheWorkedExample) {
  const std::string json =
      ReadWholeFile(FixturePath("pt_exploding") / "index/000000000/000000000000_worker_0.json");
  ASSERT_FALSE(json.empty());
  LITMUS_ASSERT_OK_AND_ASSIGN(IndexFile index, ParseIndexJson(json, "x.json"));
  EXPECT_EQ(index.mode, Mode::kTrain);
  EXPECT_EQ(index.mode_step, 0);
  EXPECT_EQ(index.event_file_name, "events/000000000000/000000000000_worker_0.tfevents");
  ASSERT_FALSE(index.tensor_payload.empty());
  EXPECT_EQ(index.tensor_payload.front().tensor_name, "RegNet_fc1.weight");
  EXPECT_EQ(index.tensor_payload.front().start_idx, 0u);
  EXPECT_EQ(index.tensor_payload.front().length, 652u);
  bool found_loss = false;
  for (const IndexEntry& e : index.tensor_payload) {
    if (e.tensor_name == "MSELoss_output_0") {
      found_loss = true;
      EXPECT_EQ(e.start_idx, 1137u);
      EXPECT_EQ(e.length, 88u);
    }
  }
  EXPECT_TRUE(found_loss);
  EXPECT_EQ(index.tensor_payload.back().tensor_name, "gradient/RegNet_fc1.weight");
  EXPECT_EQ(index.tensor_payload.back().start_idx + index.tensor_payload.back().length, 2453u);
  EXPECT_TRUE(index.shape_payload.empty());
}

TEST(IndexParserTest, ParsesEveryFixtureIndexFile) {
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(FixturePath("").parent_path())) {
    const std::string path = entry.path().string();
    if (!entry.is_regular_file() || path.find("/index/") == std::string::npos ||
        entry.path().extension() != ".json") {
      continue;
    }
    ++files;
    StatusOr<IndexFile> index = ParseIndexJson(ReadWholeFile(entry.path()), path);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    // Entries tile the event file from 0 without gaps (§4.1), in the fixtures.
    uint64_t next = 0;
    for (const IndexEntry& e : index->tensor_payload) {
      EXPECT_EQ(e.start_idx, next) << path << " " << e.tensor_name;
      next = e.start_idx + e.length;
    }
    ASSERT_TRUE(index->event_file_name.has_value()) << path;
    EXPECT_TRUE(index->event_file_name->starts_with("events/")) << path;
  }
  EXPECT_EQ(files, 16 + 28 + 9 + 16 + 4);  // exploding, ddp (2 workers), partial, complete, dtypes
}

TEST(IndexParserTest, SixtyFourBitOffsetsAndShapes) {
  LITMUS_ASSERT_OK_AND_ASSIGN(
      IndexFile index,
      ParseIndexJson(R"({"meta": {"mode": " EVAL ", "mode_step": 12, "event_file_name": "events/a.tfevents"},
          "tensor_payload": [{"tensorname": "big", "start_idx": 6000000000, "length": 4294967312, "extra": 1}],
          "shape_payload": [{"tensorname": "big", "originalname": "big:0", "shape": [2, 3]},
                            {"tensorname": "s", "shape": []}]})",
                     kFile));
  EXPECT_EQ(index.mode, Mode::kEval);  // names are stripped, as smdebug's ModeKeys[name.strip()]
  EXPECT_EQ(index.mode_step, 12);
  ASSERT_EQ(index.tensor_payload.size(), 1u);
  EXPECT_EQ(index.tensor_payload[0].start_idx, 6000000000u);
  EXPECT_EQ(index.tensor_payload[0].length, 4294967312u);
  ASSERT_EQ(index.shape_payload.size(), 2u);
  EXPECT_EQ(index.shape_payload[0].original_name, "big:0");
  EXPECT_EQ(index.shape_payload[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(index.shape_payload[1].original_name, "s");
  EXPECT_TRUE(index.shape_payload[1].shape.empty());
}

TEST(IndexParserTest, ShapeOnlyFileNeedsNoEventFile) {
  LITMUS_ASSERT_OK_AND_ASSIGN(
      IndexFile index,
      ParseIndexJson(R"({"meta": {"mode": "GLOBAL", "mode_step": 0},
                         "shape_payload": [{"tensorname": "x", "originalname": "x", "shape": [4]}]})",
                     kFile));
  EXPECT_EQ(index.mode, Mode::kGlobal);
  EXPECT_FALSE(index.event_file_name.has_value());
  EXPECT_TRUE(index.tensor_payload.empty());
  // An empty tensor_payload without event_file_name is fine too.
  LITMUS_EXPECT_OK(ParseError(R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": []})"));
}

TEST(IndexParserTest, RejectsMalformedJson) {
  ExpectRejected("");
  ExpectRejected("{");
  ExpectRejected(R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": []} trailing)");
  ExpectRejected("[1, 2]");
  ExpectRejected("null");
}

TEST(IndexParserTest, RejectsMissingOrEmptyMeta) {
  ExpectRejected(R"({"tensor_payload": [], "shape_payload": []})");
  ExpectRejected(R"({"meta": {}, "tensor_payload": [], "shape_payload": []})");
  ExpectRejected(R"({"meta": null, "tensor_payload": []})");
  ExpectRejected(R"({"meta": "TRAIN", "tensor_payload": []})");
}

TEST(IndexParserTest, RejectsNeitherPayload) {
  ExpectRejected(R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "events/a"}})");
}

TEST(IndexParserTest, RejectsUnknownMode) {
  ExpectRejected(R"({"meta": {"mode": "TRAINING", "mode_step": 0}, "tensor_payload": []})");
  ExpectRejected(R"({"meta": {"mode": 1, "mode_step": 0}, "tensor_payload": []})");
  ExpectRejected(R"({"meta": {"mode_step": 0}, "tensor_payload": []})");
}

TEST(IndexParserTest, RejectsTensorPayloadWithoutEventFile) {
  ExpectRejected(R"({"meta": {"mode": "TRAIN", "mode_step": 0},
                     "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 20}]})");
}

TEST(IndexParserTest, RejectsWrongTypes) {
  auto with_entry = [](std::string_view entry) {
    return R"({"meta": {"mode": "TRAIN", "mode_step": 1, "event_file_name": "events/a"}, "tensor_payload": [)" +
           std::string(entry) + "]}";
  };
  ExpectRejected(with_entry(R"({"tensorname": "a", "start_idx": "0", "length": 20})"));   // string offset
  ExpectRejected(with_entry(R"({"tensorname": "a", "start_idx": 0, "length": -20})"));    // negative length
  ExpectRejected(with_entry(R"({"tensorname": "a", "start_idx": -1, "length": 20})"));    // negative offset
  ExpectRejected(with_entry(R"({"tensorname": "a", "start_idx": 0.5, "length": 20})"));   // float offset
  ExpectRejected(with_entry(R"({"tensorname": "a", "start_idx": 0, "length": 15})"));     // < framing
  ExpectRejected(with_entry(R"({"tensorname": 7, "start_idx": 0, "length": 20})"));       // numeric name
  ExpectRejected(with_entry(R"({"start_idx": 0, "length": 20})"));                        // no name
  ExpectRejected(with_entry(R"({"tensorname": "a", "length": 20})"));                     // no offset
  ExpectRejected(with_entry(R"(["a", 0, 20])"));                                          // not an object
  ExpectRejected(with_entry(R"({"tensorname": "a", "start_idx": 18446744073709551615, "length": 20})"));  // overflow
  // Float, negative and string mode steps.
  ExpectRejected(R"({"meta": {"mode": "TRAIN", "mode_step": 1.0}, "tensor_payload": []})");
  ExpectRejected(R"({"meta": {"mode": "TRAIN", "mode_step": -1}, "tensor_payload": []})");
  ExpectRejected(R"({"meta": {"mode": "TRAIN", "mode_step": "1"}, "tensor_payload": []})");
  ExpectRejected(R"({"meta": {"mode": "TRAIN"}, "tensor_payload": []})");
  // Payloads that are not lists; event file names that are not strings; bad shapes.
  ExpectRejected(R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "tensor_payload": {}})");
  ExpectRejected(R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "shape_payload": null})");
  ExpectRejected(R"({"meta": {"mode": "TRAIN", "mode_step": 1, "event_file_name": 5}, "tensor_payload": []})");
  ExpectRejected(R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "shape_payload": [{"tensorname": "a", "shape": [-1]}]})");
  ExpectRejected(R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "shape_payload": [{"tensorname": "a", "shape": "2,3"}]})");
  ExpectRejected(R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "shape_payload": [{"tensorname": "a", "shape": [1.5]}]})");
}

TEST(IndexParserTest, RejectsEventFilesOutsideTheTrial) {
  for (const char* bad : {"../x", "/etc/passwd", "events/../../x", "events/..", "..", "", "events//a",
                          "./events/a", "events\\\\..\\\\..\\\\x", "C:\\\\x", "events/\\u0000a"}) {
    SCOPED_TRACE(bad);
    ExpectRejected(WithEventFile(bad), StatusCode::kInvalidArgument);
  }
  LITMUS_EXPECT_OK(ParseError(WithEventFile("events/000000000003/000000000003_worker_0.tfevents")));
  LITMUS_EXPECT_OK(ParseError(WithEventFile("a..b/..c/d..")));  // dots inside names are fine
}

TEST(IndexParserTest, SafeRelativePath) {
  EXPECT_TRUE(SafeRelativePath("events/a.tfevents"));
  EXPECT_TRUE(SafeRelativePath("x"));
  EXPECT_FALSE(SafeRelativePath(std::string_view("a\0b", 3)));
  EXPECT_FALSE(SafeRelativePath("a/"));
  EXPECT_FALSE(SafeRelativePath("a/../b"));
  EXPECT_FALSE(SafeRelativePath("/a"));
  EXPECT_FALSE(SafeRelativePath("..\\a"));
}

}  // namespace
}  // namespace litmus
