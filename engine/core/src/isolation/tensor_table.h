// TensorTable: what an Invoke tells its worker about each required tensor it can read from the
// shared memory (arena offset, size, dtype, shape, mode, the reductions the runner computed
// already), encoded once per (trial, tensor, step) and reused by every rule invoked at the same
// step (rules of one job mostly require the same tensors). Holds the values until the next step.
// Most tensors reach workers through the step's shared table (step_table.h); this one carries
// what that table lacks. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "isolation/protocol.h"
#include "isolation/shared_arena.h"
#include "litmus/engine/trial.h"

namespace litmus::isolation {

// Reductions the runner computed already (Tensor memos, key 2 * LITMUS_REDUCTION_* + abs, the
// trial's memo keys) that a worker may use instead of computing them: their mask, and memos[key]
// for each bit. None when the tensor's entry holds stored reductions (`stored_reductions`), which
// Trial::Reduction prefers.
inline constexpr uint32_t kMemoKeys = 18;
uint32_t UsableMemos(const Tensor& tensor, bool stored_reductions, std::array<double, kMemoKeys>& memos);

// The mode and mode step a worker is told for a global step of `trial` (LITMUS_MODE_GLOBAL and
// the step itself when the trial does not know it).
std::pair<int32_t, int64_t> WireMode(const Trial& trial, int64_t step);

class TensorTable {
 public:
  explicit TensorTable(std::shared_ptr<SharedArena> arena) : arena_(std::move(arena)) {}

  // Appends the entry of `name` (the trial's own copy) of `trial` at `step` (everything after
  // the name id and trial number, see WorkerConnection::ReadLocalTensors) to `out` and returns
  // true, or false when the worker must ask for it (not readable, a string, outside the shared
  // memory). `invoked_step` is the step being invoked: the table starts over when it changes.
  // *keep receives the value, which must stay alive until the worker's reply.
  bool Append(const Trial& trial, std::string_view name, int64_t step, int64_t invoked_step, Encoder& out,
              TensorPtr* keep);

 private:
  struct Key {
    const Trial* trial;
    const char* name;
    int64_t step;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.name) * 31 + std::hash<int64_t>()(k.step) + std::hash<const void*>()(k.trial);
    }
  };
  struct Entry {
    TensorPtr value;    // null: the worker must ask
    std::string bytes;  // the encoded entry
  };
  Entry Build(const Trial& trial, std::string_view name, int64_t step) const;

  const std::shared_ptr<SharedArena> arena_;
  std::mutex mu_;
  int64_t invoked_step_ = INT64_MIN;
  std::unordered_map<Key, Entry, KeyHash> entries_;
};

}  // namespace litmus::isolation
