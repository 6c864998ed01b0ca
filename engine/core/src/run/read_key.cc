// SortUniqueKeys (read_key.h).
#include "run/read_key.h"

namespace litmus {
namespace {

// Keeps the first of equal keys, in order: one pass over an open-addressing table of
// (trial, name's address, step), comparing no name (a trial has one copy of each name).
void DropRepeats(std::vector<ReadKey>& keys) {
  size_t size = 16;
  while (size < 2 * keys.size()) size *= 2;
  constexpr uint32_t kEmpty = UINT32_MAX;
  std::vector<uint32_t> slots(size, kEmpty);  // the index of a kept key
  size_t kept = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const ReadKey& key = keys[i];
    uint64_t h = reinterpret_cast<uintptr_t>(key.name.data()) * 0x9E3779B97F4A7C15ull ^
                 static_cast<uint64_t>(key.step) * 0xC2B2AE3D27D4EB4Full ^ key.trial;
    h ^= h >> 29;
    for (size_t slot = h & (size - 1);; slot = (slot + 1) & (size - 1)) {
      if (slots[slot] == kEmpty) {
        slots[slot] = static_cast<uint32_t>(kept);
        if (kept != i) keys[kept] = key;
        ++kept;
        break;
      }
      if (keys[slots[slot]] == key) break;
    }
  }
  keys.resize(kept);
}

}  // namespace

void SortUniqueKeys(std::vector<ReadKey>& keys) {
  if (std::is_sorted(keys.begin(), keys.end())) {
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return;
  }
  DropRepeats(keys);
  std::sort(keys.begin(), keys.end());
}

}  // namespace litmus
