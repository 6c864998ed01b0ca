// Tests of the catalog's entry storage: TensorEntries hands out entries that never move (the
// reader's cache keys are their addresses) and finds them by position across chunks of growing
// size; an entry is 16 bytes and finds its index file and rare parts through EntryFiles; its
// public form carries them all; WorkerEntries keeps one step's entries in worker order whatever
// the insertion order (also for hundreds of workers), finds them by worker, and puts the
// lexicographically smallest worker first (smdebug's default).
#include "catalog_entries.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace litmus::internal {
namespace {

// Index files, one per worker name, that entries refer to.
class Files {
 public:
  uint32_t Of(const std::string& worker) {
    auto [it, inserted] = numbers_.try_emplace(worker, 0);
    if (inserted) it->second = files_.Add(worker, Mode::kTrain, 0, "e");
    return it->second;
  }
  const EntryFiles& files() const { return files_; }

 private:
  EntryFiles files_;
  std::map<std::string, uint32_t> numbers_;
};

CatalogEntry* NewEntry(TensorEntries& entries, Files& files, const std::string& worker) {
  CatalogEntry& entry = entries.Append();
  entry.file = files.Of(worker);
  return &entry;
}

TEST(TensorEntriesTest, EntriesNeverMoveAndAreFoundByPosition) {
  TensorEntries entries;
  EXPECT_TRUE(entries.empty());
  std::vector<CatalogEntry*> handed_out;
  constexpr size_t kCount = 30000;  // the doubling chunks (8 .. 4096: 8184 entries), then fixed ones
  for (size_t i = 0; i < kCount; ++i) {
    CatalogEntry& entry = entries.Append();
    // default-constructed
    EXPECT_FALSE(entry.has_location());
    EXPECT_FALSE(entry.has_extras);
    entry.start_low = static_cast<uint32_t>(i);
    handed_out.push_back(&entry);
    ASSERT_EQ(entries.size(), i + 1);
    ASSERT_EQ(&entries.back(), &entry);
  }
  for (size_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(&entries[i], handed_out[i]) << i;
    ASSERT_EQ(entries[i].start_low, i);
  }
  // Chunks never hold more than one chunk of unused entries.
  EXPECT_LT(entries.capacity(), kCount + TensorEntries::kMaxChunk);
  // Moving the owner keeps the entries where they are.
  TensorEntries moved(std::move(entries));
  EXPECT_EQ(&moved[kCount - 1], handed_out.back());
}

TEST(TensorEntriesTest, SmallTensorsHoldLittle) {
  TensorEntries entries;
  for (int i = 0; i < 3; ++i) entries.Append();
  EXPECT_EQ(entries.capacity(), TensorEntries::kFirstChunk);
  for (int i = 0; i < 20; ++i) entries.Append();
  EXPECT_LT(entries.capacity(), 2 * entries.size() + TensorEntries::kFirstChunk);
}

TEST(CatalogEntryTest, TwelveBytesAndLengthsSaturate) {
  static_assert(sizeof(CatalogEntry) == 12);
  EXPECT_EQ(CatalogEntry::SaturatedLength(40), 40u);
  EXPECT_EQ(CatalogEntry::SaturatedLength((uint64_t{1} << 33) + 5), UINT32_MAX);
  CatalogEntry entry;
  entry.file = (uint32_t{1} << 30) - 1;  // the largest file number does not touch the flags
  EXPECT_FALSE(entry.has_extras);
  EXPECT_FALSE(entry.wide_start);
  EXPECT_EQ(EntryFiles::kMaxFiles, size_t{1} << 30);
}

// Offsets of 2^32 and beyond (an event file above 4 GiB) keep all their bits, in the entry's
// side-table row, beside its shape and stored reductions; an offset set again below 2^32 reads
// back as set, whatever it was before.
TEST(CatalogEntryTest, OffsetsBeyondFourGiBAreKeptWhole) {
  EntryFiles files;
  const uint32_t number = files.Add("worker_0", Mode::kTrain, 1, "events/0.tfevents");
  TensorEntries entries;
  CatalogEntry& small = entries.Append();
  small.file = number;
  files.SetStart(small, UINT32_MAX);
  EXPECT_EQ(files.start(small), UINT32_MAX);
  EXPECT_FALSE(small.wide_start);
  EXPECT_EQ(files.extras(small), nullptr);

  CatalogEntry& wide = entries.Append();
  wide.file = number;
  wide.length = 100;
  const uint64_t far = (uint64_t{5} << 32) + 12345;
  files.SetStart(wide, far);
  EXPECT_TRUE(wide.wide_start);
  EXPECT_EQ(files.start(wide), far);
  EXPECT_EQ(wide.file, number);  // (the flags beside the number leave it alone)
  EXPECT_EQ(files.shape(wide), nullptr);  // a row, but no shape
  files.MutableExtras(wide).shape = std::vector<int64_t>{4};
  EXPECT_EQ(files.start(wide), far);
  const TensorEntry public_form = files.ToTensorEntry(wide, "t");
  ASSERT_TRUE(public_form.location);
  EXPECT_EQ(public_form.location->start_idx, far);
  EXPECT_EQ(public_form.shape, (std::vector<int64_t>{4}));

  files.SetStart(wide, 77);
  EXPECT_EQ(files.start(wide), 77u);
  EXPECT_EQ(*files.shape(wide), (std::vector<int64_t>{4}));
}

TEST(CatalogEntryTest, PublicFormCarriesTheFileTheLocationAndTheExtras) {
  EntryFiles files;
  files.Add("worker_0", Mode::kTrain, 1, "events/0.tfevents");
  const uint32_t number = files.Add("worker_1", Mode::kEval, 7, "events/x.tfevents");
  EXPECT_EQ(number, 1u);
  TensorEntries entries;
  CatalogEntry& entry = entries.Append();
  entry.file = number;
  TensorEntry plain = files.ToTensorEntry(entry, "a/b");
  EXPECT_EQ(plain.worker, "worker_1");
  EXPECT_EQ(plain.mode, Mode::kEval);
  EXPECT_EQ(plain.mode_step, 7);
  ASSERT_NE(plain.event_file, nullptr);
  EXPECT_EQ(*plain.event_file, "events/x.tfevents");
  EXPECT_FALSE(plain.location);
  EXPECT_FALSE(plain.shape);
  EXPECT_TRUE(plain.stored_reductions.empty());
  EXPECT_EQ(files.shape(entry), nullptr);
  EXPECT_EQ(files.extras(entry), nullptr);
  EXPECT_FALSE(files.has_stored_reductions(entry));

  files.SetStart(entry, 40);
  entry.length = 100;
  EXPECT_TRUE(entry.has_location());
  files.MutableExtras(entry).shape = std::vector<int64_t>{2, 3};
  files.MutableExtras(entry).stored_reductions[{layout::Reduction::kMax, true}] = IndexEntry{"r", 140, 20};
  EXPECT_TRUE(entry.has_extras);
  EXPECT_EQ(entry.file, number);  // (the flag beside the number leaves it alone)
  const TensorEntry full = files.ToTensorEntry(entry, "a/b");
  ASSERT_TRUE(full.location);
  EXPECT_EQ(full.location->tensor_name, "a/b");
  EXPECT_EQ(full.location->start_idx, 40u);
  EXPECT_EQ(full.location->length, 100u);
  EXPECT_EQ(full.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_NE(files.shape(entry), nullptr);
  EXPECT_EQ(*files.shape(entry), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(files.has_stored_reductions(entry));
  ASSERT_EQ(full.stored_reductions.size(), 1u);
  EXPECT_EQ(full.stored_reductions.begin()->second.start_idx, 140u);
  // Another entry of the same file has extras of its own.
  CatalogEntry& other = entries.Append();
  other.file = number;
  EXPECT_EQ(files.extras(other), nullptr);
  files.MutableExtras(other).shape = std::vector<int64_t>{5};
  EXPECT_EQ(*files.shape(other), (std::vector<int64_t>{5}));
  EXPECT_EQ(*files.shape(entry), (std::vector<int64_t>{2, 3}));
}

// Files keep their numbers and addresses; names are kept once per worker, event file names
// (short ones packed in blocks, long ones on their own) keep their text.
TEST(EntryFilesTest, FilesKeepTheirNumbersAddressesAndNames) {
  EntryFiles files;
  std::vector<const IndexFileInfo*> added;
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) {
    // (Every 1000th name is longer than a quarter of a text block.)
    names.push_back(i % 1000 == 999 ? std::string(20000, static_cast<char>('a' + i % 26))
                                    : "events/" + std::to_string(i) + "/" + std::to_string(i) + ".tfevents");
    const uint32_t n = files.Add("worker_" + std::to_string(i % 3), Mode::kTrain, i, names.back());
    ASSERT_EQ(n, static_cast<uint32_t>(i));
    added.push_back(&files[n]);
  }
  EXPECT_EQ(files.size(), 5000u);
  for (int i = 0; i < 5000; ++i) {
    const IndexFileInfo& file = files[static_cast<uint32_t>(i)];
    ASSERT_EQ(&file, added[i]);
    ASSERT_EQ(file.mode_step, i);
    ASSERT_EQ(file.event_file, names[i]) << i;
    ASSERT_EQ(*file.worker, "worker_" + std::to_string(i % 3));
    ASSERT_EQ(file.worker, files[static_cast<uint32_t>(i % 3)].worker);  // one copy a worker
  }
}

TEST(WorkerEntriesTest, EmptySingleAndSeveral) {
  TensorEntries entries;
  Files files;
  WorkerEntries by_worker;
  EXPECT_TRUE(by_worker.view().empty());
  EXPECT_EQ(by_worker.view().Find("worker_0", files.files()), nullptr);

  CatalogEntry* b = NewEntry(entries, files, "worker_b");
  by_worker.Insert(b, files.files());
  ASSERT_EQ(by_worker.view().size(), 1u);
  EXPECT_EQ(&by_worker.view().front(), b);
  EXPECT_EQ(by_worker.view().Find("worker_b", files.files()), b);
  EXPECT_EQ(by_worker.view().Find("worker_a", files.files()), nullptr);

  CatalogEntry* c = NewEntry(entries, files, "worker_c");
  CatalogEntry* a = NewEntry(entries, files, "worker_a");
  CatalogEntry* ab = NewEntry(entries, files, "worker_ab");
  by_worker.Insert(c, files.files());
  by_worker.Insert(a, files.files());
  by_worker.Insert(ab, files.files());
  const StepEntryList view = by_worker.view();
  std::vector<std::string> order;
  for (size_t i = 0; i < view.size(); ++i) order.push_back(files.files().worker(view[i]));
  EXPECT_EQ(order, (std::vector<std::string>{"worker_a", "worker_ab", "worker_b", "worker_c"}));
  EXPECT_EQ(&view.front(), a);
  EXPECT_EQ(view.Find("worker_c", files.files()), c);
  EXPECT_EQ(view.Find("worker_ab", files.files()), ab);
  EXPECT_EQ(view.Find("worker", files.files()), nullptr);
}

// The step maps hold one WorkerEntries per (tensor, step) and move them as they grow: one
// pointer in size, and a move hands the list over (ASan would report a leak or a double free).
TEST(WorkerEntriesTest, OnePointerLargeAndMovesOwnTheirList) {
  static_assert(sizeof(WorkerEntries) == sizeof(void*));
  TensorEntries entries;
  Files files;
  WorkerEntries several;
  several.Insert(NewEntry(entries, files, "worker_1"), files.files());
  several.Insert(NewEntry(entries, files, "worker_0"), files.files());
  CatalogEntry* only = NewEntry(entries, files, "worker_9");
  WorkerEntries single(only);

  WorkerEntries moved(std::move(several));
  EXPECT_TRUE(several.view().empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  ASSERT_EQ(moved.view().size(), 2u);
  EXPECT_EQ(files.files().worker(moved.view().front()), "worker_0");
  moved = std::move(single);  // frees the list of two
  ASSERT_EQ(moved.view().size(), 1u);
  EXPECT_EQ(&moved.view().front(), only);
  std::vector<WorkerEntries> grown;
  for (int i = 0; i < 100; ++i) {
    grown.emplace_back();
    grown.back().Insert(NewEntry(entries, files, "worker_b"), files.files());
    grown.back().Insert(NewEntry(entries, files, "worker_a"), files.files());
  }
  for (const WorkerEntries& step : grown) {
    ASSERT_EQ(step.view().size(), 2u);
    EXPECT_EQ(files.files().worker(step.view()[0]), "worker_a");
    EXPECT_EQ(step.view().Find("worker_b", files.files()), &step.view()[1]);
  }
}

TEST(WorkerEntriesTest, HundredsOfWorkersInAnyOrder) {
  TensorEntries entries;
  Files files;
  WorkerEntries by_worker;
  std::vector<std::string> workers;
  for (int i = 0; i < 300; ++i) workers.push_back("worker_" + std::to_string((i * 7919) % 300));
  std::map<std::string, CatalogEntry*> expected;
  for (const std::string& w : workers) {
    CatalogEntry* e = NewEntry(entries, files, w);
    by_worker.Insert(e, files.files());
    expected[w] = e;
  }
  const StepEntryList view = by_worker.view();
  ASSERT_EQ(view.size(), 300u);
  auto want = expected.begin();
  for (size_t i = 0; i < view.size(); ++i) {
    EXPECT_EQ(&view[i], want->second);
    ++want;
  }
  for (const auto& [w, e] : expected) EXPECT_EQ(view.Find(w, files.files()), e) << w;
  EXPECT_EQ(view.Find("worker_300", files.files()), nullptr);
  EXPECT_EQ(view.Find("", files.files()), nullptr);
  EXPECT_EQ(&view.front(), expected.begin()->second);
}

}  // namespace
}  // namespace litmus::internal
