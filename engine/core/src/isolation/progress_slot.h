// ProgressSlot: a page of memory shared by the runner and one rule worker, where the worker notes
// the step and the call it is about to run inside a call of several steps (--rule-batch-steps),
// and the outcome of each step it finished, so that a worker that crashes or hangs there is
// reported at that step, as a call of one step would be ("in invoke_at_step at step 18"), and
// the steps before it in the call keep their outcomes (a firing among them is reported). The
// worker writes, the runner reads after the call failed; plain atomic stores, no system call. The runner owns the memfd (Create) and hands its
// descriptor to the worker (kWorkerProgressFd), which maps it too (Map).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "litmus/status.h"

namespace litmus::isolation {

class ProgressSlot {
 public:
  enum class Call : int32_t { kNone = 0, kSetRequiredTensors = 1, kInvokeAtStep = 2 };
  static constexpr size_t kMaxSteps = 64;  // (--rule-batch-steps at most)
  struct Progress {
    Call call = Call::kNone;
    int64_t step = 0;
    size_t finished = 0;  // steps of the call finished, each "not met" or fired:
    uint64_t fired = 0;   // bit k: the call's step k fired
  };

  // The runner's slot (a sealed-size memfd mapped read-write).
  static StatusOr<std::unique_ptr<ProgressSlot>> Create();
  // The worker's view of the slot whose descriptor it inherited; takes ownership of fd.
  static StatusOr<std::unique_ptr<ProgressSlot>> Map(int fd);
  ~ProgressSlot();
  ProgressSlot(const ProgressSlot&) = delete;
  ProgressSlot& operator=(const ProgressSlot&) = delete;

  int fd() const { return fd_; }
  // Runner: before sending a call. Worker: before each step's set_required_tensors and invoke,
  // and after each step it finished (index in the call; LITMUS_OK or a firing).
  void Reset();
  void Set(Call call, int64_t step);
  void Finished(size_t index, bool fired);
  Progress Get() const;

 private:
  struct Shared {
    std::atomic<int64_t> step;
    std::atomic<int32_t> call;
    std::atomic<uint64_t> finished;
    std::atomic<uint64_t> fired;
  };
  static_assert(std::atomic<int64_t>::is_always_lock_free && std::atomic<int32_t>::is_always_lock_free &&
                std::atomic<uint64_t>::is_always_lock_free);
  ProgressSlot(int fd, Shared* shared) : fd_(fd), shared_(shared) {}
  int fd_;
  Shared* shared_;
};

}  // namespace litmus::isolation
