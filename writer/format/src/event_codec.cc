// Hand-written protobuf wire codec for smdebug's tensor Events. The decoder follows protobuf's
// merge rules where they matter (last scalar wins, repeated fields concatenate, oneof members
// replace each other) so it agrees with the generated classes; views borrow from the payload.
// The encoder emits fields in field-number order with proto3 zero-omission, exactly as protobuf
// (and therefore smdebug) serializes them. Pure functions; thread-safe.
#include "litmus/format/event_codec.h"

#include <array>
#include <bit>
#include <cstring>
#include <limits>

namespace litmus {
namespace {

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// Field numbers (TensorFlow's, see proto/).
constexpr uint32_t kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventGraphDef = 4,
                   kEventSummary = 5;
constexpr uint32_t kSummaryValue = 1;
constexpr uint32_t kValueTag = 1, kValueSimpleValue = 2, kValueHisto = 5, kValueTensor = 8,
                   kValueMetadata = 9;
constexpr uint32_t kMetadataPluginData = 1;
constexpr uint32_t kPluginName = 1, kPluginContent = 2;
constexpr uint32_t kTensorDtype = 1, kTensorShape = 2, kTensorContent = 4, kTensorStringVal = 8;
constexpr uint32_t kShapeDim = 2;
constexpr uint32_t kDimSize = 1, kDimName = 2;
constexpr uint32_t kFirstValField = 5, kLastValField = 13;  // float_val .. half_val

// Element wire type of the numeric *_val fields 5..13 (8 = string_val is not numeric).
constexpr WireType ValElementWireType(uint32_t field) {
  switch (field) {
    case 5:
    case 9:
      return kFixed32;  // float_val, scomplex_val
    case 6:
    case 12:
      return kFixed64;  // double_val, dcomplex_val
    default:
      return kVarint;  // int_val, int64_val, bool_val, half_val
  }
}

// The *_val field TensorFlow uses for a dtype's values; 0 when there is none litmus reads.
int ValFieldForDtype(int32_t raw_dtype) {
  const std::optional<DType> dtype = DTypeFromProto(raw_dtype);
  if (!dtype) return 0;
  switch (*dtype) {
    case DType::kFloat32:
      return 5;
    case DType::kFloat64:
      return 6;
    case DType::kInt32:
    case DType::kInt16:
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kUInt16:
      return 7;
    case DType::kComplex64:
      return 9;
    case DType::kInt64:
      return 10;
    case DType::kBool:
      return 11;
    case DType::kComplex128:
      return 12;
    case DType::kFloat16:
      return 13;
    case DType::kInvalid:
    case DType::kString:
    case DType::kUInt32:  // uint32_val/uint64_val (16/17) are not exposed by EventView
    case DType::kUInt64:
      return 0;
  }
  return 0;
}

using Bytes = std::span<const std::byte>;

// Bounds-checked cursor over one message's bytes. `base` is the payload start, for messages.
class WireReader {
 public:
  WireReader(Bytes data, const std::byte* base)
      : p_(data.data()), end_(data.data() + data.size()), base_(base) {}

  bool done() const { return p_ == end_; }
  size_t offset() const { return static_cast<size_t>(p_ - base_); }

  Status ReadVarint(uint64_t* v) {
    uint64_t result = 0;
    for (int i = 0; i < 10; ++i) {
      if (p_ == end_) return Malformed("truncated varint");
      const auto b = std::to_integer<uint64_t>(*p_++);
      result |= (b & 0x7F) << (7 * i);
      if ((b & 0x80) == 0) {
        *v = result;
        return OkStatus();
      }
    }
    return Malformed("varint longer than 10 bytes");
  }
  Status ReadFixed64(uint64_t* v) {
    if (end_ - p_ < 8) return Malformed("truncated fixed64");
    uint64_t r = 0;
    for (int i = 7; i >= 0; --i) r = (r << 8) | std::to_integer<uint64_t>(p_[i]);
    p_ += 8;
    *v = r;
    return OkStatus();
  }
  Status ReadFixed32(uint32_t* v) {
    if (end_ - p_ < 4) return Malformed("truncated fixed32");
    uint32_t r = 0;
    for (int i = 3; i >= 0; --i) r = (r << 8) | std::to_integer<uint32_t>(p_[i]);
    p_ += 4;
    *v = r;
    return OkStatus();
  }
  Status ReadLengthDelimited(Bytes* out) {
    uint64_t len = 0;
    LITMUS_RETURN_IF_ERROR(ReadVarint(&len));
    if (len > static_cast<uint64_t>(end_ - p_))
      return Malformed("length past the end of the message");
    *out = Bytes(p_, static_cast<size_t>(len));
    p_ += len;
    return OkStatus();
  }
  // Reads a field key; field numbers must be 1..2^29-1 as in protobuf.
  Status ReadKey(uint32_t* field, WireType* wire_type) {
    uint64_t key = 0;
    LITMUS_RETURN_IF_ERROR(ReadVarint(&key));
    if (key > std::numeric_limits<uint32_t>::max() || (key >> 3) == 0)
      return Malformed("bad field key");
    *field = static_cast<uint32_t>(key >> 3);
    *wire_type = static_cast<WireType>(key & 7);
    return OkStatus();
  }
  Status Skip(WireType wire_type) {
    switch (wire_type) {
      case kVarint: {
        uint64_t v = 0;
        return ReadVarint(&v);
      }
      case kFixed64: {
        uint64_t v = 0;
        return ReadFixed64(&v);
      }
      case kLengthDelimited: {
        Bytes b;
        return ReadLengthDelimited(&b);
      }
      case kFixed32: {
        uint32_t v = 0;
        return ReadFixed32(&v);
      }
      case kStartGroup:
      case kEndGroup:
        return Malformed("groups are not supported");
    }
    return Malformed("invalid wire type " + std::to_string(static_cast<uint32_t>(wire_type)));
  }
  Status Malformed(std::string_view what) const {
    return DataLossError("malformed Event: " + std::string(what) + " at payload byte " +
                         std::to_string(offset()));
  }
  Status WrongWireType(std::string_view field_name) const {
    return Malformed("wrong wire type for " + std::string(field_name));
  }

 private:
  const std::byte* p_;
  const std::byte* end_;
  const std::byte* base_;
};

std::string_view AsString(Bytes b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

// A repeated numeric *_val field as seen on the wire.
struct ValField {
  Bytes packed;           // the packed occurrence
  int packed_count = 0;   // number of packed occurrences (more than one cannot be one span)
  bool unpacked = false;  // some element was written unpacked
};

struct TensorState {
  int32_t raw_dtype = 0;
  std::vector<int64_t> shape;
  Bytes content;
  std::vector<std::string_view> string_val;
  std::array<ValField, kLastValField + 1> vals{};
};

// Value-level state; reset when a oneof sibling replaces the tensor (protobuf semantics).
struct ValueState {
  enum class Case { kNone, kSimpleValue, kHisto, kTensor } which = Case::kNone;
  std::string_view tag;
  float simple_value = 0;
  TensorState tensor;
  std::optional<Mode> mode;
  std::optional<int64_t> mode_step;
};

// Python int() on a plugin_data content: optional ASCII whitespace, sign, decimal digits.
std::optional<int64_t> ParseDecimal(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return std::nullopt;
  s = s.substr(b, s.find_last_not_of(kSpace) - b + 1);
  bool negative = false;
  if (s.front() == '+' || s.front() == '-') {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || s.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (v > limit) return std::nullopt;
  return negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

Status DecodeDim(Bytes data, const std::byte* base, std::vector<int64_t>* shape) {
  WireReader r(data, base);
  int64_t size = 0;
  while (!r.done()) {
    uint32_t field = 0;
    WireType wt = kVarint;
    LITMUS_RETURN_IF_ERROR(r.ReadKey(&field, &wt));
    if (field == kDimSize) {
      if (wt != kVarint) return r.WrongWireType("TensorShapeProto.Dim.size");
      uint64_t v = 0;
      LITMUS_RETURN_IF_ERROR(r.ReadVarint(&v));
      size = static_cast<int64_t>(v);
    } else if (field == kDimName) {
      if (wt != kLengthDelimited) return r.WrongWireType("TensorShapeProto.Dim.name");
      LITMUS_RETURN_IF_ERROR(r.Skip(wt));
    } else {
      LITMUS_RETURN_IF_ERROR(r.Skip(wt));
    }
  }
  shape->push_back(size);
  return OkStatus();
}

Status DecodeShape(Bytes data, const std::byte* base, std::vector<int64_t>* shape) {
  WireReader r(data, base);
  while (!r.done()) {
    uint32_t field = 0;
    WireType wt = kVarint;
    LITMUS_RETURN_IF_ERROR(r.ReadKey(&field, &wt));
    if (field == kShapeDim) {
      if (wt != kLengthDelimited) return r.WrongWireType("TensorShapeProto.dim");
      Bytes dim;
      LITMUS_RETURN_IF_ERROR(r.ReadLengthDelimited(&dim));
      LITMUS_RETURN_IF_ERROR(DecodeDim(dim, base, shape));
    } else {
      LITMUS_RETURN_IF_ERROR(r.Skip(wt));  // unknown_rank and anything newer
    }
  }
  return OkStatus();
}

Status DecodeTensor(Bytes data, const std::byte* base, TensorState* t) {
  WireReader r(data, base);
  while (!r.done()) {
    uint32_t field = 0;
    WireType wt = kVarint;
    LITMUS_RETURN_IF_ERROR(r.ReadKey(&field, &wt));
    if (field == kTensorDtype) {
      if (wt != kVarint) return r.WrongWireType("TensorProto.dtype");
      uint64_t v = 0;
      LITMUS_RETURN_IF_ERROR(r.ReadVarint(&v));
      t->raw_dtype = static_cast<int32_t>(static_cast<uint32_t>(v));  // int32 semantics
    } else if (field == kTensorShape) {
      if (wt != kLengthDelimited) return r.WrongWireType("TensorProto.tensor_shape");
      Bytes shape;
      LITMUS_RETURN_IF_ERROR(r.ReadLengthDelimited(&shape));
      LITMUS_RETURN_IF_ERROR(DecodeShape(shape, base, &t->shape));
    } else if (field == kTensorContent) {
      if (wt != kLengthDelimited) return r.WrongWireType("TensorProto.tensor_content");
      LITMUS_RETURN_IF_ERROR(r.ReadLengthDelimited(&t->content));
    } else if (field == kTensorStringVal) {
      if (wt != kLengthDelimited) return r.WrongWireType("TensorProto.string_val");
      Bytes s;
      LITMUS_RETURN_IF_ERROR(r.ReadLengthDelimited(&s));
      t->string_val.push_back(AsString(s));
    } else if (field >= kFirstValField && field <= kLastValField) {
      ValField& val = t->vals[field];
      if (wt == kLengthDelimited) {
        LITMUS_RETURN_IF_ERROR(r.ReadLengthDelimited(&val.packed));
        ++val.packed_count;
      } else if (wt == ValElementWireType(field)) {
        LITMUS_RETURN_IF_ERROR(r.Skip(wt));
        val.unpacked = true;
      } else {
        return r.WrongWireType("TensorProto field " + std::to_string(field));
      }
    } else {
      LITMUS_RETURN_IF_ERROR(r.Skip(wt));  // version_number, resource handles, variants, ...
    }
  }
  return OkStatus();
}

Status DecodePluginData(Bytes data, const std::byte* base, ValueState* v) {
  WireReader r(data, base);
  std::string_view name;
  std::string_view content;
  while (!r.done()) {
    uint32_t field = 0;
    WireType wt = kVarint;
    LITMUS_RETURN_IF_ERROR(r.ReadKey(&field, &wt));
    if (field == kPluginName || field == kPluginContent) {
      if (wt != kLengthDelimited) return r.WrongWireType("PluginData");
      Bytes b;
      LITMUS_RETURN_IF_ERROR(r.ReadLengthDelimited(&b));
      (field == kPluginName ? name : content) = AsString(b);
    } else {
      LITMUS_RETURN_IF_ERROR(r.Skip(wt));
    }
  }
  // As smdebug's reader: later entries override earlier ones.
  if (name == "mode") {
    const std::optional<int64_t> n = ParseDecimal(content);
    const std::optional<Mode> mode = n ? ModeFromValue(*n) : std::nullopt;
    if (!mode)
      return DataLossError("malformed Event: bad plugin_data mode '" + std::string(content) + "'");
    v->mode = mode;
  } else if (name == "mode_step") {
    const std::optional<int64_t> n = ParseDecimal(content);
    if (!n)
      return DataLossError("malformed Event: bad plugin_data mode_step '" + std::string(content) +
                           "'");
    v->mode_step = n;
  }
  return OkStatus();
}

Status DecodeMetadata(Bytes data, const std::byte* base, ValueState* v) {
  WireReader r(data, base);
  while (!r.done()) {
    uint32_t field = 0;
    WireType wt = kVarint;
    LITMUS_RETURN_IF_ERROR(r.ReadKey(&field, &wt));
    if (field == kMetadataPluginData) {
      if (wt != kLengthDelimited) return r.WrongWireType("SummaryMetadata.plugin_data");
      Bytes pd;
      LITMUS_RETURN_IF_ERROR(r.ReadLengthDelimited(&pd));
      LITMUS_RETURN_IF_ERROR(DecodePluginData(pd, base, v));
    } else {
      LITMUS_RETURN_IF_ERROR(r.Skip(wt));
    }
  }
  return OkStatus();
}

Status DecodeValue(Bytes data, const std::byte* base, ValueState* v) {
  using Case = ValueState::Case;
  WireReader r(data, base);
  while (!r.done()) {
    uint32_t field = 0;
    WireType wt = kVarint;
    LITMUS_RETURN_IF_ERROR(r.ReadKey(&field, &wt));
    switch (field) {
      case kValueTag: {
        if (wt != kLengthDelimited) return r.WrongWireType("Summary.Value.tag");
        Bytes b;
        LITMUS_RETURN_IF_ERROR(r.ReadLengthDelimited(&b));
        v->tag = AsString(b);
        break;
      }
      case kValueSimpleValue: {
        if (wt != kFixed32) return r.WrongWireType("Summary.Value.simple_value");
        uint32_t bits = 0;
        LITMUS_RETURN_IF_ERROR(r.ReadFixed32(&bits));
        v->simple_value = std::bit_cast<float>(bits);
        v->which = Case::kSimpleValue;
        break;
      }
      case kValueHisto: {
        if (wt != kLengthDelimited) return r.WrongWireType("Summary.Value.histo");
        LITMUS_RETURN_IF_ERROR(r.Skip(wt));
        v->which = Case::kHisto;
        break;
      }
      case kValueTensor: {
        if (wt != kLengthDelimited) return r.WrongWireType("Summary.Value.tensor");
        Bytes b;
        LITMUS_RETURN_IF_ERROR(r.ReadLengthDelimited(&b));
        if (v->which != Case::kTensor) v->tensor = TensorState{};  // oneof switched: starts fresh
        v->which = Case::kTensor;
        LITMUS_RETURN_IF_ERROR(DecodeTensor(b, base, &v->tensor));
        break;
      }
      case kValueMetadata: {
        if (wt != kLengthDelimited) return r.WrongWireType("Summary.Value.metadata");
        Bytes b;
        LITMUS_RETURN_IF_ERROR(r.ReadLengthDelimited(&b));
        LITMUS_RETURN_IF_ERROR(DecodeMetadata(b, base, v));
        break;
      }
      default:
        LITMUS_RETURN_IF_ERROR(r.Skip(wt));
    }
  }
  return OkStatus();
}

// Decodes the first Value of a Summary (later ones are only skipped over); `seen` tracks whether
// an earlier Summary occurrence already supplied the first Value.
Status DecodeSummary(Bytes data, const std::byte* base, ValueState* v, bool* seen) {
  WireReader r(data, base);
  while (!r.done()) {
    uint32_t field = 0;
    WireType wt = kVarint;
    LITMUS_RETURN_IF_ERROR(r.ReadKey(&field, &wt));
    if (field == kSummaryValue) {
      if (wt != kLengthDelimited) return r.WrongWireType("Summary.value");
      Bytes b;
      LITMUS_RETURN_IF_ERROR(r.ReadLengthDelimited(&b));
      if (!*seen) {
        LITMUS_RETURN_IF_ERROR(DecodeValue(b, base, v));
        *seen = true;
      }
    } else {
      LITMUS_RETURN_IF_ERROR(r.Skip(wt));
    }
  }
  return OkStatus();
}

// Checks the packed bytes of a *_val field hold whole elements.
Status ValidatePacked(int field, Bytes packed) {
  switch (ValElementWireType(static_cast<uint32_t>(field))) {
    case kFixed32:
      if (packed.size() % 4 != 0)
        return DataLossError("malformed Event: packed fixed32 field " + std::to_string(field) +
                             " has a partial element");
      return OkStatus();
    case kFixed64:
      if (packed.size() % 8 != 0)
        return DataLossError("malformed Event: packed fixed64 field " + std::to_string(field) +
                             " has a partial element");
      return OkStatus();
    case kVarint: {
      WireReader r(packed, packed.data());
      while (!r.done()) {
        uint64_t v = 0;
        LITMUS_RETURN_IF_ERROR(
            r.ReadVarint(&v).WithContext("packed field " + std::to_string(field)));
      }
      return OkStatus();
    }
    case kLengthDelimited:
    case kStartGroup:
    case kEndGroup:
      break;
  }
  return InternalError("packed field " + std::to_string(field) + " has no scalar wire type");
}

}  // namespace

StatusOr<EventView> DecodeEvent(std::span<const std::byte> payload) {
  EventView out;
  ValueState value;
  bool value_seen = false;
  bool summary_is_set = false;  // Event.what oneof currently holds the summary
  WireReader r(payload, payload.data());
  while (!r.done()) {
    uint32_t field = 0;
    WireType wt = kVarint;
    LITMUS_RETURN_IF_ERROR(r.ReadKey(&field, &wt));
    switch (field) {
      case kEventWallTime: {
        if (wt != kFixed64) return r.WrongWireType("Event.wall_time");
        uint64_t bits = 0;
        LITMUS_RETURN_IF_ERROR(r.ReadFixed64(&bits));
        out.wall_time = std::bit_cast<double>(bits);
        break;
      }
      case kEventStep: {
        if (wt != kVarint) return r.WrongWireType("Event.step");
        uint64_t v = 0;
        LITMUS_RETURN_IF_ERROR(r.ReadVarint(&v));
        out.step = static_cast<int64_t>(v);
        break;
      }
      case kEventFileVersion:
      case kEventGraphDef: {
        if (wt != kLengthDelimited) return r.WrongWireType("Event.file_version/graph_def");
        LITMUS_RETURN_IF_ERROR(r.Skip(wt));
        summary_is_set = false;  // the oneof now holds something else
        value = ValueState{};
        value_seen = false;
        break;
      }
      case kEventSummary: {
        if (wt != kLengthDelimited) return r.WrongWireType("Event.summary");
        Bytes b;
        LITMUS_RETURN_IF_ERROR(r.ReadLengthDelimited(&b));
        summary_is_set = true;
        LITMUS_RETURN_IF_ERROR(DecodeSummary(b, payload.data(), &value, &value_seen));
        break;
      }
      default:
        LITMUS_RETURN_IF_ERROR(r.Skip(wt));  // log_message, session_log, ...
    }
  }
  if (!summary_is_set || !value_seen) return out;

  using Case = ValueState::Case;
  out.tag = value.tag;
  out.mode = value.mode;
  out.mode_step = value.mode_step;
  if (value.which == Case::kSimpleValue) out.simple_value = value.simple_value;
  if (value.which != Case::kTensor) return out;

  TensorState& t = value.tensor;
  out.has_tensor = true;
  out.raw_dtype = t.raw_dtype;
  out.shape = std::move(t.shape);
  out.content = t.content;
  out.string_val = std::move(t.string_val);
  const int val_field = ValFieldForDtype(t.raw_dtype);
  if (val_field != 0) {
    const ValField& val = t.vals[val_field];
    if (val.unpacked || val.packed_count > 1) {
      return UnimplementedError(
          "Event tensor '" + std::string(out.tag) + "': field " + std::to_string(val_field) +
          " is not a single packed run (unpacked or split *_val fields are not supported)");
    }
    if (val.packed_count == 1) {
      LITMUS_RETURN_IF_ERROR(ValidatePacked(val_field, val.packed));
      out.packed_vals = val.packed;
      out.packed_field = val_field;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Encoder

namespace {

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void PutKey(std::string* out, uint32_t field, WireType wt) {
  PutVarint(out, (uint64_t{field} << 3) | wt);
}
size_t KeySize(uint32_t field) { return VarintSize(uint64_t{field} << 3); }
// Size of a length-delimited field with `len` bytes of body.
size_t LenFieldSize(uint32_t field, size_t len) { return KeySize(field) + VarintSize(len) + len; }
void PutLenField(std::string* out, uint32_t field, std::string_view body) {
  PutKey(out, field, kLengthDelimited);
  PutVarint(out, body.size());
  out->append(body);
}

std::string EncodePluginData(std::string_view name, std::string_view content) {
  std::string pd;
  PutLenField(&pd, kPluginName, name);
  PutLenField(&pd, kPluginContent, content);
  return pd;
}

}  // namespace

EncodedEvent EncodeTensorEvent(const TensorEventSpec& spec) {
  // TensorShapeProto: one Dim {size (omitted when 0), name "<tag>_<size>"} per axis.
  std::string shape;
  for (int64_t size : spec.shape) {
    std::string dim;
    if (size != 0) {
      PutKey(&dim, kDimSize, kVarint);
      PutVarint(&dim, static_cast<uint64_t>(size));
    }
    std::string name(spec.tag);
    name += '_';
    name += std::to_string(size);
    PutLenField(&dim, kDimName, name);
    PutLenField(&shape, kShapeDim, dim);
  }

  // SummaryMetadata: plugin_data [mode_step, mode], as smdebug's writer orders them.
  std::string metadata;
  PutLenField(&metadata, kMetadataPluginData,
              EncodePluginData("mode_step", std::to_string(spec.mode_step)));
  PutLenField(&metadata, kMetadataPluginData,
              EncodePluginData("mode", std::to_string(static_cast<int32_t>(spec.mode))));

  // TensorProto: dtype (omitted when 0), tensor_shape (always, even when empty), tensor_content
  // (omitted when empty), then string_val per element.
  const auto raw_dtype = static_cast<int32_t>(spec.dtype);
  const uint64_t dtype_varint =
      static_cast<uint64_t>(static_cast<int64_t>(raw_dtype));  // int32 sign-extends
  size_t strings_size = 0;
  for (std::string_view s : spec.strings) strings_size += LenFieldSize(kTensorStringVal, s.size());
  const size_t tensor_size =
      (raw_dtype != 0 ? KeySize(kTensorDtype) + VarintSize(dtype_varint) : 0) +
      LenFieldSize(kTensorShape, shape.size()) +
      (spec.content.empty() ? 0 : LenFieldSize(kTensorContent, spec.content.size())) + strings_size;
  const size_t value_size = (spec.tag.empty() ? 0 : LenFieldSize(kValueTag, spec.tag.size())) +
                            LenFieldSize(kValueTensor, tensor_size) +
                            LenFieldSize(kValueMetadata, metadata.size());
  const size_t summary_size = LenFieldSize(kSummaryValue, value_size);

  EncodedEvent out;
  std::string& p = out.prefix;
  p.reserve(64 + value_size - spec.content.size());
  // Event.wall_time: proto3 omits a double whose bits are all zero (+0.0).
  if (std::bit_cast<uint64_t>(spec.wall_time) != 0) {
    PutKey(&p, kEventWallTime, kFixed64);
    const auto bits = std::bit_cast<uint64_t>(spec.wall_time);
    for (int i = 0; i < 8; ++i) p.push_back(static_cast<char>(bits >> (8 * i)));
  }
  if (spec.step != 0) {
    PutKey(&p, kEventStep, kVarint);
    PutVarint(&p, static_cast<uint64_t>(spec.step));
  }
  PutKey(&p, kEventSummary, kLengthDelimited);
  PutVarint(&p, summary_size);
  PutKey(&p, kSummaryValue, kLengthDelimited);
  PutVarint(&p, value_size);
  if (!spec.tag.empty()) PutLenField(&p, kValueTag, spec.tag);
  PutKey(&p, kValueTensor, kLengthDelimited);
  PutVarint(&p, tensor_size);
  if (raw_dtype != 0) {
    PutKey(&p, kTensorDtype, kVarint);
    PutVarint(&p, dtype_varint);
  }
  PutLenField(&p, kTensorShape, shape);
  if (!spec.content.empty()) {
    PutKey(&p, kTensorContent, kLengthDelimited);
    PutVarint(&p, spec.content.size());
    out.content = spec.content;
  }
  std::string& s = out.suffix;
  s.reserve(strings_size + LenFieldSize(kValueMetadata, metadata.size()));
  for (std::string_view str : spec.strings) PutLenField(&s, kTensorStringVal, str);
  PutLenField(&s, kValueMetadata, metadata);
  return out;
}

}  // namespace litmus
