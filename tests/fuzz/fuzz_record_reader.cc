// libFuzzer target: walks the input as an event file (ParseRecord from offset 0 until the first
// error), decodes every payload with DecodeEvent, and re-checks each record with
// ParseExactRecord. The whole input is also decoded as a bare payload, so mutations reach the
// wire decoder without first having to forge CRCs. Inputs are untrusted bytes; the target must
// never crash, leak or read out of bounds. Single-threaded.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "litmus/format/event_codec.h"
#include "litmus/format/tfrecord.h"

namespace {

// Decodes `payload`; every view of a successful decode must point into it.
void DecodeAndCheck(std::span<const std::byte> payload) {
  auto event = litmus::DecodeEvent(payload);
  if (!event.ok()) return;
  const std::byte* begin = payload.data();
  const std::byte* end = begin + payload.size();
  auto inside = [&](std::span<const std::byte> s) {
    return s.empty() || (s.data() >= begin && s.data() + s.size() <= end);
  };
  auto inside_str = [&](std::string_view s) {
    return inside(std::as_bytes(std::span(s.data(), s.size())));
  };
  if (!inside_str(event->tag) || !inside(event->content) || !inside(event->packed_vals))
    std::abort();
  for (std::string_view s : event->string_val) {
    if (!inside_str(s)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto buf = std::as_bytes(std::span(data, size));
  DecodeAndCheck(buf);
  uint64_t offset = 0;
  while (offset <= buf.size()) {
    auto record = litmus::tfrecord::ParseRecord(buf.subspan(offset), "fuzz.tfevents", offset);
    if (!record.ok()) break;
    const auto framed = buf.subspan(offset, record->framed_size);
    // Invariants: the payload lies inside the record, and exact parsing of the same bytes agrees.
    auto exact = litmus::tfrecord::ParseExactRecord(framed, "fuzz.tfevents", offset);
    if (!exact.ok() || exact->payload.data() != record->payload.data() ||
        record->framed_size != record->payload.size() + litmus::tfrecord::kFramingOverhead) {
      std::abort();
    }
    DecodeAndCheck(record->payload);
    offset += record->framed_size;
  }
  return 0;
}
