// TFRecord framing: header/footer encoding and bounds-checked record parsing over a byte buffer.
// Nothing here allocates from a length read off the wire. Pure functions; thread-safe.
#include "litmus/format/tfrecord.h"

#include <cstring>

#include "litmus/format/crc32c.h"

namespace litmus::tfrecord {

namespace {

void EncodeLe64(uint64_t v, std::byte* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(v >> (8 * i));
}
void EncodeLe32(uint32_t v, std::byte* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::byte>(v >> (8 * i));
}

Status Error(StatusCode code, std::string_view file_name, std::string_view what, uint64_t offset) {
  // "<file>: <what> at offset <n>"
  std::string message(file_name);
  message += ": ";
  message += what;
  message += " at offset ";
  message += std::to_string(offset);
  return Status(code, std::move(message));
}

}  // namespace

void EncodeHeader(uint64_t payload_size, std::byte out[kHeaderSize]) {
  EncodeLe64(payload_size, out);
  EncodeLe32(crc32c::Mask(crc32c::Value(out, 8)), out + 8);
}

void EncodeFooter(FooterKind kind, uint32_t payload_crc, std::byte out[kFooterSize]) {
  switch (kind) {
    case FooterKind::kPlaceholder:
      EncodeLe32(crc32c::kPlaceholderMaskedCrc, out);
      return;
    case FooterKind::kPayloadCrc:
      EncodeLe32(crc32c::Mask(payload_crc), out);
      return;
  }
}

std::string FrameRecord(std::string_view payload, FooterKind kind) {
  std::string out(payload.size() + kFramingOverhead, '\0');
  auto* bytes = reinterpret_cast<std::byte*>(out.data());
  EncodeHeader(payload.size(), bytes);
  std::memcpy(bytes + kHeaderSize, payload.data(), payload.size());
  const uint32_t crc =
      kind == FooterKind::kPayloadCrc ? crc32c::Value(payload.data(), payload.size()) : 0;
  EncodeFooter(kind, crc, bytes + kHeaderSize + payload.size());
  return out;
}

StatusOr<RecordView> ParseRecord(std::span<const std::byte> buf, std::string_view file_name,
                                 uint64_t file_offset) {
  if (buf.empty()) return Error(StatusCode::kOutOfRange, file_name, "end of file", file_offset);
  if (buf.size() < kHeaderSize) {
    return Error(StatusCode::kOutOfRange, file_name, "partial record header", file_offset);
  }
  const uint32_t length_crc = DecodeLe32(buf.data() + 8);
  if (crc32c::Unmask(length_crc) != crc32c::Value(buf.data(), 8)) {
    return Error(StatusCode::kDataLoss, file_name, "bad length CRC", file_offset);
  }
  const uint64_t length = DecodeLe64(buf.data());
  // Compare without computing length + 16, which could overflow for a (CRC-valid) huge length.
  const uint64_t available = buf.size() - kHeaderSize;
  if (length > available || available - length < kFooterSize) {
    return Error(StatusCode::kOutOfRange, file_name,
                 "partial record (length " + std::to_string(length) + ", " +
                     std::to_string(buf.size()) + " bytes available)",
                 file_offset);
  }
  RecordView view;
  view.payload = buf.subspan(kHeaderSize, static_cast<size_t>(length));
  view.framed_size = length + kFramingOverhead;
  const uint32_t footer = DecodeLe32(buf.data() + kHeaderSize + length);
  if (footer != crc32c::kPlaceholderMaskedCrc) {
    if (crc32c::Mask(crc32c::Value(view.payload.data(), view.payload.size())) != footer) {
      return Error(StatusCode::kDataLoss, file_name, "bad payload CRC", file_offset);
    }
    view.has_payload_crc = true;
  }
  return view;
}

StatusOr<RecordView> ParseExactRecord(std::span<const std::byte> buf, std::string_view file_name,
                                      uint64_t file_offset) {
  LITMUS_ASSIGN_OR_RETURN(RecordView view, ParseRecord(buf, file_name, file_offset));
  if (view.framed_size != buf.size()) {
    return Error(StatusCode::kDataLoss, file_name,
                 "indexed length " + std::to_string(buf.size()) +
                     " holds more than the record of " + std::to_string(view.framed_size) +
                     " bytes",
                 file_offset);
  }
  return view;
}

}  // namespace litmus::tfrecord
