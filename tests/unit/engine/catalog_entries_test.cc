// Tests of the catalog's entry storage: EntryArena hands out entries that never move (the
// reader's cache keys are their addresses) across many chunks; WorkerEntries keeps one step's
// entries in worker order whatever the insertion order, finds them by worker, and puts the
// lexicographically smallest worker first (smdebug's default worker).
#include "catalog_entries.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace litmus::internal {
namespace {

TEST(EntryArenaTest, EntriesNeverMove) {
  EntryArena arena;
  std::vector<TensorEntry*> handed_out;
  for (int i = 0; i < 10000; ++i) {
    TensorEntry* entry = arena.New();
    ASSERT_NE(entry, nullptr);
    EXPECT_TRUE(entry->worker.empty());  // default-constructed
    entry->worker = "worker_" + std::to_string(i);
    handed_out.push_back(entry);
  }
  for (int i = 0; i < 10000; ++i) EXPECT_EQ(handed_out[i]->worker, "worker_" + std::to_string(i));
  EXPECT_GT(arena.chunks().size(), 1u);
}

TEST(WorkerEntriesTest, EmptySingleAndSeveral) {
  EntryArena arena;
  WorkerEntries by_worker;
  EXPECT_TRUE(by_worker.all().empty());
  EXPECT_EQ(by_worker.Find("worker_0"), nullptr);

  TensorEntry* b = arena.New();
  b->worker = "worker_b";
  by_worker.Insert(b);
  ASSERT_EQ(by_worker.all().size(), 1u);
  EXPECT_EQ(&by_worker.front(), b);
  EXPECT_EQ(by_worker.Find("worker_b"), b);
  EXPECT_EQ(by_worker.Find("worker_a"), nullptr);

  TensorEntry* c = arena.New();
  c->worker = "worker_c";
  TensorEntry* a = arena.New();
  a->worker = "worker_a";
  TensorEntry* ab = arena.New();
  ab->worker = "worker_ab";
  by_worker.Insert(c);
  by_worker.Insert(a);
  by_worker.Insert(ab);
  std::vector<std::string> order;
  for (const TensorEntry* e : by_worker.all()) order.push_back(e->worker);
  EXPECT_EQ(order, (std::vector<std::string>{"worker_a", "worker_ab", "worker_b", "worker_c"}));
  EXPECT_EQ(&by_worker.front(), a);
  EXPECT_EQ(by_worker.Find("worker_c"), c);
  EXPECT_EQ(by_worker.Find("worker_ab"), ab);
  EXPECT_EQ(by_worker.Find("worker"), nullptr);
}

}  // namespace
}  // namespace litmus::internal
