// RequirementIndex: where each (trial, tensor name) stands in the requirement list a rule builds
// in one set_required_tensors call (RecordRequirement). Keyed by the address of the trial's copy
// of the name (one per name). Open addressing in one array that outlives the calls: a rule
// requires tens to hundreds of tensors at every step, and a node-based hash table built and
// freed at every call was most of what recording a requirement cost (callgrind: ~1,000
// instructions a name, half of them allocations).
#pragma once

#include <cstdint>
#include <vector>

namespace litmus {

class RequirementIndex {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  // Forgets every key, in constant time (the slots of older calls are recognised as stale).
  void Clear() {
    ++generation_;
    count_ = 0;
  }
  // The position recorded for (trial, name); if there is none, records `position` for it and
  // returns kAbsent.
  uint32_t FindOrInsert(uint32_t trial, const char* name, uint32_t position) {
    if (2 * (count_ + 1) > slots_.size()) Grow();
    for (size_t i = Hash(trial, name) & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& slot = slots_[i];
      if (slot.generation != generation_) {
        slot = {name, trial, position, generation_};
        ++count_;
        return kAbsent;
      }
      if (slot.name == name && slot.trial == trial) return slot.position;
    }
  }

 private:
  struct Slot {
    const char* name = nullptr;
    uint32_t trial = 0;
    uint32_t position = 0;
    uint64_t generation = 0;  // live in the call of this generation only
  };

  static size_t Hash(uint32_t trial, const char* name) {
    const uint64_t key = reinterpret_cast<uintptr_t>(name) ^ (uint64_t{trial} << 59);
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32);
  }
  void Grow() {
    std::vector<Slot> old(slots_.empty() ? 64 : 2 * slots_.size());
    old.swap(slots_);
    count_ = 0;
    for (const Slot& slot : old) {
      if (slot.generation == generation_) FindOrInsert(slot.trial, slot.name, slot.position);
    }
  }

  std::vector<Slot> slots_;
  uint64_t generation_ = 1;
  size_t count_ = 0;
};

}  // namespace litmus
