// EventSink: appends framed TFRecord records (docs/trial-format.md §2) to one event .tmp file at a
// time, through Env. Small records are coalesced in a buffer and written with one Append; a record
// with a large tensor content is written with one gather Append straight from the caller's memory
// (buffered bytes + header + prefix, content, suffix + footer), so tensor data is never copied.
// Not thread-safe: owned by one Writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "litmus/format/env.h"
#include "litmus/format/event_codec.h"
#include "litmus/status.h"

namespace litmus::writer::internal {

class EventSink {
 public:
  // Contents of at least this many bytes are written from the caller's buffer.
  static constexpr size_t kDirectWriteThreshold = 64 * 1024;

  EventSink(Env* env, size_t buffer_bytes, bool payload_crc);

  bool is_open() const { return file_ != nullptr; }
  // Creates (truncating) `path`. REQUIRES: !is_open().
  Status Open(const std::string& path);
  // Frames `event` (placeholder footer or payload CRC) and appends it. On success *offset and
  // *framed_length locate the record in the file. REQUIRES: is_open().
  Status Append(const EncodedEvent& event, uint64_t* offset, uint64_t* framed_length);
  // Writes the buffered bytes and closes the file. REQUIRES: is_open().
  Status Finish();
  // Closes the file if open and drops buffered bytes, without writing them.
  void Discard();

 private:
  Status Flush();

  Env* env_;
  size_t buffer_bytes_;
  bool payload_crc_;
  std::unique_ptr<WritableFile> file_;
  std::string path_;
  std::string buffer_;
  uint64_t offset_ = 0;  // bytes appended so far, buffered ones included
};

}  // namespace litmus::writer::internal
