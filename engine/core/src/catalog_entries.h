// Storage of the trial catalog's entries (trial_catalog.h). A trial of small tensors holds
// millions of (tensor, step, worker) entries, so an entry is kept small (24 bytes): what all
// entries of one index file share (worker, mode, mode step, event file) is stored once per file
// (IndexFileInfo), the rare parts (a shape from shape_payload, stored reductions) in a side table
// of that file, and the tensor's name only on its record. Built from public TensorEntry values on
// request (Trial::Entries). (The public struct took ~200 bytes plus a heap copy of the name per
// entry; opening a 400k-entry trial was then mostly page faults.)
// - EntryArena owns every CatalogEntry in large chunks. An entry never moves and lives as long as
//   the arena: the reader keys its tensor cache by the address of an entry.
// - WorkerEntries is one step of one tensor: pointers to its entries, one per worker, in worker
//   order, in one pointer's space; the usual single worker needs no allocation at all.
// Thread-compatible.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "litmus/engine/trial.h"

namespace litmus::internal {

// The parts few entries have (see CatalogEntry::extras()).
struct EntryExtras {
  std::optional<std::vector<int64_t>> shape;  // from shape_payload
  // Stored reductions folded onto the tensor: (reduction, abs) -> record location (under the
  // "smdebug/reductions/..." name of the index). (Map nodes never move: the reader keys its
  // cache by a location's address.)
  std::map<std::pair<layout::Reduction, bool>, IndexEntry> stored_reductions;
};

// What every entry of one index file (one global step of one worker) shares.
struct IndexFileInfo {
  std::string worker;
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  // meta.event_file_name, relative to the trial root; never null. (A shared pointer because the
  // public TensorEntry shares it.)
  std::shared_ptr<const std::string> event_file;
  // The extras of this file's entries, null while none has any; an entry holds its position.
  // (Per file rather than per entry: 8 bytes a file instead of a pointer an entry. Mutable: the
  // catalog adds to it through the entries' const file pointer; a deque keeps them in place.)
  mutable std::unique_ptr<std::deque<EntryExtras>> extras;
};

// One (tensor, global step, worker) of the catalog: 24 bytes.
struct CatalogEntry {
  using Extras = EntryExtras;

  const IndexFileInfo* file = nullptr;  // never null once the catalog created the entry
  // The raw tensor record in file->event_file, if has_location(). (A record is at least 16
  // bytes, which the index parser checks: length 0 stands for "no raw value".) The length is
  // saturated at 2^32 - 1: the reader rejects any record above 2 GiB (trial.cc kMaxRecordLength)
  // before reading it, so a longer one is refused all the same.
  uint64_t start_idx = 0;
  uint32_t length = 0;
  uint32_t extras_id = 0;  // 1 + the position of this entry's extras in file->extras; 0: none

  static uint32_t SaturatedLength(uint64_t length) {
    return static_cast<uint32_t>(std::min<uint64_t>(length, std::numeric_limits<uint32_t>::max()));
  }
  bool has_location() const { return length != 0; }
  const std::string& worker() const { return file->worker; }
  // The shape and stored reductions of this entry, or nullptr.
  const Extras* extras() const { return extras_id == 0 ? nullptr : &(*file->extras)[extras_id - 1]; }
  // The shape from shape_payload, or nullptr.
  const std::vector<int64_t>* shape() const {
    const Extras* e = extras();
    return e != nullptr && e->shape ? &*e->shape : nullptr;
  }
  bool has_stored_reductions() const {
    const Extras* e = extras();
    return e != nullptr && !e->stored_reductions.empty();
  }
  // REQUIRES: file != nullptr.
  Extras& MutableExtras() {
    if (extras_id == 0) {
      if (!file->extras) file->extras = std::make_unique<std::deque<Extras>>();
      file->extras->emplace_back();
      extras_id = static_cast<uint32_t>(file->extras->size());
    }
    return (*file->extras)[extras_id - 1];
  }
  // The public form of this entry of tensor `name`.
  TensorEntry ToTensorEntry(std::string_view name) const {
    TensorEntry out;
    out.worker = file->worker;
    out.mode = file->mode;
    out.mode_step = file->mode_step;
    if (has_location()) out.location = IndexEntry{std::string(name), start_idx, length};
    out.event_file = file->event_file;
    if (const Extras* e = extras()) {
      out.shape = e->shape;
      out.stored_reductions = e->stored_reductions;
    }
    return out;
  }
};
static_assert(sizeof(CatalogEntry) == 24, "an entry a record: keep it small (catalog_entries.h)");

class EntryArena {
 public:
  EntryArena() = default;
  EntryArena(const EntryArena&) = delete;
  EntryArena& operator=(const EntryArena&) = delete;

  // A new default-constructed entry, valid until the arena is destroyed.
  CatalogEntry* New() {
    if (chunks_.empty() || used_ == kChunkEntries) {
      chunks_.push_back(std::make_unique<CatalogEntry[]>(kChunkEntries));
      used_ = 0;
    }
    return &chunks_.back()[used_++];
  }
  // The chunks, for a destructor that frees them on several threads.
  std::vector<std::unique_ptr<CatalogEntry[]>>& chunks() { return chunks_; }

 private:
  static constexpr size_t kChunkEntries = 4096;
  std::vector<std::unique_ptr<CatalogEntry[]>> chunks_;
  size_t used_ = 0;  // entries handed out from chunks_.back()
};

class WorkerEntries {
 public:
  WorkerEntries() = default;
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
  std::span<CatalogEntry* const> all() const {
    if (const std::vector<CatalogEntry*>* list = several()) return *list;
    return {&head_, head_ == nullptr ? 0u : 1u};
  }
  // The default worker's entry (the lexicographically smallest worker, as smdebug picks).
  // REQUIRES: !all().empty().
  const CatalogEntry& front() const { return *all().front(); }
  // The entry of `worker`, or nullptr. (A binary search: jobs with hundreds of workers exist.)
  CatalogEntry* Find(std::string_view worker) const {
    const std::span<CatalogEntry* const> entries = all();
    const auto it = std::lower_bound(entries.begin(), entries.end(), worker, WorkerBefore);
    return it != entries.end() && (*it)->worker() == worker ? *it : nullptr;
  }
  // Adds `entry` (of a worker not present yet) in worker order.
  void Insert(CatalogEntry* entry) {
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
    const auto position = std::lower_bound(list->begin(), list->end(), entry->worker(), WorkerBefore) - list->begin();
    list->push_back(entry);
    std::rotate(list->begin() + position, list->end() - 1, list->end());
  }

 private:
  static_assert(alignof(CatalogEntry) > 1 && alignof(std::vector<CatalogEntry*>) > 1, "the low bit is free");
  static constexpr uintptr_t kSeveral = 1;
  static bool WorkerBefore(const CatalogEntry* entry, std::string_view worker) { return entry->worker() < worker; }
  std::vector<CatalogEntry*>* several() const {
    const auto bits = reinterpret_cast<uintptr_t>(head_);
    return (bits & kSeveral) != 0 ? reinterpret_cast<std::vector<CatalogEntry*>*>(bits & ~kSeveral) : nullptr;
  }

  // One pointer, so that the common single-worker step costs 8 bytes in its tensor's step map:
  // null (no entry yet), the only entry, or, with the low bit set, the list of every entry
  // (owned) once there are two or more.
  CatalogEntry* head_ = nullptr;
};

}  // namespace litmus::internal
