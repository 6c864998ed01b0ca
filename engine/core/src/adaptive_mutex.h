// AdaptiveMutex: a mutex that spins briefly before it sleeps. The tensor cache's critical
// sections are a few hash-table operations, shorter than a trip through the kernel; with a plain
// std::mutex, a reader that met the prefetch inside the cache went to sleep on a futex and had to
// be woken (a 2000-step scan of small tensors made ~16000 futex calls, most of them here).
// Meets the standard Lockable requirements (use std::condition_variable_any to wait on it).
// Thread-safe.
#pragma once

#include <mutex>

namespace litmus::internal {

class AdaptiveMutex {
 public:
  void lock() {
    for (int i = 0; i < kSpins; ++i) {
      if (mu_.try_lock()) return;
      Pause();
    }
    mu_.lock();
  }
  bool try_lock() { return mu_.try_lock(); }
  void unlock() { mu_.unlock(); }

 private:
  // About a microsecond or two of spinning (PAUSE takes tens of cycles).
  static constexpr int kSpins = 100;
  static void Pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  std::mutex mu_;
};

}  // namespace litmus::internal
