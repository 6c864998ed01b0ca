// ProgressSlot (see progress_slot.h).
#include "isolation/progress_slot.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace litmus::isolation {
namespace {

constexpr size_t kSlotBytes = 4096;

std::string Errno(const char* what) { return std::string("progress slot: ") + what + ": " + std::strerror(errno); }

}  // namespace

StatusOr<std::unique_ptr<ProgressSlot>> ProgressSlot::Create() {
  const int fd = memfd_create("litmus-progress", MFD_CLOEXEC);
  if (fd < 0) return InternalError(Errno("memfd_create"));
  if (ftruncate(fd, kSlotBytes) != 0) {
    const Status error = InternalError(Errno("ftruncate"));
    close(fd);
    return error;
  }
  return Map(fd);
}

StatusOr<std::unique_ptr<ProgressSlot>> ProgressSlot::Map(int fd) {
  void* base = mmap(nullptr, kSlotBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const Status error = InternalError(Errno("mmap"));
    close(fd);
    return error;
  }
  return std::unique_ptr<ProgressSlot>(new ProgressSlot(fd, static_cast<Shared*>(base)));
}

ProgressSlot::~ProgressSlot() {
  munmap(shared_, kSlotBytes);
  close(fd_);
}

void ProgressSlot::Reset() {
  shared_->finished.store(0, std::memory_order_relaxed);
  shared_->fired.store(0, std::memory_order_relaxed);
  Set(Call::kNone, 0);
}

void ProgressSlot::Finished(size_t index, bool fired) {
  if (fired && index < kMaxSteps) shared_->fired.fetch_or(uint64_t{1} << index, std::memory_order_relaxed);
  shared_->finished.store(index + 1, std::memory_order_release);
}

void ProgressSlot::Set(Call call, int64_t step) {
  shared_->step.store(step, std::memory_order_relaxed);
  shared_->call.store(static_cast<int32_t>(call), std::memory_order_release);
}

ProgressSlot::Progress ProgressSlot::Get() const {
  Progress p;
  p.call = static_cast<Call>(shared_->call.load(std::memory_order_acquire));
  p.step = shared_->step.load(std::memory_order_relaxed);
  p.finished = static_cast<size_t>(shared_->finished.load(std::memory_order_acquire));
  p.fired = shared_->fired.load(std::memory_order_relaxed);
  return p;
}

}  // namespace litmus::isolation
