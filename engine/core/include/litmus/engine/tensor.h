// Tensor: the decoded value of one (tensor name, global step, worker), and DecodeTensorRecord,
// which turns one framed event record (read at the offsets an index gives) into it with at most
// one copy of the data. A Tensor is immutable once built and shared (shared_ptr<const Tensor>)
// between the cache, the prefetcher and rules; any thread may read it.
#pragma once

#include <array>
#include <atomic>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "litmus/format/dtype.h"
#include "litmus/status.h"

namespace litmus {

// An uninitialised heap buffer (std::vector<std::byte> would zero it first).
struct ByteBuffer {
  std::unique_ptr<std::byte[]> data;
  size_t size = 0;
  static ByteBuffer Allocate(size_t n) { return {std::unique_ptr<std::byte[]>(new std::byte[n]), n}; }
  std::span<std::byte> span() { return {data.get(), size}; }
  std::span<const std::byte> span() const { return {data.get(), size}; }
};

class Tensor {
 public:
  // Numeric tensor over `bytes` (LE, C order), which must stay valid as long as `owner` lives.
  // `bytes` must be aligned to DTypeSize(dtype) (DecodeTensorRecord guarantees it).
  Tensor(DType dtype, std::vector<int64_t> shape, std::span<const std::byte> bytes,
         std::shared_ptr<const void> owner);
  // String tensor (1-D).
  Tensor(std::vector<int64_t> shape, std::vector<std::string> strings);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t num_elements() const { return num_elements_; }
  bool is_string() const { return IsString(dtype_); }
  // Raw element bytes (empty for strings, zero-element tensors and summaries).
  std::span<const std::byte> bytes() const { return bytes_; }
  // A summary of `value` (numeric): its dtype, shape and memos, without its data. What a reader
  // keeps of a value that was wanted only for its reductions (Trial::Prefetch's reductions_only
  // keys), so that the data need not stay in memory; never handed out as a value to read
  // (Trial::Value never returns one).
  static std::shared_ptr<const Tensor> SummaryOf(const Tensor& value);
  bool is_summary() const { return summary_; }
  const std::vector<std::string>& strings() const { return strings_; }
  // Approximate memory held, for cache budgets.
  size_t memory_bytes() const;

  // Element i as double (real part for complex; 0/1 for bool; float16 widened).
  // REQUIRES: !is_string(), 0 <= i < num_elements().
  double ElementAsDouble(int64_t i) const;
  // Element i as complex (imaginary part 0 for real types). REQUIRES as above.
  std::complex<double> ElementAsComplex(int64_t i) const;
  // Typed view; REQUIRES sizeof(T) == DTypeSize(dtype()) and the matching type.
  template <typename T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }

  // Memo of values computed from this tensor (the trial reader keeps its reductions here, keyed
  // by an id of its choosing), so that one value is computed once however many rules ask for
  // it. Thread-safe; the tensor itself stays immutable.
  std::optional<double> Memo(uint32_t key) const;
  void SetMemo(uint32_t key, double value) const;
  // Calls f(key, value) for every memo (what Memo gives for each key), in no particular order.
  template <class F>
  void ForEachMemo(F&& f) const {
    const size_t published = memo_count_.load(std::memory_order_acquire);
    for (size_t i = 0; i < published; ++i) f(memo_[i].first, memo_[i].second);
    if (published < memo_.size()) return;
    std::lock_guard<std::mutex> lock(memo_mu_);
    for (const auto& [key, value] : memo_overflow_) f(key, value);
  }

 private:
  DType dtype_;
  std::vector<int64_t> shape_;
  int64_t num_elements_ = 0;
  std::span<const std::byte> bytes_;
  std::shared_ptr<const void> owner_;
  std::vector<std::string> strings_;
  bool summary_ = false;
  // The first few memos in place (a tensor rarely gets more; the reader memoises a reduction of
  // every tensor it decodes, and an allocation each showed in profiles), the rest beyond. Writers
  // hold memo_mu_; memo_[i] for i < memo_count_ never changes once published, so readers of
  // those take no lock.
  mutable std::mutex memo_mu_;
  mutable std::array<std::pair<uint32_t, double>, 4> memo_{};
  mutable std::atomic<size_t> memo_count_{0};
  mutable std::vector<std::pair<uint32_t, double>> memo_overflow_;
};

using TensorPtr = std::shared_ptr<const Tensor>;

// Decodes `record`, which must hold exactly one framed record (the index's [start_idx,
// start_idx + length) bytes). Takes ownership of the buffer and, when the tensor content is
// suitably aligned inside it, keeps the data in place (zero copy); otherwise moves it once.
//   DataLoss:      framing/CRC errors, malformed protobuf, no tensor in the record,
//                  content size != itemsize * prod(shape), negative dims.
//   Unimplemented: a dtype litmus cannot decode (quantized, bfloat16, ...).
// `file_name` and `file_offset` only go into error messages. A tag different from
// `expected_tag` is not an error (smdebug does not compare them); it is reported through
// *tag_mismatch when that pointer is non-null.
StatusOr<TensorPtr> DecodeTensorRecord(ByteBuffer record, std::string_view file_name,
                                       uint64_t file_offset, std::string_view expected_tag,
                                       bool* tag_mismatch = nullptr);
// The same for a record that is a slice of a larger buffer kept alive by `owner` (several
// records fetched with one read share it). Numeric data stays in place when aligned; otherwise
// it is moved down to the nearest aligned address inside `record` (bytes outside `record` are
// never written), so decode each slice at most once. *content_offset (if non-null) receives
// where tensor_content started inside `record` (0 if there is none), so that a reader can
// place the next record of the same tensor where its data lands aligned.
StatusOr<TensorPtr> DecodeTensorRecord(std::shared_ptr<std::byte[]> owner, std::span<std::byte> record,
                                       std::string_view file_name, uint64_t file_offset,
                                       std::string_view expected_tag, bool* tag_mismatch = nullptr,
                                       size_t* content_offset = nullptr);
// The same for a record inside read-only storage kept alive by `owner` (a mapped event file,
// RandomAccessFile::Mapped): the same checks and errors; numeric data stays where it is when
// aligned, otherwise it is copied once to the heap. Never writes to `record`.
StatusOr<TensorPtr> DecodeMappedTensorRecord(std::shared_ptr<const void> owner, std::span<const std::byte> record,
                                             std::string_view file_name, uint64_t file_offset,
                                             std::string_view expected_tag, bool* tag_mismatch = nullptr);

}  // namespace litmus
