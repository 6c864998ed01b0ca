// TFRecord framing of smdebug event files. A record is:
//   u64 LE  N = payload length
//   u32 LE  masked_crc32c(the 8 length bytes as stored)
//   N bytes payload (a serialized Event)
//   u32 LE  footer: masked_crc32c(payload), or smdebug's constant placeholder 0x062DC0B3
// so a framed record is N + 16 bytes. See docs/trial-format.md. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "litmus/status.h"

namespace litmus::tfrecord {

inline constexpr size_t kHeaderSize = 12;  // length + length CRC
inline constexpr size_t kFooterSize = 4;   // payload CRC or placeholder
inline constexpr size_t kFramingOverhead = kHeaderSize + kFooterSize;

enum class FooterKind { kPlaceholder, kPayloadCrc };

// The little-endian fields of the framing: the length (8 bytes) and the masked CRCs (4 bytes),
// read from exactly that many bytes at `p`. Inline: every record read decodes them (out of line,
// a call per field showed in profiles of the reader; inlined, each is one load).
inline uint64_t DecodeLe64(const std::byte* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | std::to_integer<uint64_t>(p[i]);
  return v;
}
inline uint32_t DecodeLe32(const std::byte* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | std::to_integer<uint32_t>(p[i]);
  return v;
}

// Writes the 12-byte header for a payload of `payload_size` bytes into `out`.
void EncodeHeader(uint64_t payload_size, std::byte out[kHeaderSize]);
// Writes the 4-byte footer: the placeholder, or Mask(payload_crc) where payload_crc is
// crc32c::Value of the payload (callers that stream the payload compute it with Extend).
void EncodeFooter(FooterKind kind, uint32_t payload_crc, std::byte out[kFooterSize]);
// Convenience: a whole framed record in one string.
std::string FrameRecord(std::string_view payload, FooterKind kind);

// A record located inside a byte buffer: the payload view borrows from that buffer.
struct RecordView {
  std::span<const std::byte> payload;
  uint64_t framed_size = 0;          // payload.size() + kFramingOverhead
  bool has_payload_crc = false;      // footer was a verified real CRC (not the placeholder)
};

// Parses the record that starts at buf[0]. `file_name` and `file_offset` (the offset of buf[0]
// in that file) only go into error messages.
//   OK          -> a complete record whose length CRC and footer check out.
//   OutOfRange  -> buf ends before the record does (clean end if buf is empty, else a partial
//                  record that may still be being written): "not yet available, poll again".
//   DataLoss    -> bad length CRC, or a footer that is neither the placeholder nor the payload's
//                  masked CRC. The message names file and offset.
// Never reads beyond buf and never allocates: a huge length only ever yields OutOfRange.
StatusOr<RecordView> ParseRecord(std::span<const std::byte> buf, std::string_view file_name,
                                 uint64_t file_offset);

// Like ParseRecord, but for an index-addressed read: `buf` must hold exactly one framed record
// (the index's `length` bytes). A buffer shorter than the framed length the header announces is
// OutOfRange; one that is longer (the index spans more than one record) is DataLoss.
StatusOr<RecordView> ParseExactRecord(std::span<const std::byte> buf, std::string_view file_name,
                                      uint64_t file_offset);

}  // namespace litmus::tfrecord
