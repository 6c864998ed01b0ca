// SortUniqueKeys and ReadValueIndex (read_key.h).
#include "run/read_key.h"

namespace litmus {
namespace {

constexpr uint32_t kEmpty = UINT32_MAX;

// Of (trial, name's address, step): a trial has one copy of each name.
size_t Hash(const ReadKey& key) {
  uint64_t h = reinterpret_cast<uintptr_t>(key.name.data()) * 0x9E3779B97F4A7C15ull ^
               static_cast<uint64_t>(key.step) * 0xC2B2AE3D27D4EB4Full ^ key.trial;
  return static_cast<size_t>(h ^ (h >> 29));
}

// A power of two at least twice `count` (open addressing stays short).
size_t TableSize(size_t count) {
  size_t size = 16;
  while (size < 2 * count) size *= 2;
  return size;
}

// Keeps the first of equal keys, in order: one pass over an open-addressing table, comparing no
// name.
void DropRepeats(std::vector<ReadKey>& keys) {
  const size_t size = TableSize(keys.size());
  std::vector<uint32_t> slots(size, kEmpty);  // the index of a kept key
  size_t kept = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const ReadKey& key = keys[i];
    for (size_t slot = Hash(key) & (size - 1);; slot = (slot + 1) & (size - 1)) {
      if (slots[slot] == kEmpty) {
        slots[slot] = static_cast<uint32_t>(kept);
        if (kept != i) keys[kept] = key;
        ++kept;
        break;
      }
      if (ReadKey& first = keys[slots[slot]]; first == key) {
        first.reductions_only = first.reductions_only && key.reductions_only;
        break;
      }
    }
  }
  keys.resize(kept);
}

}  // namespace

void SortUniqueKeys(std::vector<ReadKey>& keys) {
  if (std::is_sorted(keys.begin(), keys.end())) {
    size_t kept = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (kept != 0 && keys[kept - 1] == keys[i]) {
        keys[kept - 1].reductions_only = keys[kept - 1].reductions_only && keys[i].reductions_only;
      } else {
        keys[kept++] = keys[i];
      }
    }
    keys.resize(kept);
    return;
  }
  DropRepeats(keys);
  std::sort(keys.begin(), keys.end());
}

void ReadValueIndex::Build(const std::vector<ReadValue>& values) {
  const size_t size = TableSize(values.size());
  slots_.assign(size, kEmpty);
  mask_ = size - 1;
  for (size_t i = 0; i < values.size(); ++i) {
    size_t slot = Hash(values[i].key) & mask_;
    while (slots_[slot] != kEmpty) slot = (slot + 1) & mask_;
    slots_[slot] = static_cast<uint32_t>(i);
  }
}

const ReadValue* ReadValueIndex::Find(const std::vector<ReadValue>& values, const ReadKey& key) const {
  if (!slots_.empty()) {
    for (size_t slot = Hash(key) & mask_; slots_[slot] != kEmpty; slot = (slot + 1) & mask_) {
      const uint32_t i = slots_[slot];
      if (i < values.size() && values[i].key == key) return &values[i];
    }
  }
  // Not indexed (or the list changed since Build): the list's own order decides.
  const auto it = std::lower_bound(values.begin(), values.end(), key);
  return it != values.end() && it->key == key ? &*it : nullptr;
}

}  // namespace litmus
