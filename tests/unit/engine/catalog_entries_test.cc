// Tests of the catalog's entry storage: EntryArena hands out entries that never move (the
// reader's cache keys are their addresses) across many chunks; a CatalogEntry's public form
// carries its index file's data, its location and its rare parts; WorkerEntries keeps one step's
// entries in worker order whatever the insertion order (also for hundreds of workers), finds
// them by worker, and puts the lexicographically smallest worker first (smdebug's default).
#include "catalog_entries.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace litmus::internal {
namespace {

// Index files, one per worker name, that entries point to (addresses stable, as the catalog's).
class Files {
 public:
  const IndexFileInfo* Of(const std::string& worker) {
    auto [it, inserted] = files_.try_emplace(worker);
    if (inserted) it->second.worker = worker;
    return &it->second;
  }

 private:
  std::map<std::string, IndexFileInfo> files_;
};

CatalogEntry* NewEntry(EntryArena& arena, Files& files, const std::string& worker) {
  CatalogEntry* entry = arena.New();
  entry->file = files.Of(worker);
  return entry;
}

TEST(EntryArenaTest, EntriesNeverMove) {
  EntryArena arena;
  std::vector<CatalogEntry*> handed_out;
  for (int i = 0; i < 10000; ++i) {
    CatalogEntry* entry = arena.New();
    ASSERT_NE(entry, nullptr);
    // default-constructed
    EXPECT_EQ(entry->file, nullptr);
    EXPECT_FALSE(entry->has_location());
    EXPECT_EQ(entry->extras(), nullptr);
    entry->start_idx = static_cast<uint64_t>(i);
    handed_out.push_back(entry);
  }
  for (int i = 0; i < 10000; ++i) EXPECT_EQ(handed_out[i]->start_idx, static_cast<uint64_t>(i));
  EXPECT_GT(arena.chunks().size(), 1u);
}

TEST(CatalogEntryTest, PublicFormCarriesTheFileTheLocationAndTheExtras) {
  IndexFileInfo file{"worker_1", Mode::kEval, 7, std::make_shared<const std::string>("events/x.tfevents"), nullptr};
  CatalogEntry entry;
  entry.file = &file;
  TensorEntry plain = entry.ToTensorEntry("a/b");
  EXPECT_EQ(plain.worker, "worker_1");
  EXPECT_EQ(plain.mode, Mode::kEval);
  EXPECT_EQ(plain.mode_step, 7);
  EXPECT_EQ(plain.event_file, file.event_file);
  EXPECT_FALSE(plain.location);
  EXPECT_FALSE(plain.shape);
  EXPECT_TRUE(plain.stored_reductions.empty());
  EXPECT_EQ(entry.shape(), nullptr);
  EXPECT_FALSE(entry.has_stored_reductions());

  entry.start_idx = 40;
  entry.length = 100;
  EXPECT_TRUE(entry.has_location());
  entry.MutableExtras().shape = std::vector<int64_t>{2, 3};
  entry.MutableExtras().stored_reductions[{layout::Reduction::kMax, true}] = IndexEntry{"r", 140, 20};
  const TensorEntry full = entry.ToTensorEntry("a/b");
  ASSERT_TRUE(full.location);
  EXPECT_EQ(full.location->tensor_name, "a/b");
  EXPECT_EQ(full.location->start_idx, 40u);
  EXPECT_EQ(full.location->length, 100u);
  EXPECT_EQ(full.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_NE(entry.shape(), nullptr);
  EXPECT_EQ(*entry.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(entry.has_stored_reductions());
  ASSERT_EQ(full.stored_reductions.size(), 1u);
  EXPECT_EQ(full.stored_reductions.begin()->second.start_idx, 140u);
}

TEST(WorkerEntriesTest, EmptySingleAndSeveral) {
  EntryArena arena;
  WorkerEntries by_worker;
  EXPECT_TRUE(by_worker.all().empty());
  EXPECT_EQ(by_worker.Find("worker_0"), nullptr);

  Files files;
  CatalogEntry* b = NewEntry(arena, files, "worker_b");
  by_worker.Insert(b);
  ASSERT_EQ(by_worker.all().size(), 1u);
  EXPECT_EQ(&by_worker.front(), b);
  EXPECT_EQ(by_worker.Find("worker_b"), b);
  EXPECT_EQ(by_worker.Find("worker_a"), nullptr);

  CatalogEntry* c = NewEntry(arena, files, "worker_c");
  CatalogEntry* a = NewEntry(arena, files, "worker_a");
  CatalogEntry* ab = NewEntry(arena, files, "worker_ab");
  by_worker.Insert(c);
  by_worker.Insert(a);
  by_worker.Insert(ab);
  std::vector<std::string> order;
  for (const CatalogEntry* e : by_worker.all()) order.push_back(e->worker());
  EXPECT_EQ(order, (std::vector<std::string>{"worker_a", "worker_ab", "worker_b", "worker_c"}));
  EXPECT_EQ(&by_worker.front(), a);
  EXPECT_EQ(by_worker.Find("worker_c"), c);
  EXPECT_EQ(by_worker.Find("worker_ab"), ab);
  EXPECT_EQ(by_worker.Find("worker"), nullptr);
}

// The step maps hold one WorkerEntries per (tensor, step) and move them as they grow: one
// pointer in size, and a move hands the list over (ASan would report a leak or a double free).
TEST(WorkerEntriesTest, OnePointerLargeAndMovesOwnTheirList) {
  static_assert(sizeof(WorkerEntries) == sizeof(void*));
  EntryArena arena;
  Files files;
  WorkerEntries several;
  several.Insert(NewEntry(arena, files, "worker_1"));
  several.Insert(NewEntry(arena, files, "worker_0"));
  WorkerEntries single;
  CatalogEntry* only = NewEntry(arena, files, "worker_9");
  single.Insert(only);

  WorkerEntries moved(std::move(several));
  EXPECT_TRUE(several.all().empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  ASSERT_EQ(moved.all().size(), 2u);
  EXPECT_EQ(moved.front().worker(), "worker_0");
  moved = std::move(single);  // frees the list of two
  ASSERT_EQ(moved.all().size(), 1u);
  EXPECT_EQ(&moved.front(), only);
  std::vector<WorkerEntries> grown;
  for (int i = 0; i < 100; ++i) {
    grown.emplace_back();
    grown.back().Insert(NewEntry(arena, files, "worker_b"));
    grown.back().Insert(NewEntry(arena, files, "worker_a"));
  }
  for (const WorkerEntries& entries : grown) {
    ASSERT_EQ(entries.all().size(), 2u);
    EXPECT_EQ(entries.all()[0]->worker(), "worker_a");
    EXPECT_EQ(entries.Find("worker_b"), entries.all()[1]);
  }
}

TEST(WorkerEntriesTest, HundredsOfWorkersInAnyOrder) {
  EntryArena arena;
  WorkerEntries by_worker;
  std::vector<std::string> workers;
  for (int i = 0; i < 300; ++i) workers.push_back("worker_" + std::to_string((i * 7919) % 300));
  Files files;
  std::map<std::string, CatalogEntry*> expected;
  for (const std::string& w : workers) {
    CatalogEntry* e = NewEntry(arena, files, w);
    by_worker.Insert(e);
    expected[w] = e;
  }
  ASSERT_EQ(by_worker.all().size(), 300u);
  auto want = expected.begin();
  for (const CatalogEntry* e : by_worker.all()) {
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
