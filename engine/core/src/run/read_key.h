// ReadKey: one required (trial, tensor, step) that the runner reads before its rules run, with
// SortUniqueKeys (a read's list of them); ReadValue: what the runner's reads decoded, kept in key
// order, so that an isolated rule's Invoke table (isolation/isolated_rule.h) takes each value
// from there instead of looking it up in the trial again (a lookup per tensor and step showed in
// profiles of small tensors), found through a ReadValueIndex. Value types; a built
// ReadValueIndex may be read by several threads.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "litmus/engine/trial.h"

namespace litmus {

// The name views the trial's own copy (TensorRequirement::name): keys are made for every required
// tensor at every step, and copying the names showed in profiles.
struct ReadKey {
  uint32_t trial;
  // Every rule that required it wants only reductions of it (LITMUS_REQUIRE_REDUCTIONS_ONLY):
  // the reader may keep only a summary (Trial::Prefetch). Not part of the key: equal keys
  // merge their flags (SortUniqueKeys).
  bool reductions_only = false;
  std::string_view name;
  int64_t step;
  // In (trial, name, step) order: names compare by content, so that keys declared in name order
  // are already sorted.
  std::weak_ordering operator<=>(const ReadKey& other) const {
    if (const auto c = trial <=> other.trial; c != 0) return c;
    if (name.data() != other.name.data()) {
      if (const int c = name.compare(other.name); c != 0) return c < 0 ? std::weak_ordering::less : std::weak_ordering::greater;
    }
    return step <=> other.step;
  }
  // (A trial has one copy of each name: equal names of one trial are the same view.)
  bool operator==(const ReadKey& other) const {
    return trial == other.trial && name.data() == other.name.data() && step == other.step;
  }
};

// A key whose raw value is decoded without error (Trial::Prefetched of it).
struct ReadValue {
  ReadKey key;
  TensorPtr value;  // null unless the reader kept it (rules read it: isolation/rule_handle.h)
  bool stored_reductions = false;
  friend bool operator<(const ReadValue& a, const ReadValue& b) { return a.key < b.key; }
  friend bool operator<(const ReadValue& a, const ReadKey& b) { return a.key < b; }
  friend bool operator<(const ReadKey& a, const ReadValue& b) { return a < b.key; }
};

// Sorts `keys` and drops repeats; a key kept is reductions_only if every repeat of it was. Rules
// usually declare in name order: then no sort is needed.
// Otherwise (the keys of several rules and steps, ~8x repeated with 20 rules) the repeats go first,
// in one pass that compares names by address only, and the far fewer left are sorted by name.
void SortUniqueKeys(std::vector<ReadKey>& keys);

// A hash index of a sorted list of ReadValues by (trial, name's address, step): a lookup compares
// no name bytes (the list is sorted by them because workers search the step table by name; the
// runner looks up ~20 rules x 16 steps x their tensors per call). Safe when the list changed
// after Build: a hit is checked against the list, and a miss is confirmed by a binary search.
class ReadValueIndex {
 public:
  // Indexes `values` (not owned); again after it changes, for speed.
  void Build(const std::vector<ReadValue>& values);
  // The value of `key` in `values`, or nullptr.
  const ReadValue* Find(const std::vector<ReadValue>& values, const ReadKey& key) const;

 private:
  std::vector<uint32_t> slots_;  // an index into the list, or UINT32_MAX for none
  size_t mask_ = 0;
};

}  // namespace litmus
