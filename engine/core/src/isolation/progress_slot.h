// ProgressSlot: a page of memory shared by the runner and one rule worker, where the worker notes
// the step and the call it is about to run inside a call of several steps (--rule-batch-steps),
// so that a worker that crashes or hangs there is reported at that step, as a call of one step
// would be ("in invoke_at_step at step 18"). The worker writes, the runner reads after the call
// failed; plain atomic stores, no system call. The runner owns the memfd (Create) and hands its
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
  struct Progress {
    Call call = Call::kNone;
    int64_t step = 0;
  };

  // The runner's slot (a sealed-size memfd mapped read-write).
  static StatusOr<std::unique_ptr<ProgressSlot>> Create();
  // The worker's view of the slot whose descriptor it inherited; takes ownership of fd.
  static StatusOr<std::unique_ptr<ProgressSlot>> Map(int fd);
  ~ProgressSlot();
  ProgressSlot(const ProgressSlot&) = delete;
  ProgressSlot& operator=(const ProgressSlot&) = delete;

  int fd() const { return fd_; }
  void Set(Call call, int64_t step);
  Progress Get() const;

 private:
  struct Shared {
    std::atomic<int64_t> step;
    std::atomic<int32_t> call;
  };
  static_assert(std::atomic<int64_t>::is_always_lock_free && std::atomic<int32_t>::is_always_lock_free);
  ProgressSlot(int fd, Shared* shared) : fd_(fd), shared_(shared) {}
  int fd_;
  Shared* shared_;
};

}  // namespace litmus::isolation
