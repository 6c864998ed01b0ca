// SharedArena (isolation/shared_arena.h): blocks, reuse and coalescing, heap fallback when full,
// and the worker's view: read-only, and it cannot be made writable.
#include "isolation/shared_arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include <gtest/gtest.h>

namespace litmus::isolation {
namespace {

TEST(SharedArena, BlocksAreInsideAlignedAndReused) {
  auto arena = SharedArena::Create(1 << 20);
  ASSERT_TRUE(arena.ok()) << arena.status().ToString();
  std::shared_ptr<SharedArena> a = *arena;
  uint64_t offset = 0;
  {
    std::shared_ptr<std::byte[]> x = a->Allocate(1000);
    std::shared_ptr<std::byte[]> y = a->Allocate(5000);
    EXPECT_TRUE(a->Contains(x.get(), 1000, &offset));
    EXPECT_EQ(offset % 64, 0u);
    EXPECT_TRUE(a->Contains(y.get(), 5000, &offset));
    EXPECT_EQ(offset % 64, 0u);
    EXPECT_EQ(a->used(), 1024u + 5056u);
    EXPECT_FALSE(a->Contains(y.get(), (1 << 20), &offset));  // runs past the end
    int on_stack = 0;
    EXPECT_FALSE(a->Contains(&on_stack, sizeof(on_stack), &offset));
  }
  EXPECT_EQ(a->used(), 0u);
  // Freed blocks coalesce: the whole arena is one block again.
  std::shared_ptr<std::byte[]> whole = a->Allocate(1 << 20);
  EXPECT_TRUE(a->Contains(whole.get(), 1 << 20, &offset));
  EXPECT_EQ(offset, 0u);
  // Full: the heap serves, outside the arena.
  std::shared_ptr<std::byte[]> spill = a->Allocate(100);
  EXPECT_FALSE(a->Contains(spill.get(), 100, &offset));
}

TEST(SharedArena, OutlivedByItsBlocks) {
  std::shared_ptr<std::byte[]> block;
  {
    auto arena = SharedArena::Create(4096);
    ASSERT_TRUE(arena.ok());
    block = (*arena)->Allocate(100);
  }
  std::memset(block.get(), 1, 100);  // still mapped: the block keeps the arena
}

TEST(SharedArena, WorkerMappingIsReadOnlyAndSeesWrites) {
  auto arena = SharedArena::Create(1 << 16);
  ASSERT_TRUE(arena.ok());
  std::shared_ptr<std::byte[]> block = (*arena)->Allocate(64);
  std::memcpy(block.get(), "tensor bytes", 12);
  uint64_t offset = 0;
  ASSERT_TRUE((*arena)->Contains(block.get(), 64, &offset));
  StatusOr<int> fd = (*arena)->OpenReadOnly();
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  // The descriptor cannot write or grow the memory, nor map it writable.
  EXPECT_EQ(write(*fd, "x", 1), -1);
  EXPECT_EQ(ftruncate(*fd, 1), -1);
  void* writable = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
  EXPECT_EQ(writable, MAP_FAILED);
  auto mapping = ReadOnlyMapping::Map(*fd);
  ASSERT_TRUE(mapping.ok()) << mapping.status().ToString();
  const std::byte* seen = (*mapping)->At(offset, 64);
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(std::memcmp(seen, "tensor bytes", 12), 0);
  EXPECT_EQ((*mapping)->At(1 << 16, 1), nullptr);
  EXPECT_EQ((*mapping)->At(~uint64_t{0}, 2), nullptr);
  // ... and the view cannot be made writable either.
  void* page = const_cast<std::byte*>(seen - offset % 4096);
  EXPECT_NE(mprotect(page, 4096, PROT_READ | PROT_WRITE), 0);
}

}  // namespace
}  // namespace litmus::isolation
