// Storage of the trial catalog's entries (trial_catalog.h). A trial of small tensors holds
// hundreds of thousands of (tensor, step, worker) entries; allocating each one on its own (a map
// node with its own worker key) made building the catalog mostly page faults and allocator calls.
// - EntryArena owns every TensorEntry in large chunks. An entry never moves and lives as long as
//   the arena: the reader keys its tensor cache by the address of an entry's index location.
// - WorkerEntries is one step of one tensor: pointers to its entries, one per worker, in worker
//   order; the usual single worker needs no allocation at all.
// Thread-compatible.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/engine/trial.h"

namespace litmus::internal {

class EntryArena {
 public:
  EntryArena() = default;
  EntryArena(const EntryArena&) = delete;
  EntryArena& operator=(const EntryArena&) = delete;

  // A new default-constructed entry, valid until the arena is destroyed.
  TensorEntry* New() {
    if (chunks_.empty() || used_ == kChunkEntries) {
      chunks_.push_back(std::make_unique<TensorEntry[]>(kChunkEntries));
      used_ = 0;
    }
    return &chunks_.back()[used_++];
  }
  // The chunks, for a destructor that frees them on several threads.
  std::vector<std::unique_ptr<TensorEntry[]>>& chunks() { return chunks_; }

 private:
  static constexpr size_t kChunkEntries = 2048;
  std::vector<std::unique_ptr<TensorEntry[]>> chunks_;
  size_t used_ = 0;  // entries handed out from chunks_.back()
};

class WorkerEntries {
 public:
  // The entries, sorted by worker; never empty once a step has been created by the catalog.
  std::span<TensorEntry* const> all() const {
    if (!several_.empty()) return several_;
    return {&single_, single_ == nullptr ? 0u : 1u};
  }
  // The default worker's entry (the lexicographically smallest worker, as smdebug picks).
  // REQUIRES: !all().empty().
  const TensorEntry& front() const { return *all().front(); }
  // The entry of `worker`, or nullptr. (A binary search: jobs with hundreds of workers exist.)
  TensorEntry* Find(std::string_view worker) const {
    const std::span<TensorEntry* const> entries = all();
    const auto it = std::lower_bound(entries.begin(), entries.end(), worker, WorkerBefore);
    return it != entries.end() && (*it)->worker == worker ? *it : nullptr;
  }
  // Adds `entry` (of a worker not present yet) in worker order.
  void Insert(TensorEntry* entry) {
    if (single_ == nullptr && several_.empty()) {
      single_ = entry;
      return;
    }
    if (several_.empty()) {
      several_.reserve(4);
      several_.push_back(single_);
      single_ = nullptr;
    }
    const auto position =
        std::lower_bound(several_.begin(), several_.end(), entry->worker, WorkerBefore) - several_.begin();
    several_.push_back(entry);
    std::rotate(several_.begin() + position, several_.end() - 1, several_.end());
  }

 private:
  static bool WorkerBefore(const TensorEntry* entry, std::string_view worker) { return entry->worker < worker; }

  TensorEntry* single_ = nullptr;       // the only entry, while there is one
  std::vector<TensorEntry*> several_;  // every entry, once there are two or more
};

}  // namespace litmus::internal
