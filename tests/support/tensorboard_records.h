// Test helper for TensorBoard event files (the runner's --tensorboard-dir and the writer's
// export): every record decoded with the project's protos, its framing and CRCs checked with
// GoogleTest expectations. Header-only (the tests that use it link gtest, the format library and
// its protos).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "litmus/format/crc32c.h"
#include "litmus/format/proto/event.pb.h"
#include "litmus/format/tfrecord.h"
#include "support/temp_dir.h"

namespace litmus::testing {

// Every record of `file`, in order. Each must have a valid length CRC and a real payload CRC
// (not smdebug's placeholder: footer == masked CRC-32C of the payload, checked here spelled
// out), parse as an Event, and the records must cover the file exactly.
inline std::vector<format::proto::Event> DecodeTensorBoardFile(const std::filesystem::path& file) {
  const std::string bytes = ReadWholeFile(file);
  std::vector<format::proto::Event> events;
  size_t at = 0;
  while (at < bytes.size()) {
    const auto buf = std::as_bytes(std::span(bytes.data() + at, bytes.size() - at));
    StatusOr<tfrecord::RecordView> record = tfrecord::ParseRecord(buf, file.string(), at);
    EXPECT_TRUE(record.ok()) << record.status().message();
    if (!record.ok()) break;
    EXPECT_TRUE(record->has_payload_crc) << "placeholder footer in " << file << " at offset " << at;
    uint32_t footer = 0;
    for (int i = 3; i >= 0; --i) footer = (footer << 8) | static_cast<uint8_t>(bytes[at + record->framed_size - 4 + i]);
    EXPECT_EQ(footer, crc32c::Mask(crc32c::Value(record->payload.data(), record->payload.size())))
        << file << " offset " << at;
    format::proto::Event event;
    EXPECT_TRUE(event.ParseFromArray(record->payload.data(), static_cast<int>(record->payload.size())))
        << file << " offset " << at;
    events.push_back(std::move(event));
    at += record->framed_size;
  }
  EXPECT_EQ(at, bytes.size()) << "trailing bytes in " << file;
  return events;
}

}  // namespace litmus::testing
