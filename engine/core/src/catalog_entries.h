// Storage of the trial catalog's entries (trial_catalog.h). A trial of small tensors holds
// millions of (tensor, step, worker) entries, so an entry is kept small (16 bytes): what all
// entries of one index file share (worker, mode, mode step, event file) is stored once per file
// (IndexFileInfo) and named by a 32-bit number, the rare parts (a shape from shape_payload,
// stored reductions) in a side table keyed by the entry, and the tensor's name only on its
// record. Built from public TensorEntry values on request (Trial::Entries). (The public struct
// took ~200 bytes plus a heap copy of the name per entry.)
// - EntryFiles owns the index files and the side table: what an entry's numbers refer to.
// - TensorEntries is one tensor's entries, contiguous in chunks that never move (the reader
//   keys its tensor cache by the address of an entry), found by position.
// - WorkerEntries is one step of one tensor in a tensor's explicit step map: pointers to its
//   entries, one per worker, in worker order, in one pointer's space.
// - StepEntryList is a view of one step's entries of a tensor, whichever way they are stored.
// Thread-compatible.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "litmus/engine/trial.h"

namespace litmus::internal {

// The parts few entries have (EntryFiles::extras()).
struct EntryExtras {
  std::optional<std::vector<int64_t>> shape;  // from shape_payload
  // Stored reductions folded onto the tensor: (reduction, abs) -> record location (under the
  // "smdebug/reductions/..." name of the index). (Map nodes never move: the reader keys its
  // cache by a location's address.)
  std::map<std::pair<layout::Reduction, bool>, IndexEntry> stored_reductions;
  uint64_t start = 0;  // the raw record's offset when CatalogEntry::wide_start
};

// What every entry of one index file (one global step of one worker) shares: 40 bytes, a file
// a step. (The names are kept once by EntryFiles; a shared string per file cost ~150 bytes.)
struct IndexFileInfo {
  const std::string* worker = nullptr;  // EntryFiles' copy of the name, one per worker
  std::string_view event_file;          // meta.event_file_name, relative to the trial root
  int64_t mode_step = 0;
  Mode mode = Mode::kGlobal;
};

// One (tensor, global step, worker) of the catalog: 12 bytes (a trial has one per saved
// tensor, step and worker: at a million steps of 50 tensors every byte here is 50 MB).
struct CatalogEntry {
  // The raw tensor record in the file's event_file, if has_location(). (A record is at least 16
  // bytes, which the index parser checks: length 0 stands for "no raw value".) The length is
  // saturated at 2^32 - 1: the reader rejects any record above 2 GiB (trial.cc kMaxRecordLength)
  // before reading it, so a longer one is refused all the same. The record's offset is
  // EntryFiles::start(): start_low while it fits 32 bits (smdebug writes an event file a step
  // and worker, so offsets are small), else in the entry's side-table row (wide_start).
  uint32_t start_low = 0;
  uint32_t length = 0;
  uint32_t file : 30 = 0;       // the number of its index file in its EntryFiles
  uint32_t has_extras : 1 = 0;  // the entry has a row in its EntryFiles' side table
  uint32_t wide_start : 1 = 0;  // the offset is EntryExtras::start (>= 2^32)

  static uint32_t SaturatedLength(uint64_t length) {
    return static_cast<uint32_t>(std::min<uint64_t>(length, std::numeric_limits<uint32_t>::max()));
  }
  bool has_location() const { return length != 0; }
};
static_assert(sizeof(CatalogEntry) == 12, "an entry a record: keep it small (catalog_entries.h)");

// Index files and the entries' rare parts: what an entry refers to by number. Files and extras
// never move once added (the reader keys its cache by a stored reduction's address).
class EntryFiles {
 public:
  EntryFiles() = default;
  EntryFiles(const EntryFiles&) = delete;
  EntryFiles& operator=(const EntryFiles&) = delete;

  // The most files a catalog holds (CatalogEntry::file has 30 bits).
  static constexpr size_t kMaxFiles = size_t{1} << 30;
  // Adds a file of `worker` whose records are in `event_file`; returns its number.
  // REQUIRES: size() < kMaxFiles (checked by the catalog).
  uint32_t Add(std::string_view worker, Mode mode, int64_t mode_step, std::string_view event_file) {
    const size_t n = size_;
    if ((n & (kChunkFiles - 1)) == 0) chunks_.push_back(std::make_unique<IndexFileInfo[]>(kChunkFiles));
    IndexFileInfo& file = chunks_.back()[n & (kChunkFiles - 1)];
    file.worker = &*workers_.emplace(worker).first;
    file.event_file = Keep(event_file);
    file.mode_step = mode_step;
    file.mode = mode;
    ++size_;
    return static_cast<uint32_t>(n);
  }
  size_t size() const { return size_; }
  // REQUIRES: number < size().
  const IndexFileInfo& operator[](uint32_t number) const { return chunks_[number / kChunkFiles][number % kChunkFiles]; }
  const IndexFileInfo& of(const CatalogEntry& entry) const { return (*this)[entry.file]; }
  const std::string& worker(const CatalogEntry& entry) const { return *of(entry).worker; }

  // The offset of `entry`'s record in its event file.
  uint64_t start(const CatalogEntry& entry) const {
    return entry.wide_start ? extras_.at(&entry).start : entry.start_low;
  }
  // Sets the offset of `entry`'s record (which must keep its address).
  void SetStart(CatalogEntry& entry, uint64_t start) {
    if (start <= std::numeric_limits<uint32_t>::max()) {
      entry.start_low = static_cast<uint32_t>(start);
      if (entry.wide_start) extras_.at(&entry).start = start;
      return;
    }
    entry.start_low = 0;
    entry.wide_start = 1;
    MutableExtras(entry).start = start;
  }
  // The shape and stored reductions of `entry`, or nullptr.
  const EntryExtras* extras(const CatalogEntry& entry) const {
    if (!entry.has_extras) return nullptr;
    return &extras_.at(&entry);
  }
  // The shape from shape_payload, or nullptr.
  const std::vector<int64_t>* shape(const CatalogEntry& entry) const {
    const EntryExtras* e = extras(entry);
    return e != nullptr && e->shape ? &*e->shape : nullptr;
  }
  bool has_stored_reductions(const CatalogEntry& entry) const {
    const EntryExtras* e = extras(entry);
    return e != nullptr && !e->stored_reductions.empty();
  }
  // The extras of `entry` (which must keep its address), created empty if it has none.
  EntryExtras& MutableExtras(CatalogEntry& entry) {
    entry.has_extras = 1;
    return extras_[&entry];
  }
  // The public form of `entry` of tensor `name`.
  TensorEntry ToTensorEntry(const CatalogEntry& entry, std::string_view name) const {
    const IndexFileInfo& file = of(entry);
    TensorEntry out;
    out.worker = *file.worker;
    out.mode = file.mode;
    out.mode_step = file.mode_step;
    if (entry.has_location()) out.location = IndexEntry{std::string(name), start(entry), entry.length};
    out.event_file = std::make_shared<const std::string>(file.event_file);
    if (const EntryExtras* e = extras(entry)) {
      out.shape = e->shape;
      out.stored_reductions = e->stored_reductions;
    }
    return out;
  }

 private:
  // A copy of `text` that lives as long as this object (packed in large blocks: no allocation
  // or header a name).
  std::string_view Keep(std::string_view text) {
    if (text.size() > kTextBlock / 4) return *big_texts_.emplace_back(std::make_unique<std::string>(text));
    if (text_blocks_.empty() || kTextBlock - text_used_ < text.size()) {
      text_blocks_.push_back(std::make_unique<char[]>(kTextBlock));
      text_used_ = 0;
    }
    char* at = text_blocks_.back().get() + text_used_;
    std::copy(text.begin(), text.end(), at);
    text_used_ += text.size();
    return {at, text.size()};
  }

  static constexpr size_t kChunkFiles = 1024;
  static constexpr size_t kTextBlock = 64 * 1024 - 128;  // (see TensorEntries::kTailChunk)
  std::vector<std::unique_ptr<IndexFileInfo[]>> chunks_;
  size_t size_ = 0;
  std::set<std::string, std::less<>> workers_;  // (nodes never move)
  std::vector<std::unique_ptr<char[]>> text_blocks_;
  size_t text_used_ = 0;  // in text_blocks_.back()
  std::vector<std::unique_ptr<std::string>> big_texts_;
  // (Keyed by address: entries never move. Node-based: extras never move either.)
  std::unordered_map<const CatalogEntry*, EntryExtras> extras_;
};

// One tensor's entries in the order they were created, in chunks that never move: a chunk of
// 8 entries, then 16, ... doubling up to kMaxChunk, then kTailChunk each (a tensor saved a few
// times wastes little; one saved a million times wastes at most one chunk's tail). kTailChunk is
// a little under 64 KiB so that the allocator's header does not take it to the next page.
class TensorEntries {
 public:
  static constexpr size_t kFirstChunk = 8;    // a power of two
  static constexpr size_t kMaxChunk = 4096;   // a power of two, >= kFirstChunk
  static constexpr size_t kTailChunk = kMaxChunk - 8;
  TensorEntries() = default;
  TensorEntries(TensorEntries&&) noexcept = default;
  TensorEntries& operator=(TensorEntries&&) noexcept = default;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // REQUIRES: i < size().
  CatalogEntry& operator[](size_t i) const {
    const auto [chunk, offset] = Locate(i);
    return chunks_[chunk][offset];
  }
  CatalogEntry& back() const { return (*this)[size_ - 1]; }
  // A new default-constructed entry at the end, valid as long as this object.
  CatalogEntry& Append() {
    const auto [chunk, offset] = Locate(size_);
    if (chunk == chunks_.size()) chunks_.push_back(std::make_unique<CatalogEntry[]>(ChunkSize(chunk)));
    ++size_;
    return chunks_[chunk][offset];
  }
  // Bytes held (for tests of the layout's cost).
  size_t capacity() const {
    size_t n = 0;
    for (size_t c = 0; c < chunks_.size(); ++c) n += ChunkSize(c);
    return n;
  }

 private:
  static constexpr size_t kGrowing = std::countr_zero(kMaxChunk / kFirstChunk) + 1;  // chunks 0..kGrowing-1 double
  static constexpr size_t kGrowingEntries = kFirstChunk * ((size_t{1} << kGrowing) - 1);
  static size_t ChunkSize(size_t chunk) { return chunk < kGrowing ? kFirstChunk << chunk : kTailChunk; }
  // (chunk, offset in it) of entry i.
  static std::pair<size_t, size_t> Locate(size_t i) {
    if (i < kGrowingEntries) {
      // Chunk c starts at kFirstChunk * (2^c - 1).
      const size_t chunk = static_cast<size_t>(std::bit_width(i / kFirstChunk + 1)) - 1;
      return {chunk, i - kFirstChunk * ((size_t{1} << chunk) - 1)};
    }
    const size_t rest = i - kGrowingEntries;
    return {kGrowing + rest / kTailChunk, rest % kTailChunk};
  }

  std::vector<std::unique_ptr<CatalogEntry[]>> chunks_;
  size_t size_ = 0;
};

// A view of one step's entries of a tensor, in worker order (the lexicographically smallest
// worker first, as smdebug picks by default). Valid while the catalog is not changed; empty
// when the tensor has no entry at the step.
class StepEntryList {
 public:
  StepEntryList() = default;
  explicit StepEntryList(const CatalogEntry* one) : one_(one) {}
  explicit StepEntryList(std::span<CatalogEntry* const> several) : several_(several) {}

  bool empty() const { return size() == 0; }
  size_t size() const { return one_ != nullptr ? 1 : several_.size(); }
  // REQUIRES: i < size().
  const CatalogEntry& operator[](size_t i) const { return one_ != nullptr ? *one_ : *several_[i]; }
  // The default worker's entry. REQUIRES: !empty().
  const CatalogEntry& front() const { return (*this)[0]; }
  // The entry of `worker`, or nullptr. (A binary search: jobs with hundreds of workers exist.)
  const CatalogEntry* Find(std::string_view worker, const EntryFiles& files) const {
    size_t lo = 0;
    size_t hi = size();
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (files.worker((*this)[mid]) < worker) lo = mid + 1;
      else hi = mid;
    }
    return lo < size() && files.worker((*this)[lo]) == worker ? &(*this)[lo] : nullptr;
  }

 private:
  const CatalogEntry* one_ = nullptr;
  std::span<CatalogEntry* const> several_;
};

class WorkerEntries {
 public:
  WorkerEntries() = default;
  explicit WorkerEntries(CatalogEntry* only) : head_(only) {}
  // Movable (the step maps move their elements as they grow), not copyable: it may own the list.
  WorkerEntries(WorkerEntries&& other) noexcept : head_(std::exchange(other.head_, nullptr)) {}
  WorkerEntries& operator=(WorkerEntries&& other) noexcept {
    if (this != &other) {
      delete several();
      head_ = std::exchange(other.head_, nullptr);
    }
    return *this;
  }
  WorkerEntries(const WorkerEntries&) = delete;
  WorkerEntries& operator=(const WorkerEntries&) = delete;
  ~WorkerEntries() { delete several(); }

  // The entries, sorted by worker; never empty once a step has been created by the catalog.
  StepEntryList view() const {
    if (const std::vector<CatalogEntry*>* list = several()) return StepEntryList(std::span<CatalogEntry* const>(*list));
    return head_ == nullptr ? StepEntryList() : StepEntryList(head_);
  }
  // Adds `entry` (of a worker not present yet) in worker order.
  void Insert(CatalogEntry* entry, const EntryFiles& files) {
    if (head_ == nullptr) {
      head_ = entry;
      return;
    }
    std::vector<CatalogEntry*>* list = several();
    if (list == nullptr) {
      list = new std::vector<CatalogEntry*>{head_};
      list->reserve(4);
      head_ = reinterpret_cast<CatalogEntry*>(reinterpret_cast<uintptr_t>(list) | kSeveral);
    }
    const std::string& worker = files.worker(*entry);
    const auto position = std::lower_bound(list->begin(), list->end(), worker,
                                           [&files](const CatalogEntry* e, const std::string& w) {
                                             return files.worker(*e) < w;
                                           }) -
                          list->begin();
    list->push_back(entry);
    std::rotate(list->begin() + position, list->end() - 1, list->end());
  }

 private:
  static_assert(alignof(CatalogEntry) > 1 && alignof(std::vector<CatalogEntry*>) > 1, "the low bit is free");
  static constexpr uintptr_t kSeveral = 1;
  std::vector<CatalogEntry*>* several() const {
    const auto bits = reinterpret_cast<uintptr_t>(head_);
    return (bits & kSeveral) != 0 ? reinterpret_cast<std::vector<CatalogEntry*>*>(bits & ~kSeveral) : nullptr;
  }

  // One pointer, so that a step costs 8 bytes in its tensor's step map: null (no entry yet),
  // the only entry, or, with the low bit set, the list of every entry (owned) once there are two
  // or more.
  CatalogEntry* head_ = nullptr;
};

}  // namespace litmus::internal
