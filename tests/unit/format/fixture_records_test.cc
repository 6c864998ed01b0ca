// Fixture-driven tests of framing and the Event codec: every record of every vendored smdebug
// event file is parsed, decoded, cross-checked against the generated protobuf classes, and
// re-encoded byte-identically; every index entry addresses exactly one matching record.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "event_compare.h"
#include "fixture_util.h"
#include "litmus/format/event_codec.h"
#include "litmus/format/tfrecord.h"
#include "litmus/format/trial_layout.h"

namespace litmus {
namespace {

using testing::AsBytes;
using testing::FixtureFilesEndingIn;
using testing::FixturesRoot;

struct Record {
  std::string file;
  uint64_t offset = 0;
  std::string payload;
  bool has_payload_crc = false;
};

// Walks a whole event file from offset 0; the walk must end cleanly at EOF.
std::vector<Record> WalkFile(const std::filesystem::path& path) {
  const std::string data = testing::ReadWholeFile(path);
  std::vector<Record> out;
  uint64_t offset = 0;
  while (true) {
    auto r = tfrecord::ParseRecord(AsBytes(data).subspan(offset), path.string(), offset);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange) << r.status().ToString();
      EXPECT_EQ(offset, data.size()) << path << ": records do not tile the file";
      break;
    }
    out.push_back({path.string(), offset,
                   std::string(reinterpret_cast<const char*>(r->payload.data()), r->payload.size()),
                   r->has_payload_crc});
    offset += r->framed_size;
  }
  return out;
}

std::vector<Record> AllRecords(std::string_view suffix) {
  std::vector<Record> all;
  for (const auto& path : FixtureFilesEndingIn(suffix)) {
    auto records = WalkFile(path);
    all.insert(all.end(), records.begin(), records.end());
  }
  return all;
}

TEST(FixtureRecordsTest, EveryRecordDecodesLikeTheGeneratedClasses) {
  const auto final_records = AllRecords(".tfevents");
  const auto tmp_records = AllRecords(".tfevents.tmp");
  EXPECT_EQ(final_records.size(), 761u);  // spec §0.1: 759 indexed + 2 unindexed
  EXPECT_GT(tmp_records.size(), 0u);      // pt_run_partial's growing step 9 ends on a boundary
  size_t real_crcs = 0;
  size_t tensors = 0;
  for (const auto* set : {&final_records, &tmp_records}) {
    for (const Record& rec : *set) {
      real_crcs += rec.has_payload_crc;
      auto v = DecodeEvent(AsBytes(rec.payload));
      ASSERT_TRUE(v.ok()) << rec.file << "@" << rec.offset << ": " << v.status().ToString();
      ASSERT_TRUE(testing::MatchesGenerated(AsBytes(rec.payload), *v))
          << rec.file << "@" << rec.offset;
      if (!v->has_tensor) {
        EXPECT_EQ(v->tag, "tb_only/scalar");  // the one TensorBoard-style record: no plugin_data
        EXPECT_EQ(v->simple_value, 1.5f);
        continue;
      }
      ++tensors;
      ASSERT_TRUE(v->mode.has_value()) << rec.file << "@" << rec.offset;
      ASSERT_TRUE(v->mode_step.has_value());
      ASSERT_EQ(v->packed_field, 0);  // smdebug never writes *_val
    }
  }
  EXPECT_EQ(real_crcs, 26u);  // synthetic_dtypes step 5 only
  EXPECT_EQ(tensors, final_records.size() + tmp_records.size() - 1);  // all but tb_only/scalar
}

TEST(FixtureRecordsTest, ReEncodingReproducesEveryTensorPayload) {
  size_t reencoded = 0;
  for (const std::string_view suffix : {".tfevents", ".tfevents.tmp"}) {
    for (const Record& rec : AllRecords(suffix)) {
      auto v = DecodeEvent(AsBytes(rec.payload));
      ASSERT_TRUE(v.ok());
      if (!v->has_tensor) continue;
      const std::optional<DType> dtype = DTypeFromProto(v->raw_dtype);
      ASSERT_TRUE(dtype.has_value()) << v->tag;
      TensorEventSpec spec;
      spec.wall_time = v->wall_time;
      spec.step = v->step;
      spec.tag = v->tag;
      spec.mode = *v->mode;
      spec.mode_step = *v->mode_step;
      spec.dtype = *dtype;
      spec.shape = v->shape;
      spec.content = v->content;
      spec.strings = v->string_val;
      const EncodedEvent e = EncodeTensorEvent(spec);
      const std::string payload =
          e.prefix +
          std::string(reinterpret_cast<const char*>(e.content.data()), e.content.size()) + e.suffix;
      ASSERT_EQ(e.payload_size(), payload.size());
      ASSERT_EQ(payload, rec.payload) << rec.file << "@" << rec.offset << " tag " << v->tag;
      ++reencoded;
    }
  }
  EXPECT_GE(reencoded, 760u);
}

TEST(FixtureRecordsTest, IndexEntriesAddressExactlyOneMatchingRecord) {
  size_t entries = 0;
  for (const auto& index_path : FixtureFilesEndingIn(".json")) {
    const std::string rel = std::filesystem::relative(index_path, FixturesRoot()).string();
    const size_t slash = rel.find('/');
    if (slash == std::string::npos) continue;  // <trial>.expected.json
    const std::string trial = rel.substr(0, slash);
    const std::string in_trial = rel.substr(slash + 1);
    const auto name = layout::ParseIndexFilePath(in_trial);
    if (!name) continue;  // collections files
    const auto json = nlohmann::json::parse(testing::ReadWholeFile(index_path));
    const std::string event_rel = json["meta"]["event_file_name"];
    EXPECT_EQ(event_rel, layout::EventFilePath(name->step, name->worker));
    const std::string events = testing::ReadWholeFile(FixturesRoot() / trial / event_rel);
    const Mode mode = ModeFromName(json["meta"]["mode"].get<std::string>()).value();
    for (const auto& entry : json["tensor_payload"]) {
      const uint64_t start = entry["start_idx"];
      const uint64_t length = entry["length"];
      ASSERT_LE(start + length, events.size());
      auto r = tfrecord::ParseExactRecord(AsBytes(events).subspan(start, length), event_rel, start);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      auto v = DecodeEvent(r->payload);
      ASSERT_TRUE(v.ok());
      EXPECT_EQ(v->tag, entry["tensorname"].get<std::string>());
      EXPECT_EQ(v->step, name->step);
      EXPECT_EQ(v->mode, mode);
      EXPECT_EQ(v->mode_step, json["meta"]["mode_step"].get<int64_t>());
      ++entries;
    }
  }
  EXPECT_EQ(entries, 759u);
}

// A growing event file may end anywhere: walking any prefix ends in OutOfRange, never DataLoss.
TEST(FixtureRecordsTest, EveryPrefixOfAnEventFileEndsOutOfRange) {
  const std::string data = testing::ReadWholeFile(
      FixturesRoot() / "pt_exploding/events/000000000000/000000000000_worker_0.tfevents");
  ASSERT_EQ(data.size(), 2453u);
  for (size_t n = 0; n <= data.size(); ++n) {
    const auto prefix = AsBytes(data).first(n);
    uint64_t offset = 0;
    size_t records = 0;
    while (true) {
      auto r = tfrecord::ParseRecord(prefix.subspan(offset), "f", offset);
      if (!r.ok()) {
        ASSERT_EQ(r.status().code(), StatusCode::kOutOfRange) << n << ": " << r.status().ToString();
        break;
      }
      offset += r->framed_size;
      ++records;
    }
    if (n == data.size()) {
      EXPECT_EQ(records, 9u);
    }
  }
}

}  // namespace
}  // namespace litmus
