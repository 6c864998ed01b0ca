// SharedArena: memfd, first-fit block list, read-only mapping for workers. Thread-safe.
#include "isolation/shared_arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <string>

namespace litmus::isolation {
namespace {

constexpr size_t kAlignment = 64;

size_t RoundUp(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

StatusOr<std::shared_ptr<SharedArena>> SharedArena::Create(size_t size) {
  size = RoundUp(size == 0 ? kAlignment : size);
  const int fd = memfd_create("litmus-tensor-arena", MFD_CLOEXEC);
  if (fd < 0) return InternalError(Errno("shared tensor memory: memfd_create"));
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const Status s = InternalError(Errno("shared tensor memory: ftruncate"));
    close(fd);
    return s;
  }
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const Status s = InternalError(Errno("shared tensor memory: mmap"));
    close(fd);
    return s;
  }
  return std::shared_ptr<SharedArena>(new SharedArena(fd, static_cast<std::byte*>(base), size));
}

SharedArena::SharedArena(int fd, std::byte* base, size_t size) : fd_(fd), base_(base), size_(size) {
  free_.emplace(0, size);
}

SharedArena::~SharedArena() {
  munmap(base_, size_);
  close(fd_);
}

std::shared_ptr<std::byte[]> SharedArena::Allocate(size_t size) {
  const size_t rounded = RoundUp(size == 0 ? 1 : size);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < rounded) continue;
      const size_t offset = it->first;
      const size_t left = it->second - rounded;
      free_.erase(it);
      if (left > 0) free_.emplace(offset + rounded, left);
      used_ += rounded;
      std::shared_ptr<SharedArena> self = shared_from_this();
      return std::shared_ptr<std::byte[]>(base_ + offset, [self, offset, rounded](std::byte*) {
        self->Free(offset, rounded);
      });
    }
  }
  return std::shared_ptr<std::byte[]>(new std::byte[size]);
}

void SharedArena::Free(size_t offset, size_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  used_ -= size;
  auto next = free_.lower_bound(offset);
  // Merge with the following block, then with the preceding one.
  if (next != free_.end() && offset + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += size;
      return;
    }
  }
  free_.emplace_hint(next, offset, size);
}

bool SharedArena::Contains(const void* data, size_t size, uint64_t* offset) const {
  const auto* p = static_cast<const std::byte*>(data);
  if (p < base_ || p > base_ + size_ || size > static_cast<size_t>(base_ + size_ - p)) return false;
  *offset = static_cast<uint64_t>(p - base_);
  return true;
}

StatusOr<int> SharedArena::OpenReadOnly() const {
  const std::string path = "/proc/self/fd/" + std::to_string(fd_);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return InternalError(Errno(("shared tensor memory: open " + path).c_str()));
  return fd;
}

size_t SharedArena::used() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

StatusOr<std::unique_ptr<ReadOnlyMapping>> ReadOnlyMapping::Map(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const Status s = InternalError(Errno("shared tensor memory: fstat"));
    close(fd);
    return s;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* base = size == 0 ? nullptr : mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);  // the mapping keeps the memory
  if (base == MAP_FAILED) return InternalError(Errno("shared tensor memory: mmap (read-only)"));
  return std::unique_ptr<ReadOnlyMapping>(new ReadOnlyMapping(static_cast<const std::byte*>(base), size));
}

ReadOnlyMapping::~ReadOnlyMapping() {
  if (base_ != nullptr) munmap(const_cast<std::byte*>(base_), size_);
}

const std::byte* ReadOnlyMapping::At(uint64_t offset, uint64_t size) const {
  if (offset > size_ || size > size_ - offset) return nullptr;
  return base_ + offset;
}

}  // namespace litmus::isolation
