// SharedArena: the memory the runner reads records into when rules run in worker processes, so
// that decoded tensors (views into their record buffers, tensor.h) reach workers without a copy.
// A memfd mapped MAP_SHARED read-write in the runner; workers map it read-only from an O_RDONLY
// descriptor (ReadOnlyMapping), so they cannot write it nor make it writable. Blocks are handed
// out first-fit, 64-byte aligned; when the arena is full a buffer comes from the heap instead
// (the worker then gets that value copied through the socket). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "litmus/engine/trial.h"
#include "litmus/status.h"

namespace litmus::isolation {

class SharedArena : public RecordBufferAllocator, public std::enable_shared_from_this<SharedArena> {
 public:
  // A sparse memfd of `size` bytes (pages are only used once written).
  static StatusOr<std::shared_ptr<SharedArena>> Create(size_t size);
  ~SharedArena() override;

  // A block of the arena, or of the heap when the arena has no room; the block returns to the
  // arena when the last owner drops it (the arena stays alive until then).
  std::shared_ptr<std::byte[]> Allocate(size_t size) override;

  // If [data, data + size) lies inside the arena, its offset.
  bool Contains(const void* data, size_t size, uint64_t* offset) const;
  // A new O_RDONLY|O_CLOEXEC descriptor of the arena for a worker (the caller closes it).
  StatusOr<int> OpenReadOnly() const;
  size_t size() const { return size_; }
  // Bytes in use (for tests).
  size_t used() const;

 private:
  SharedArena(int fd, std::byte* base, size_t size);
  void Free(size_t offset, size_t size);

  const int fd_;
  std::byte* const base_;
  const size_t size_;
  mutable std::mutex mu_;
  std::map<size_t, size_t> free_;  // offset -> size, coalesced
  size_t used_ = 0;
};

// A worker's read-only view of the arena.
class ReadOnlyMapping {
 public:
  // Maps `fd` (an O_RDONLY descriptor from OpenReadOnly) PROT_READ; takes ownership of fd.
  static StatusOr<std::unique_ptr<ReadOnlyMapping>> Map(int fd);
  ~ReadOnlyMapping();
  // [offset, offset + size) if it lies inside the mapping, else nullptr.
  const std::byte* At(uint64_t offset, uint64_t size) const;

 private:
  ReadOnlyMapping(const std::byte* base, size_t size) : base_(base), size_(size) {}
  const std::byte* base_;
  size_t size_;
};

}  // namespace litmus::isolation
