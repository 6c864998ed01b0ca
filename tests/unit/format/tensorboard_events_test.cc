// litmus::tensorboard (format/tensorboard_events.h): the hand-written encoders decoded with the
// generated protos, file naming, the file_version record and Flush/clash behaviour of the writer.
#include "litmus/format/tensorboard_events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "litmus/format/proto/event.pb.h"
#include "litmus/format/tfrecord.h"
#include "support/temp_dir.h"

namespace litmus::tensorboard {
namespace {

format::proto::Event Parse(const std::string& payload) {
  format::proto::Event event;
  EXPECT_TRUE(event.ParseFromString(payload));
  return event;
}

// The records of `bytes`, each with a real payload CRC.
std::vector<format::proto::Event> Records(const std::string& bytes) {
  std::vector<format::proto::Event> out;
  size_t at = 0;
  while (at < bytes.size()) {
    auto record = tfrecord::ParseRecord(std::as_bytes(std::span(bytes.data() + at, bytes.size() - at)), "f", at);
    EXPECT_TRUE(record.ok()) << record.status().message();
    if (!record.ok()) break;
    EXPECT_TRUE(record->has_payload_crc);
    out.push_back(Parse(std::string(reinterpret_cast<const char*>(record->payload.data()), record->payload.size())));
    at += record->framed_size;
  }
  return out;
}

TEST(TensorBoardEvents, FileName) {
  EXPECT_EQ(EventFileName(1700000000, "host-1", ".litmus"), "events.out.tfevents.1700000000.host-1.litmus");
  EXPECT_EQ(EventFileName(42, "h", ""), "events.out.tfevents.0000000042.h");
}

TEST(TensorBoardEvents, FileVersion) {
  const format::proto::Event e = Parse(EncodeFileVersionEvent(1234.5));
  EXPECT_EQ(e.wall_time(), 1234.5);
  EXPECT_EQ(e.step(), 0);
  EXPECT_EQ(e.file_version(), "brain.Event:2");
}

TEST(TensorBoardEvents, Scalars) {
  for (int64_t step : {int64_t{0}, int64_t{7}, int64_t{-3}, std::numeric_limits<int64_t>::max()}) {
    const format::proto::Event e = Parse(EncodeScalarEvent(1.25, step, "litmus/R/mean |gradient|/a/b", 0.5f));
    EXPECT_EQ(e.wall_time(), 1.25);
    EXPECT_EQ(e.step(), step);
    ASSERT_EQ(e.summary().value_size(), 1);
    EXPECT_EQ(e.summary().value(0).tag(), "litmus/R/mean |gradient|/a/b");
    EXPECT_EQ(e.summary().value(0).simple_value(), 0.5f);
    EXPECT_FALSE(e.summary().value(0).has_metadata());
  }
  const format::proto::Event nan = Parse(EncodeScalarEvent(1, 1, "t", std::nanf("")));
  EXPECT_TRUE(std::isnan(nan.summary().value(0).simple_value()));
}

TEST(TensorBoardEvents, Text) {
  const format::proto::Event e = Parse(EncodeTextEvent(2, 9, "litmus/R/firing", "step 9: *fired*"));
  EXPECT_EQ(e.step(), 9);
  const auto& v = e.summary().value(0);
  EXPECT_EQ(v.tag(), "litmus/R/firing");
  ASSERT_EQ(v.metadata().plugin_data_size(), 1);
  EXPECT_EQ(v.metadata().plugin_data(0).plugin_name(), "text");
  EXPECT_EQ(v.metadata().plugin_data(0).content(), "");
  EXPECT_EQ(v.tensor().dtype(), format::proto::DT_STRING);
  EXPECT_TRUE(v.tensor().has_tensor_shape());
  EXPECT_EQ(v.tensor().tensor_shape().dim_size(), 0);
  ASSERT_EQ(v.tensor().string_val_size(), 1);
  EXPECT_EQ(v.tensor().string_val(0), "step 9: *fired*");
}

TEST(TensorBoardEvents, Histogram) {
  Histogram h;
  h.min = -1.5;
  h.max = 2.25;
  h.num = 3;
  h.sum = 0.75;
  h.sum_squares = 7.3125;
  h.bucket_limit = {-1.6, 0.0, 2.3};
  h.bucket = {0, 1, 2};
  const format::proto::Event e = Parse(EncodeHistogramEvent(3.5, 12, "weights/fc1.weight", h));
  EXPECT_EQ(e.wall_time(), 3.5);
  EXPECT_EQ(e.step(), 12);
  ASSERT_EQ(e.summary().value_size(), 1);
  const auto& v = e.summary().value(0);
  EXPECT_EQ(v.tag(), "weights/fc1.weight");
  ASSERT_TRUE(v.has_histo());
  EXPECT_FALSE(v.has_metadata());
  EXPECT_EQ(v.histo().min(), -1.5);
  EXPECT_EQ(v.histo().max(), 2.25);
  EXPECT_EQ(v.histo().num(), 3);
  EXPECT_EQ(v.histo().sum(), 0.75);
  EXPECT_EQ(v.histo().sum_squares(), 7.3125);
  EXPECT_THAT(v.histo().bucket_limit(), ::testing::ElementsAre(-1.6, 0.0, 2.3));
  EXPECT_THAT(v.histo().bucket(), ::testing::ElementsAre(0, 1, 2));
}

TEST(TensorBoardEvents, CleanTagIsTensorFlowsCleanTag) {
  EXPECT_EQ(CleanTag("weights/MLP_fc1.weight"), "weights/MLP_fc1.weight");
  EXPECT_EQ(CleanTag("dense/kernel:0"), "dense/kernel_0");
  EXPECT_EQ(CleanTag("//a b/c-d"), "a_b/c-d");
  EXPECT_EQ(CleanTag("x(1)[2]%"), "x_1__2__");
  EXPECT_EQ(CleanTag("\xc3\xa9t\xc3\xa9"), "\xc3\xa9t\xc3\xa9");  // UTF-8 letters stay
  EXPECT_EQ(CleanTag("///"), "");
}

TEST(TensorBoardEvents, CreateAtWritesTheFileWholeAtTheFirstFlush) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "000000000007_worker_0.tfevents").string();
  auto writer = EventFileWriter::CreateAt(Env::Default(), path);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  EXPECT_EQ((*writer)->path(), path);
  EXPECT_EQ(testing::ReadWholeFile(path), "");  // file_version is buffered too
  Histogram h;
  h.num = 1;
  h.bucket_limit = {0.0, 1e-12};
  h.bucket = {0, 1};
  (*writer)->AddHistogram(7, "h", h, 1.0);
  (*writer)->AddScalar(7, "s", 2.0f, 1.0);
  ASSERT_TRUE((*writer)->Close().ok());
  const auto records = Records(testing::ReadWholeFile(path));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].file_version(), "brain.Event:2");
  EXPECT_EQ(records[1].summary().value(0).histo().num(), 1);
  EXPECT_EQ(records[2].summary().value(0).simple_value(), 2.0f);
  // A folder that does not exist is the Env's error, naming the path.
  auto missing = EventFileWriter::CreateAt(Env::Default(), (dir.path() / "no" / "f.tfevents").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no/f.tfevents"), std::string::npos) << missing.status().message();
}

// AddScalar frames its record in place (no temporaries): byte for byte the framed
// EncodeScalarEvent, whatever the sizes of the varints (steps 0, negative, large; tags of 0, 127,
// 128 and 300 bytes, odd bytes included).
TEST(TensorBoardEvents, AddScalarWritesTheFramedEncodedEvent) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "s.tfevents").string();
  auto writer = EventFileWriter::CreateAt(Env::Default(), path);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  std::string expected = tfrecord::FrameRecord(EncodeFileVersionEvent(0), tfrecord::FooterKind::kPayloadCrc);
  const size_t version_size = expected.size();
  const std::string odd("a\0b/\x01 \"\xc3\xa9", 9);  // (tags are proto strings: valid UTF-8)
  const std::vector<std::string> tags = {"", "t", std::string(127, 'x'), std::string(128, 'y'),
                                         std::string(300, 'z'), odd};
  const std::vector<int64_t> steps = {0, 1, 127, 128, -1, std::numeric_limits<int64_t>::max(),
                                      std::numeric_limits<int64_t>::min()};
  size_t count = 0;
  for (const std::string& tag : tags) {
    for (const int64_t step : steps) {
      const float value = static_cast<float>(count++) * 0.5f - 3.0f;
      (*writer)->AddScalar(step, tag, value, 1700000000.25);
      expected += tfrecord::FrameRecord(EncodeScalarEvent(1700000000.25, step, tag, value),
                                        tfrecord::FooterKind::kPayloadCrc);
    }
  }
  ASSERT_TRUE((*writer)->Close().ok());
  const std::string bytes = testing::ReadWholeFile(path);
  ASSERT_EQ(bytes.size(), expected.size());
  // (the file_version record's wall time is the writer's clock)
  EXPECT_EQ(bytes.substr(version_size), expected.substr(version_size));
  const auto records = Records(bytes);
  ASSERT_EQ(records.size(), 1 + tags.size() * steps.size());
  EXPECT_EQ(records.back().summary().value(0).tag(), odd);
  EXPECT_EQ(records.back().step(), std::numeric_limits<int64_t>::min());
}

TEST(TensorBoardEvents, WriterFlushesWholeRecordsAndNeverReusesAFile) {
  testing::TempDir dir;
  const std::string run = (dir.path() / "a" / "litmus").string();
  auto writer = EventFileWriter::Create(Env::Default(), run, ".litmus");
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  const std::string path = (*writer)->path();
  EXPECT_EQ(std::filesystem::path(path).parent_path(), run);
  // The file_version record is in the file at once.
  auto records = Records(testing::ReadWholeFile(path));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].file_version(), "brain.Event:2");

  (*writer)->AddScalar(3, "s", 1.5f);
  (*writer)->AddText(3, "t", "hello");
  EXPECT_GT((*writer)->buffered_bytes(), 0u);
  EXPECT_EQ(Records(testing::ReadWholeFile(path)).size(), 1u);  // buffered until Flush
  ASSERT_TRUE((*writer)->Flush().ok());
  EXPECT_EQ((*writer)->buffered_bytes(), 0u);
  records = Records(testing::ReadWholeFile(path));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].summary().value(0).simple_value(), 1.5f);
  EXPECT_EQ(records[2].summary().value(0).tensor().string_val(0), "hello");

  // A second writer in the same second gets a file of its own.
  auto second = EventFileWriter::Create(Env::Default(), run, ".litmus");
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_NE((*second)->path(), path);
  EXPECT_TRUE((*second)->Close().ok());
  EXPECT_TRUE((*writer)->Close().ok());
  EXPECT_TRUE((*writer)->Close().ok());  // idempotent
  EXPECT_EQ(Records(testing::ReadWholeFile(path)).size(), 3u);
}

TEST(TensorBoardEvents, WriterWritesAFullBufferOfWholeRecordsWithoutFlush) {
  testing::TempDir dir;
  auto writer = EventFileWriter::Create(Env::Default(), (dir.path() / "litmus").string(), ".litmus");
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  const std::string tag(200, 't');  // (~230 bytes a record)
  int added = 0;
  while (std::filesystem::file_size((*writer)->path()) < EventFileWriter::kFlushBytes) {
    ASSERT_LT(added, 100000);
    (*writer)->AddScalar(added, tag, static_cast<float>(added));
    ++added;
    ASSERT_LT((*writer)->buffered_bytes(), EventFileWriter::kFlushBytes);
  }
  // What was written holds whole records only (a live TensorBoard reads it as it grows).
  const auto written = Records(testing::ReadWholeFile((*writer)->path()));
  ASSERT_GT(written.size(), 1u);
  EXPECT_EQ(written.back().summary().value(0).simple_value(), static_cast<float>(written.size() - 2));
  ASSERT_TRUE((*writer)->Close().ok());
  const auto all = Records(testing::ReadWholeFile((*writer)->path()));
  ASSERT_EQ(all.size(), static_cast<size_t>(1 + added));
  for (int i = 0; i < added; ++i) ASSERT_EQ(all[static_cast<size_t>(1 + i)].step(), i);
}

TEST(TensorBoardEvents, AFailedWriteOfAFullBufferIsReportedByTheNextFlush) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  auto writer = EventFileWriter::CreateAt(Env::Default(), "/dev/full");
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  const std::string tag(200, 't');
  for (size_t bytes = 0; bytes <= EventFileWriter::kFlushBytes; bytes += 230) (*writer)->AddScalar(1, tag, 1.0f);
  ASSERT_LT((*writer)->buffered_bytes(), EventFileWriter::kFlushBytes);  // (a write was attempted)
  const Status flushed = (*writer)->Flush();
  ASSERT_FALSE(flushed.ok());
  EXPECT_NE(flushed.message().find("/dev/full"), std::string::npos) << flushed.message();
  EXPECT_TRUE((*writer)->Flush().ok());  // reported once; nothing buffered since
}

TEST(TensorBoardEvents, UncreatableFolderNamesThePath) {
  testing::TempDir dir;
  dir.WriteFile("file", "x");
  auto writer = EventFileWriter::Create(Env::Default(), (dir.path() / "file" / "litmus").string(), ".litmus");
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find((dir.path() / "file").string()), std::string::npos)
      << writer.status().message();
}

}  // namespace
}  // namespace litmus::tensorboard
