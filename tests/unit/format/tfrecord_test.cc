// Tests for TFRecord framing: encoding, the OutOfRange/DataLoss split on truncated and corrupt
// records, placeholder vs real payload CRCs, huge lengths, and exact (index-addressed) parsing.
#include "litmus/format/tfrecord.h"

#include <gtest/gtest.h>

#include <cstring>

#include "litmus/format/crc32c.h"
#include "support/temp_dir.h"

namespace litmus::tfrecord {
namespace {

std::span<const std::byte> Bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

constexpr std::string_view kFile = "events/000000000000/000000000000_worker_0.tfevents";

TEST(TfRecordTest, EncodeHeaderMatchesSpecVector) {
  std::byte header[kHeaderSize];
  EncodeHeader(636, header);
  const unsigned char expected[kHeaderSize] = {0x7c, 0x02, 0,    0,    0,    0,
                                               0,    0,    0xd5, 0x43, 0xe8, 0x37};
  EXPECT_EQ(std::memcmp(header, expected, kHeaderSize), 0);
  EncodeHeader(72, header);
  const unsigned char expected72[kHeaderSize] = {0x48, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0x92, 0x48, 0x9d};
  EXPECT_EQ(std::memcmp(header, expected72, kHeaderSize), 0);
}

TEST(TfRecordTest, EncodeFooter) {
  std::byte footer[kFooterSize];
  EncodeFooter(FooterKind::kPlaceholder, 0x12345678u, footer);
  const unsigned char placeholder[4] = {0xb3, 0xc0, 0x2d, 0x06};
  EXPECT_EQ(std::memcmp(footer, placeholder, 4), 0);
  EncodeFooter(FooterKind::kPayloadCrc, 0x099310FBu, footer);  // spec §2.5 real footer
  const unsigned char real[4] = {0xfe, 0xfd, 0x78, 0xc4};
  EXPECT_EQ(std::memcmp(footer, real, 4), 0);
}

TEST(TfRecordTest, FrameAndParseRoundTrip) {
  for (FooterKind kind : {FooterKind::kPlaceholder, FooterKind::kPayloadCrc}) {
    for (const std::string& payload :
         {std::string(), std::string("hello"), std::string(1000, 'x')}) {
      const std::string framed = FrameRecord(payload, kind);
      ASSERT_EQ(framed.size(), payload.size() + kFramingOverhead);
      auto view = ParseRecord(Bytes(framed), kFile, 0);
      ASSERT_TRUE(view.ok()) << view.status().ToString();
      EXPECT_EQ(view->framed_size, framed.size());
      EXPECT_EQ(view->has_payload_crc, kind == FooterKind::kPayloadCrc);
      EXPECT_EQ(
          std::string(reinterpret_cast<const char*>(view->payload.data()), view->payload.size()),
          payload);
      EXPECT_TRUE(ParseExactRecord(Bytes(framed), kFile, 0).ok());
    }
  }
}

TEST(TfRecordTest, WalksConcatenatedRecords) {
  const std::string file =
      FrameRecord("a", FooterKind::kPlaceholder) + FrameRecord("bcd", FooterKind::kPayloadCrc);
  auto all = Bytes(file);
  auto first = ParseRecord(all, kFile, 0);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->framed_size, 17u);
  auto second = ParseRecord(all.subspan(17), kFile, 17);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->payload.size(), 3u);
  auto end = ParseRecord(all.subspan(17 + 19), kFile, 36);
  EXPECT_EQ(end.status().code(), StatusCode::kOutOfRange);
  // Index-addressed read spanning both records is corruption, not a partial record.
  auto exact = ParseExactRecord(all, kFile, 0);
  EXPECT_EQ(exact.status().code(), StatusCode::kDataLoss) << exact.status().ToString();
}

TEST(TfRecordTest, TruncationIsOutOfRange) {
  const std::string framed = FrameRecord("some payload bytes", FooterKind::kPlaceholder);
  // Every proper prefix: empty, partial header, partial payload, partial footer.
  for (size_t n = 0; n < framed.size(); ++n) {
    const std::string prefix = framed.substr(0, n);
    auto r = ParseRecord(Bytes(prefix), kFile, 500);
    ASSERT_EQ(r.status().code(), StatusCode::kOutOfRange) << n << ": " << r.status().ToString();
    auto exact = ParseExactRecord(Bytes(prefix), kFile, 500);
    ASSERT_EQ(exact.status().code(), StatusCode::kOutOfRange) << n;
  }
}

TEST(TfRecordTest, BadLengthCrcIsDataLossNamingFileAndOffset) {
  std::string framed = FrameRecord("payload", FooterKind::kPlaceholder);
  framed[9] ^= 0x01;
  auto r = ParseRecord(Bytes(framed), kFile, 1137);
  ASSERT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.status().message(), std::string(kFile) + ": bad length CRC at offset 1137");
  // A flipped length bit is caught by the same check (and never read as a length).
  framed = FrameRecord("payload", FooterKind::kPlaceholder);
  framed[0] ^= 0x40;
  EXPECT_EQ(ParseRecord(Bytes(framed), kFile, 0).status().code(), StatusCode::kDataLoss);
}

TEST(TfRecordTest, BadPayloadCrcIsDataLoss) {
  std::string framed = FrameRecord("payload", FooterKind::kPayloadCrc);
  framed[kHeaderSize + 2] ^= 0x20;  // corrupt the payload under a real CRC
  auto r = ParseRecord(Bytes(framed), kFile, 42);
  ASSERT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.status().message(), std::string(kFile) + ": bad payload CRC at offset 42");
  // A footer that is neither the placeholder nor the CRC.
  framed = FrameRecord("payload", FooterKind::kPlaceholder);
  framed.back() ^= 0x01;
  EXPECT_EQ(ParseRecord(Bytes(framed), kFile, 0).status().code(), StatusCode::kDataLoss);
}

TEST(TfRecordTest, PlaceholderAcceptedWhateverThePayload) {
  std::string framed = FrameRecord("payload", FooterKind::kPlaceholder);
  framed[kHeaderSize] ^= 0x01;  // the placeholder does not cover the payload
  auto r = ParseRecord(Bytes(framed), kFile, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_payload_crc);
}

TEST(TfRecordTest, HugeLengthIsOutOfRangeWithoutAllocating) {
  for (uint64_t length : {uint64_t{1} << 63, ~uint64_t{0}, ~uint64_t{0} - 15, uint64_t{1} << 40}) {
    std::string buf(kHeaderSize + 100, 'z');
    std::byte header[kHeaderSize];
    EncodeHeader(length, header);  // a valid length CRC: only the size check can stop it
    std::memcpy(buf.data(), header, kHeaderSize);
    auto r = ParseRecord(Bytes(buf), kFile, 0);
    EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange) << length;
    EXPECT_EQ(ParseExactRecord(Bytes(buf), kFile, 0).status().code(), StatusCode::kOutOfRange);
  }
}

TEST(TfRecordTest, ExactRecordWithTrailingBytesIsDataLoss) {
  const std::string framed = FrameRecord("payload", FooterKind::kPlaceholder) + "X";
  auto r = ParseExactRecord(Bytes(framed), kFile, 7);
  ASSERT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find(std::string(kFile) + ": "), std::string::npos);
  EXPECT_NE(r.status().message().find("at offset 7"), std::string::npos);
  // ParseRecord itself is happy to stop at the record's end.
  EXPECT_TRUE(ParseRecord(Bytes(framed), kFile, 7).ok());
}

TEST(TfRecordTest, SpecWorkedExampleRecord) {
  // pt_exploding step 0, offset 1137, 88 bytes (spec §2.6).
  const std::string path = testing::FixturePath("pt_exploding").string() +
                           "/events/000000000000/000000000000_worker_0.tfevents";
  const std::string file = testing::ReadWholeFile(path);
  ASSERT_EQ(file.size(), 2453u);
  const std::string record = file.substr(1137, 88);
  auto r = ParseExactRecord(Bytes(record), path, 1137);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->payload.size(), 72u);
  EXPECT_FALSE(r->has_payload_crc);
}

TEST(TfRecordTest, RealPayloadCrcFixture) {
  // synthetic_dtypes step 5: shapes/scalar_f32 at offset 1162 has a real footer fe fd 78 c4.
  const std::string file =
      testing::ReadWholeFile(testing::FixturePath("synthetic_dtypes") /
                             "events/000000000005/000000000005_worker_0.tfevents");
  const std::string record = file.substr(1162, 91);
  auto r = ParseExactRecord(Bytes(record), "x", 1162);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->has_payload_crc);
  EXPECT_EQ(crc32c::Value(r->payload.data(), r->payload.size()), 0x099310FBu);
}

}  // namespace
}  // namespace litmus::tfrecord
