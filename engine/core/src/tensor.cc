// Tensor accessors and DecodeTensorRecord: framed record -> Event -> TensorProto -> Tensor, keeping
// numeric data inside the record buffer (zero copy when aligned, one memmove otherwise; for a
// read-only mapped file, zero copy when aligned, one copy to the heap otherwise).
// Pure functions over their arguments; thread-safe.
#include "litmus/engine/tensor.h"

#include <bit>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>

#include "litmus/format/event_codec.h"
#include "litmus/format/tfrecord.h"

namespace litmus {

// tensor_content is little-endian; litmus reinterprets it in place.
static_assert(std::endian::native == std::endian::little, "litmus assumes a little-endian host");
// Every element size is at most 16 (complex128) and buffers from new[] are aligned to
// max_align_t, so moving content to the start of its record buffer always aligns it.
static_assert(alignof(std::max_align_t) >= 16, "new[] must return 16-byte aligned storage");

namespace {

template <typename T>
T Load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Beyond this many bytes, expanding a few *_val entries into a full tensor is refused: a corrupt
// shape must not make a 100-byte record allocate terabytes.
constexpr uint64_t kMaxExpandedBytes = uint64_t{1} << 30;

std::string Where(std::string_view file_name, uint64_t file_offset, std::string_view tag) {
  std::string s(file_name);
  s += ": record at offset ";
  s += std::to_string(file_offset);
  s += " (tensor '";
  s += tag;
  s += "'): ";
  return s;
}

// Turns a buffer into the shared owner a Tensor keeps alive (its storage does not move).
std::shared_ptr<const void> Share(ByteBuffer buffer) {
  return std::shared_ptr<const std::byte[]>(std::move(buffer.data));
}

// Reads one base-128 varint from `in` at `*pos`; false if it is truncated or longer than 10 bytes.
bool ReadVarint(std::span<const std::byte> in, size_t* pos, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70 && *pos < in.size(); shift += 7) {
    const auto b = static_cast<uint8_t>(in[(*pos)++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

// How the values of one TF *_val field are encoded and turned into scalars of the tensor.
enum class ValEncoding { kFixed32Float, kFixed64Double, kVarint };

struct ValField {
  int field = 0;            // TensorProto field number; 0 = TF has no *_val field litmus reads
  ValEncoding encoding = ValEncoding::kVarint;
  int scalars_per_element = 1;  // 2 for complex (re, im)
};

ValField ValFieldFor(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return {5, ValEncoding::kFixed32Float, 1};
    case DType::kFloat64: return {6, ValEncoding::kFixed64Double, 1};
    case DType::kInt32:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kInt8:
    case DType::kUInt16: return {7, ValEncoding::kVarint, 1};
    case DType::kComplex64: return {9, ValEncoding::kFixed32Float, 2};
    case DType::kInt64: return {10, ValEncoding::kVarint, 1};
    case DType::kBool: return {11, ValEncoding::kVarint, 1};
    case DType::kComplex128: return {12, ValEncoding::kFixed64Double, 2};
    case DType::kFloat16: return {13, ValEncoding::kVarint, 1};
    // uint32_val/uint64_val (fields 16/17) exist only in newer TF, not in smdebug's proto.
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kInvalid:
    case DType::kString: return {};
  }
  return {};
}

// Stores one decoded scalar into element-scalar slot `out` of a tensor of `dtype`, with TF's
// conversions: int_val entries are int32 and narrow by truncation; half_val holds bit patterns.
void StoreScalar(DType dtype, uint64_t varint, double real, std::byte* out) {
  auto put = [out](auto v) { std::memcpy(out, &v, sizeof(v)); };
  switch (dtype) {
    case DType::kFloat32:
    case DType::kComplex64: put(static_cast<float>(real)); return;
    case DType::kFloat64:
    case DType::kComplex128: put(real); return;
    case DType::kInt32: put(static_cast<int32_t>(static_cast<uint32_t>(varint))); return;
    case DType::kUInt8: put(static_cast<uint8_t>(varint)); return;
    case DType::kInt16: put(static_cast<int16_t>(static_cast<uint16_t>(varint))); return;
    case DType::kInt8: put(static_cast<int8_t>(static_cast<uint8_t>(varint))); return;
    case DType::kUInt16:
    case DType::kFloat16: put(static_cast<uint16_t>(varint)); return;
    case DType::kInt64: put(static_cast<int64_t>(varint)); return;
    case DType::kBool: put(static_cast<uint8_t>(varint != 0 ? 1 : 0)); return;
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kInvalid:
    case DType::kString: return;  // never reached: ValFieldFor gives no field for these
  }
}

// Builds the element bytes of an n-element tensor from a packed TF *_val field, repeating the last
// given element when fewer than n are present (TensorFlow's FromProtoField rule) and ignoring
// extra ones. `where` prefixes error messages.
StatusOr<ByteBuffer> ExpandValField(DType dtype, const ValField& vf,
                                    std::span<const std::byte> packed, int64_t n,
                                    const std::string& where) {
  const size_t item = DTypeSize(dtype);
  const size_t scalar_size = item / static_cast<size_t>(vf.scalars_per_element);
  const uint64_t total_bytes = static_cast<uint64_t>(n) * item;  // caller checked overflow
  if (total_bytes > kMaxExpandedBytes) {
    return ResourceExhaustedError(where + "expanding TensorProto field " +
                                  std::to_string(vf.field) + " to " +
                                  std::to_string(total_bytes) + " bytes exceeds the limit");
  }
  if (vf.encoding == ValEncoding::kFixed32Float && packed.size() % 4 != 0) {
    return DataLossError(where + "packed float field size is not a multiple of 4");
  }
  if (vf.encoding == ValEncoding::kFixed64Double && packed.size() % 8 != 0) {
    return DataLossError(where + "packed double field size is not a multiple of 8");
  }
  ByteBuffer out = ByteBuffer::Allocate(static_cast<size_t>(total_bytes));
  const uint64_t want_scalars = static_cast<uint64_t>(n) * vf.scalars_per_element;
  uint64_t have_scalars = 0;
  size_t pos = 0;
  while (pos < packed.size() && have_scalars < want_scalars) {
    uint64_t varint = 0;
    double real = 0;
    switch (vf.encoding) {
      case ValEncoding::kFixed32Float:
        real = Load<float>(packed.data() + pos);
        pos += 4;
        break;
      case ValEncoding::kFixed64Double:
        real = Load<double>(packed.data() + pos);
        pos += 8;
        break;
      case ValEncoding::kVarint:
        if (!ReadVarint(packed, &pos, &varint)) {
          return DataLossError(where + "malformed varint in TensorProto field " +
                               std::to_string(vf.field));
        }
        break;
    }
    StoreScalar(dtype, varint, real, out.data.get() + have_scalars * scalar_size);
    ++have_scalars;
  }
  // Only whole elements count (TF: a trailing lone real part of a complex is ignored).
  const uint64_t have_elements = have_scalars / vf.scalars_per_element;
  if (have_elements == 0) return DataLossError(where + "no tensor data");
  const std::byte* last = out.data.get() + (have_elements - 1) * item;
  for (uint64_t e = have_elements; e < static_cast<uint64_t>(n); ++e) {
    std::memcpy(out.data.get() + e * item, last, item);
  }
  return out;
}

}  // namespace

Tensor::Tensor(DType dtype, std::vector<int64_t> shape, std::span<const std::byte> bytes,
               std::shared_ptr<const void> owner)
    : dtype_(dtype), shape_(std::move(shape)), bytes_(bytes), owner_(std::move(owner)) {
  num_elements_ = 1;
  for (int64_t d : shape_) num_elements_ *= d;
}

Tensor::Tensor(std::vector<int64_t> shape, std::vector<std::string> strings)
    : dtype_(DType::kString),
      shape_(std::move(shape)),
      num_elements_(static_cast<int64_t>(strings.size())),
      strings_(std::move(strings)) {}

std::shared_ptr<const Tensor> Tensor::SummaryOf(const Tensor& value) {
  auto summary = std::make_shared<Tensor>(value.dtype_, value.shape_, std::span<const std::byte>(), nullptr);
  summary->summary_ = true;
  value.ForEachMemo([&](uint32_t key, double memo) { summary->SetMemo(key, memo); });
  return summary;
}

std::optional<double> Tensor::Memo(uint32_t key) const {
  // The memos kept in place are written once, before the count that publishes them: reading
  // them needs no lock (a rule asks for a reduction of every tensor it checks).
  const size_t published = memo_count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < published; ++i) {
    if (memo_[i].first == key) return memo_[i].second;
  }
  if (published < memo_.size()) return std::nullopt;
  std::lock_guard<std::mutex> lock(memo_mu_);
  for (const auto& [k, v] : memo_overflow_) {
    if (k == key) return v;
  }
  return std::nullopt;
}

void Tensor::SetMemo(uint32_t key, double value) const {
  std::lock_guard<std::mutex> lock(memo_mu_);
  const size_t count = memo_count_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < count; ++i) {
    if (memo_[i].first == key) return;
  }
  for (const auto& [k, v] : memo_overflow_) {
    if (k == key) return;
  }
  if (count < memo_.size()) {
    memo_[count] = {key, value};
    memo_count_.store(count + 1, std::memory_order_release);
  } else {
    memo_overflow_.emplace_back(key, value);
  }
}

size_t Tensor::memory_bytes() const {
  size_t n = sizeof(Tensor) + bytes_.size() + shape_.capacity() * sizeof(int64_t);
  for (const std::string& s : strings_) n += sizeof(std::string) + s.capacity();
  return n;
}

double Tensor::ElementAsDouble(int64_t i) const {
  const std::byte* p = bytes_.data() + static_cast<size_t>(i) * DTypeSize(dtype_);
  switch (dtype_) {
    case DType::kFloat32: return Load<float>(p);
    case DType::kFloat64: return Load<double>(p);
    case DType::kInt32: return Load<int32_t>(p);
    case DType::kUInt8: return Load<uint8_t>(p);
    case DType::kInt16: return Load<int16_t>(p);
    case DType::kInt8: return Load<int8_t>(p);
    case DType::kComplex64: return Load<float>(p);
    case DType::kInt64: return static_cast<double>(Load<int64_t>(p));
    case DType::kBool: return Load<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case DType::kUInt16: return Load<uint16_t>(p);
    case DType::kComplex128: return Load<double>(p);
    case DType::kFloat16: return HalfToFloat(Load<uint16_t>(p));
    case DType::kUInt32: return Load<uint32_t>(p);
    case DType::kUInt64: return static_cast<double>(Load<uint64_t>(p));
    case DType::kInvalid:
    case DType::kString: break;  // REQUIRES violated
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::complex<double> Tensor::ElementAsComplex(int64_t i) const {
  switch (dtype_) {
    case DType::kComplex64: {
      const std::byte* p = bytes_.data() + static_cast<size_t>(i) * 8;
      return {Load<float>(p), Load<float>(p + 4)};
    }
    case DType::kComplex128: {
      const std::byte* p = bytes_.data() + static_cast<size_t>(i) * 16;
      return {Load<double>(p), Load<double>(p + 8)};
    }
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kInt32:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kInt8:
    case DType::kInt64:
    case DType::kBool:
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kInvalid:
    case DType::kString: break;
  }
  return {ElementAsDouble(i), 0.0};
}

StatusOr<TensorPtr> DecodeTensorRecord(ByteBuffer record, std::string_view file_name,
                                       uint64_t file_offset, std::string_view expected_tag,
                                       bool* tag_mismatch) {
  const std::span<std::byte> bytes = record.span();
  return DecodeTensorRecord(std::shared_ptr<std::byte[]>(std::move(record.data)), bytes, file_name, file_offset,
                            expected_tag, tag_mismatch);
}

namespace {

// DecodeTensorRecord and DecodeMappedTensorRecord: `record` lies in storage kept alive by
// `owner`; `writable` says whether misaligned content may be moved inside it (else it is copied
// out to the heap).
StatusOr<TensorPtr> DecodeRecord(std::shared_ptr<const void> owner, std::span<const std::byte> record, bool writable,
                                 std::string_view file_name, uint64_t file_offset, std::string_view expected_tag,
                                 bool* tag_mismatch, size_t* content_offset) {
  if (tag_mismatch != nullptr) *tag_mismatch = false;
  if (content_offset != nullptr) *content_offset = 0;
  // The error prefix is built only when there is an error (this runs once per tensor read).
  const auto where = [&] { return Where(file_name, file_offset, expected_tag); };
  LITMUS_ASSIGN_OR_RETURN(const tfrecord::RecordView rec,
                          tfrecord::ParseExactRecord(record, file_name, file_offset));
  StatusOr<EventView> decoded = DecodeEvent(rec.payload);
  if (!decoded.ok()) return decoded.status().WithContext(where());
  EventView& ev = *decoded;
  if (tag_mismatch != nullptr) *tag_mismatch = ev.tag != expected_tag;
  if (!ev.has_tensor) return DataLossError(where() + "record holds no tensor");

  const std::optional<DType> maybe_dtype = DTypeFromProto(ev.raw_dtype);
  if (!maybe_dtype) {
    return UnimplementedError(where() + "dtype " + std::to_string(ev.raw_dtype) +
                              " of tensor '" + std::string(ev.tag) + "' is not supported");
  }
  const DType dtype = *maybe_dtype;

  int64_t elements = 1;
  for (int64_t d : ev.shape) {
    if (d < 0) return DataLossError(where() + "negative dimension " + std::to_string(d));
    if (__builtin_mul_overflow(elements, d, &elements)) {
      return DataLossError(where() + "element count of the shape overflows");
    }
  }

  if (IsString(dtype)) {
    if (!ev.content.empty()) {
      return UnimplementedError(where() + "string tensor stored in tensor_content");
    }
    if (ev.shape.size() != 1 || ev.shape[0] != static_cast<int64_t>(ev.string_val.size())) {
      return DataLossError(where() + "string tensor must be 1-D with one entry per string_val (" +
                           std::to_string(ev.string_val.size()) + " strings, " +
                           std::to_string(ev.shape.size()) + " dims)");
    }
    std::vector<std::string> strings(ev.string_val.begin(), ev.string_val.end());
    return std::make_shared<const Tensor>(std::move(ev.shape), std::move(strings));
  }

  const size_t item = DTypeSize(dtype);
  int64_t expected_bytes = 0;
  if (__builtin_mul_overflow(elements, static_cast<int64_t>(item), &expected_bytes)) {
    return DataLossError(where() + "byte size of the shape overflows");
  }
  if (elements == 0 || !ev.content.empty()) {
    if (ev.content.size() != static_cast<uint64_t>(expected_bytes)) {
      return DataLossError(where() + "tensor_content has " + std::to_string(ev.content.size()) +
                           " bytes, dtype " + std::string(DTypeName(dtype)) + " and shape need " +
                           std::to_string(expected_bytes));
    }
    if (elements == 0) {
      return std::make_shared<const Tensor>(dtype, std::move(ev.shape),
                                            std::span<const std::byte>(), nullptr);
    }
    // Everything needed from the view (shape) is owned by `ev`; the content may now move. The
    // content follows at least the 12 bytes of framing inside the record, and item <= 16, so
    // the aligned address below it is inside the record except for a pathological slice.
    const std::byte* const begin = record.data();
    const std::byte* data = ev.content.data();
    if (content_offset != nullptr) *content_offset = static_cast<size_t>(data - begin);
    if (const uintptr_t misalignment = reinterpret_cast<uintptr_t>(data) % item; misalignment != 0) {
      const std::byte* const aligned = data - misalignment;
      if (!writable || aligned < begin) {
        ByteBuffer copy = ByteBuffer::Allocate(ev.content.size());
        std::memcpy(copy.data.get(), data, ev.content.size());
        const std::span<const std::byte> bytes = std::as_const(copy).span();
        return std::make_shared<const Tensor>(dtype, std::move(ev.shape), bytes, Share(std::move(copy)));
      }
      // (writable: the caller handed this storage over as mutable; see DecodeTensorRecord.)
      std::memmove(const_cast<std::byte*>(aligned), data, ev.content.size());
      data = aligned;
    }
    const std::span<const std::byte> bytes(data, ev.content.size());
    return std::make_shared<const Tensor>(dtype, std::move(ev.shape), bytes, std::move(owner));
  }

  // No tensor_content but elements > 0: TF's *_val fields (writers other than smdebug).
  const ValField vf = ValFieldFor(dtype);
  if (vf.field == 0 || ev.packed_field != vf.field || ev.packed_vals.empty()) {
    return DataLossError(where() + "no tensor data");
  }
  LITMUS_ASSIGN_OR_RETURN(ByteBuffer expanded,
                          ExpandValField(dtype, vf, ev.packed_vals, elements, where()));
  const std::span<const std::byte> bytes = std::as_const(expanded).span();
  return std::make_shared<const Tensor>(dtype, std::move(ev.shape), bytes, Share(std::move(expanded)));
}

}  // namespace

StatusOr<TensorPtr> DecodeTensorRecord(std::shared_ptr<std::byte[]> owner, std::span<std::byte> record,
                                       std::string_view file_name, uint64_t file_offset,
                                       std::string_view expected_tag, bool* tag_mismatch,
                                       size_t* content_offset) {
  return DecodeRecord(std::move(owner), record, /*writable=*/true, file_name, file_offset, expected_tag,
                      tag_mismatch, content_offset);
}

StatusOr<TensorPtr> DecodeMappedTensorRecord(std::shared_ptr<const void> owner, std::span<const std::byte> record,
                                             std::string_view file_name, uint64_t file_offset,
                                             std::string_view expected_tag, bool* tag_mismatch) {
  return DecodeRecord(std::move(owner), record, /*writable=*/false, file_name, file_offset, expected_tag,
                      tag_mismatch, nullptr);
}

}  // namespace litmus
