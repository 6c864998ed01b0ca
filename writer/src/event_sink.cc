// EventSink: buffered, zero-copy-for-large-content record appends; see event_sink.h.
// Not thread-safe.
#include "event_sink.h"

#include <array>
#include <utility>

#include "litmus/format/crc32c.h"
#include "litmus/format/tfrecord.h"

namespace litmus::writer::internal {
namespace {

std::span<const std::byte> Bytes(std::string_view s) { return std::as_bytes(std::span(s)); }

// Names the file in an I/O error unless the Env already did (LocalEnv does).
Status WithPath(const Status& status, const std::string& path) {
  if (status.ok() || status.message().find(path) != std::string::npos) return status;
  return status.WithContext(path);
}

}  // namespace

EventSink::EventSink(Env* env, size_t buffer_bytes, bool payload_crc)
    : env_(env), buffer_bytes_(buffer_bytes), payload_crc_(payload_crc) {}

Status EventSink::Open(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(file_, env_->NewWritableFile(path));
  path_ = path;
  buffer_.clear();
  buffer_.reserve(buffer_bytes_ + 4096);
  offset_ = 0;
  return OkStatus();
}

Status EventSink::Append(const EncodedEvent& event, uint64_t* offset, uint64_t* framed_length) {
  const uint64_t payload_size = event.payload_size();
  std::array<std::byte, tfrecord::kHeaderSize> header;
  tfrecord::EncodeHeader(payload_size, header.data());
  uint32_t crc = 0;
  if (payload_crc_) {
    crc = crc32c::Extend(0, event.prefix.data(), event.prefix.size());
    crc = crc32c::Extend(crc, event.content.data(), event.content.size());
    crc = crc32c::Extend(crc, event.suffix.data(), event.suffix.size());
  }
  std::array<std::byte, tfrecord::kFooterSize> footer;
  tfrecord::EncodeFooter(payload_crc_ ? tfrecord::FooterKind::kPayloadCrc
                                      : tfrecord::FooterKind::kPlaceholder,
                         crc, footer.data());

  const auto append_to_buffer = [this](std::span<const std::byte> bytes) {
    buffer_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  };
  *offset = offset_;
  *framed_length = payload_size + tfrecord::kFramingOverhead;
  append_to_buffer(header);
  append_to_buffer(Bytes(event.prefix));
  if (event.content.size() >= kDirectWriteThreshold) {
    // One gather write: everything buffered so far, the content from the caller's memory, and
    // the record's tail.
    std::string tail = event.suffix;
    tail.append(reinterpret_cast<const char*>(footer.data()), footer.size());
    const std::span<const std::byte> parts[] = {Bytes(buffer_), event.content, Bytes(tail)};
    Status status = file_->Append(parts);
    buffer_.clear();
    if (!status.ok()) return WithPath(status, path_);
  } else {
    append_to_buffer(event.content);
    append_to_buffer(Bytes(event.suffix));
    append_to_buffer(footer);
    if (buffer_.size() >= buffer_bytes_) LITMUS_RETURN_IF_ERROR(Flush());
  }
  offset_ += *framed_length;
  return OkStatus();
}

Status EventSink::Flush() {
  if (buffer_.empty()) return OkStatus();
  Status status = file_->Append(Bytes(buffer_));
  buffer_.clear();
  if (!status.ok()) return WithPath(status, path_);
  return OkStatus();
}

Status EventSink::Finish() {
  Status status = Flush();
  Status close_status = file_->Close();
  file_.reset();
  LITMUS_RETURN_IF_ERROR(status);
  return WithPath(close_status, path_);
}

void EventSink::Discard() {
  if (file_ != nullptr) {
    // The file is about to be removed; a failure to close it changes nothing for the caller.
    (void)file_->Close();
    file_.reset();
  }
  buffer_.clear();
}

}  // namespace litmus::writer::internal
