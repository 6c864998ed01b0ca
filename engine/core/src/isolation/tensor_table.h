// TensorTable: what an Invoke tells its worker about each required tensor it can read from the
// shared memory (arena offset, size, dtype, shape, mode, the reductions the runner computed
// already). With several rules, each (trial, tensor, step) is encoded once per step and reused by
// every rule invoked at that step (rules of one job mostly require the same tensors); with one,
// entries go straight into the request (keeping them would only cost). Holds the values until
// the next step. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "isolation/protocol.h"
#include "isolation/shared_arena.h"
#include "litmus/engine/trial.h"
#include "run/read_key.h"

namespace litmus::isolation {

// Reductions the runner computed already (Tensor memos, key 2 * LITMUS_REDUCTION_* + abs, the
// trial's memo keys) that a worker may use instead of computing them: their mask, and memos[key]
// for each bit. None when the tensor's entry holds stored reductions (`stored_reductions`), which
// Trial::Reduction prefers.
inline constexpr uint32_t kMemoKeys = 18;
uint32_t UsableMemos(const Tensor& tensor, bool stored_reductions, std::array<double, kMemoKeys>& memos);

class TensorTable {
 public:
  explicit TensorTable(std::shared_ptr<SharedArena> arena) : arena_(std::move(arena)) {}

  // One more rule encodes its Invoke tables here (RuleIsolation::CreateRule).
  void AddUser();

  // Appends the entry of `name` (the trial's own copy) of `trial` at `step` (everything after
  // the name id and trial number, see WorkerConnection::ReadLocalTensors) to `out` and returns
  // true, or false when the worker must ask for it (not readable, a string, outside the shared
  // memory). `known`: what the runner's read decoded (StepValues), or null; without a value
  // there, it is looked up in the trial. `invoked_step` is the step being invoked: the table starts over
  // when it changes. *keep receives the value, which must stay alive until the worker's reply.
  bool Append(const Trial& trial, std::string_view name, int64_t step, int64_t invoked_step, const ReadValue* known,
              Encoder& out, TensorPtr* keep);

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
    TensorPtr value;  // null: the worker must ask
    size_t offset = 0;  // the encoded entry: bytes_[offset, offset + size)
    size_t size = 0;
  };
  // The value of the entry (null if it cannot be read) and, when `known` says so, whether a
  // stored reduction may take precedence over the memos. REQUIRES: mu_ held.
  TensorPtr Resolve(const Trial& trial, std::string_view name, int64_t step, const ReadValue* known,
                    std::optional<bool>* stored_reductions) const;
  // Encodes the entry of `value` into `out`; false when the worker must ask. `stored_reductions`
  // unknown: asked of the trial if it matters. REQUIRES: mu_ held.
  bool Encode(const Trial& trial, std::string_view name, int64_t step, const Tensor& value,
              std::optional<bool> stored_reductions, Encoder& out);

  const std::shared_ptr<SharedArena> arena_;
  std::mutex mu_;
  int users_ = 0;
  int64_t invoked_step_ = INT64_MIN;
  std::unordered_map<Key, Entry, KeyHash> entries_;
  Encoder bytes_;  // the encoded entries of this step, one after the other
  // The mode of the last (trial, step) encoded: every entry of a step asks the same.
  const Trial* mode_trial_ = nullptr;
  int64_t mode_of_step_ = 0;
  std::pair<int32_t, int64_t> mode_{0, 0};
};

}  // namespace litmus::isolation
