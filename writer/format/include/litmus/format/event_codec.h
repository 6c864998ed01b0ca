// Encoding and zero-copy decoding of the smdebug `Event` records that carry one tensor.
// The decoder is a hand-written protobuf wire parser for the fields of docs/trial-format.md
// (Event > Summary > Value > TensorProto / SummaryMetadata with *repeated* plugin_data); it is
// tested against the generated classes of proto/. Views borrow from the payload buffer.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/format/dtype.h"
#include "litmus/format/mode.h"
#include "litmus/status.h"

namespace litmus {

// What one decoded Event holds. Only the first Summary.Value is used (smdebug writes one).
struct EventView {
  double wall_time = 0;
  int64_t step = 0;                       // Event.step (global step; 0 when omitted)
  std::string_view tag;                   // Summary.Value.tag
  // plugin_data entries "mode" and "mode_step", if present (smdebug defaults: GLOBAL, step).
  std::optional<Mode> mode;
  std::optional<int64_t> mode_step;
  // Value.simple_value for TensorBoard-style scalars (never indexed by smdebug).
  std::optional<float> simple_value;

  bool has_tensor = false;                // Value.tensor present
  int32_t raw_dtype = 0;                  // TensorProto.dtype as stored
  std::vector<int64_t> shape;             // dims, outermost first; empty = 0-d
  std::span<const std::byte> content;     // tensor_content (empty if absent)
  std::vector<std::string_view> string_val;
  // TF *_val fallbacks, used only when content is empty (other writers than smdebug).
  std::span<const std::byte> packed_vals; // the packed field matching dtype (float_val, ...)
  int packed_field = 0;                   // its field number (5,6,7,9,10,11,12,13), 0 if none
};

// Decodes a serialized Event. DataLoss on malformed wire data (truncated varints, lengths past
// the end, wrong wire types for known fields, groups, a plugin_data mode/mode_step that is not a
// number). Unknown fields are skipped. Merging follows protobuf (last scalar wins, repeated
// fields append, a oneof member replaces its siblings). The *_val field matching the dtype must
// be one packed run: written unpacked or split into several runs it gives Unimplemented.
StatusOr<EventView> DecodeEvent(std::span<const std::byte> payload);

// What the writer puts in one tensor record. `content` is not copied by the encoder.
struct TensorEventSpec {
  double wall_time = 0;
  int64_t step = 0;                       // global step; omitted on the wire when 0 (proto3)
  std::string_view tag;
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  DType dtype = DType::kFloat32;          // kInvalid for strings (as smdebug writes them)
  std::span<const int64_t> shape;
  std::span<const std::byte> content;     // numeric data, LE C order; empty => field omitted
  std::span<const std::string_view> strings;  // string tensors only (1-D)
};

// An encoded Event split around its tensor_content so the content can be written straight from
// the caller's buffer: payload = prefix + content + suffix. Byte-identical to what smdebug writes:
// Event{wall_time, step, summary{value{tag, tensor{dtype, tensor_shape{dim{size, name="<tag>_<size>"}},
// tensor_content | string_val...}, metadata{plugin_data[mode_step], plugin_data[mode]}}}}.
struct EncodedEvent {
  std::string prefix;
  std::span<const std::byte> content;
  std::string suffix;
  size_t payload_size() const { return prefix.size() + content.size() + suffix.size(); }
};
EncodedEvent EncodeTensorEvent(const TensorEventSpec& spec);

}  // namespace litmus
