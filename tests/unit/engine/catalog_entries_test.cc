// Tests of the catalog's entry storage: EntryArena hands out entries that never move (the
// reader's cache keys are their addresses) across many chunks; WorkerEntries keeps one step's
// entries in worker order whatever the insertion order (also for hundreds of workers), finds
// them by worker, and puts the lexicographically smallest worker first (smdebug's default).
#include "catalog_entries.h"

#include <map>
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

TEST(WorkerEntriesTest, HundredsOfWorkersInAnyOrder) {
  EntryArena arena;
  WorkerEntries by_worker;
  std::vector<std::string> workers;
  for (int i = 0; i < 300; ++i) workers.push_back("worker_" + std::to_string((i * 7919) % 300));
  std::map<std::string, TensorEntry*> expected;
  for (const std::string& w : workers) {
    TensorEntry* e = arena.New();
    e->worker = w;
    by_worker.Insert(e);
    expected[w] = e;
  }
  ASSERT_EQ(by_worker.all().size(), 300u);
  auto want = expected.begin();
  for (const TensorEntry* e : by_worker.all()) {
    EXPECT_EQ(e, want->second);
    ++want;
  }
  for (const auto& [w, e] : expected) EXPECT_EQ(by_worker.Find(w), e) << w;
  EXPECT_EQ(by_worker.Find("worker_300"), nullptr);
  EXPECT_EQ(by_worker.Find(""), nullptr);
  EXPECT_EQ(&by_worker.front(), expected.begin()->second);
}

}  // namespace
}  // namespace litmus::internal
