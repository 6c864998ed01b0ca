// StepTable (isolation/step_table.h): what the runner writes for a step and what a worker finds
// through its read-only mapping: every row's value, shape, mode and usable reductions, lookups in
// any order, and tables or rows that point outside the shared memory refused.
#include "isolation/step_table.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "isolation/tensor_table.h"
#include "litmus/format/env.h"
#include "litmus/rule_abi.h"
#include "support/temp_dir.h"

namespace litmus::isolation {
namespace {

struct Fixture {
  std::shared_ptr<SharedArena> arena;
  std::unique_ptr<ReadOnlyMapping> mapping;
  std::unique_ptr<Trial> trial;
  std::vector<std::string> names;  // the values' names (ReadKey views them)
  std::vector<ReadValue> values;   // sorted
};

// pt_exploding read into a shared arena: every tensor at steps 0..2.
Fixture Open() {
  Fixture f;
  auto arena = SharedArena::Create(64 << 20);
  EXPECT_TRUE(arena.ok()) << arena.status().ToString();
  f.arena = *arena;
  StatusOr<int> fd = f.arena->OpenReadOnly();
  EXPECT_TRUE(fd.ok());
  auto mapping = ReadOnlyMapping::Map(*fd);
  EXPECT_TRUE(mapping.ok());
  f.mapping = std::move(mapping).value();
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  options.record_buffers = f.arena;
  auto trial = Trial::Open(Env::Default(), testing::FixturePath("pt_exploding").string(), options);
  EXPECT_TRUE(trial.ok()) << trial.status().ToString();
  f.trial = std::move(trial).value();
  f.names = f.trial->TensorNames();
  std::sort(f.names.begin(), f.names.end());
  for (const std::string& name : f.names) {
    for (int64_t step = 0; step <= 2; ++step) {
      StatusOr<TensorPtr> value = f.trial->Value(name, step);
      if (value.ok()) f.values.push_back({ReadKey{.trial = 0, .name = name, .step = step}, *value, false});
    }
  }
  return f;
}

// The table of every value of the fixture.
std::shared_ptr<const StepTable> BuildTable(Fixture& f) {
  Trial* trials[] = {f.trial.get()};
  return StepTable::Build(*f.arena, f.values, trials);
}

TEST(StepTable, WorkersFindEveryValueAsTheRunnerDecodedIt) {
  Fixture f = Open();
  ASSERT_GT(f.values.size(), 3u);
  // A reduction computed before the table is built travels with it.
  const ReadValue& first = f.values.front();
  ASSERT_TRUE(f.trial->Reduction(first.key.name, first.key.step, layout::Reduction::kMean, true).ok());
  std::shared_ptr<const StepTable> table = BuildTable(f);
  ASSERT_NE(table, nullptr);
  StepTableView view;
  ASSERT_TRUE(view.Open(*f.mapping, table->offset(), table->size()));
  ASSERT_EQ(view.rows(), f.values.size());
  // In reverse order: every lookup is a search, not the next row.
  for (auto it = f.values.rbegin(); it != f.values.rend(); ++it) {
    SCOPED_TRACE(std::string(it->key.name) + " at " + std::to_string(it->key.step));
    const int64_t index = view.Find(0, it->key.name, it->key.step);
    ASSERT_GE(index, 0);
    const StepTableRow& row = view.Row(static_cast<size_t>(index));
    const Tensor& t = *it->value;
    ASSERT_EQ(row.data_bytes, t.bytes().size());
    const std::byte* data = f.mapping->At(row.data_offset, row.data_bytes);
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(std::memcmp(data, t.bytes().data(), t.bytes().size()), 0);
    EXPECT_EQ(row.dtype, static_cast<int32_t>(t.dtype()));
    EXPECT_EQ(row.num_elements, t.num_elements());
    ASSERT_EQ(row.rank, t.shape().size());
    for (uint32_t d = 0; d < row.rank; ++d) EXPECT_EQ(view.Shape(row)[d], t.shape()[d]);
    const auto mode = f.trial->ModeOfGlobalStep(it->key.step);
    ASSERT_TRUE(mode.has_value());
    EXPECT_EQ(row.mode, static_cast<int32_t>(mode->first));
    EXPECT_EQ(row.mode_step, mode->second);
    std::array<double, kMemoKeys> memos{};
    EXPECT_EQ(row.memo_mask, UsableMemos(t, false, memos));
  }
  const int64_t index = view.Find(0, first.key.name, first.key.step);
  ASSERT_GE(index, 0);
  const StepTableRow& row = view.Row(static_cast<size_t>(index));
  const uint32_t mean_abs = static_cast<uint32_t>(layout::Reduction::kMean) * 2 + 1;
  ASSERT_NE(row.memo_mask & (1u << mean_abs), 0u) << "the computed abs mean is usable";
  EXPECT_EQ(*view.Memos(row), *f.trial->Reduction(first.key.name, first.key.step, layout::Reduction::kMean, true));
  // What is not in the table is not found.
  EXPECT_LT(view.Find(0, "no such tensor", 0), 0);
  EXPECT_LT(view.Find(0, first.key.name, 999), 0);
  EXPECT_LT(view.Find(1, first.key.name, first.key.step), 0);
}

// A rule that asks step by step (every tensor at one step, then the next step), skipping
// tensors, or asking for what the table lacks in between, finds exactly the rows of its keys.
TEST(StepTable, LookupsStepByStepFindTheirOwnRows) {
  Fixture f = Open();
  std::shared_ptr<const StepTable> table = BuildTable(f);
  ASSERT_NE(table, nullptr);
  StepTableView view;
  ASSERT_TRUE(view.Open(*f.mapping, table->offset(), table->size()));
  ASSERT_GE(f.names.size(), 4u);
  for (const size_t skip : {0, 2, 3}) {
    for (int64_t step = 0; step <= 2; ++step) {
      for (size_t n = 0; n < f.names.size(); ++n) {
        if (skip != 0 && n % skip == 1) continue;
        if (n == 2) {
          EXPECT_LT(view.Find(0, f.names[n] + "~", step), 0);  // between two names
        }
        const auto expected = std::find_if(f.values.begin(), f.values.end(), [&](const ReadValue& v) {
          return v.key.name == f.names[n] && v.key.step == step;
        });
        const int64_t index = view.Find(0, f.names[n], step);
        if (expected == f.values.end()) {
          EXPECT_LT(index, 0) << f.names[n] << " at " << step;
        } else {
          EXPECT_EQ(index, expected - f.values.begin()) << f.names[n] << " at " << step << ", skip " << skip;
        }
      }
    }
  }
}

// Two trials' rows, some tensors without their middle step: lookups in a scrambled order (each a
// search through the index of the table's tensors) find exactly the row of their key, and
// nothing for a key the table lacks.
TEST(StepTable, SearchesOfTwoTrialsFindTheirRows) {
  Fixture f = Open();
  std::vector<ReadValue> values;
  for (const uint32_t trial : {0u, 1u}) {
    for (const ReadValue& v : f.values) {
      const auto n = std::find(f.names.begin(), f.names.end(), v.key.name) - f.names.begin();
      if (v.key.step == 1 && n % 3 == 0) continue;  // (a gap in every third tensor's steps)
      values.push_back({ReadKey{.trial = trial, .name = v.key.name, .step = v.key.step}, v.value, false});
    }
  }
  std::sort(values.begin(), values.end());
  Trial* trials[] = {f.trial.get(), f.trial.get()};
  std::shared_ptr<const StepTable> table = StepTable::Build(*f.arena, values, trials);
  ASSERT_NE(table, nullptr);
  StepTableView view;
  ASSERT_TRUE(view.Open(*f.mapping, table->offset(), table->size()));
  ASSERT_EQ(view.rows(), values.size());
  ASSERT_LT(values.size(), 2 * f.values.size()) << "no gaps";
  size_t found = 0;
  for (size_t i = 0; i < 7 * values.size(); ++i) {
    const size_t k = (i * 7919) % values.size();  // scrambled
    const ReadKey& key = values[k].key;
    for (const int64_t step : {key.step, key.step + 1}) {
      const auto expected = std::find_if(values.begin(), values.end(), [&](const ReadValue& v) {
        return v.key.trial == key.trial && v.key.name == key.name && v.key.step == step;
      });
      const int64_t index = view.Find(key.trial, key.name, step);
      if (expected == values.end()) {
        EXPECT_LT(index, 0) << key.trial << " " << key.name << " at " << step;
      } else {
        EXPECT_EQ(index, expected - values.begin()) << key.trial << " " << key.name << " at " << step;
        ++found;
      }
    }
  }
  EXPECT_GT(found, 7 * values.size());
  EXPECT_LT(view.Find(2, values.front().key.name, values.front().key.step), 0);
  EXPECT_LT(view.Find(0, "zzz not a tensor", 0), 0);
  // Closed (a request without a table), then the same table again: nothing, then every row.
  view.Close();
  EXPECT_LT(view.Find(values.back().key.trial, values.back().key.name, values.back().key.step), 0);
  ASSERT_TRUE(view.Open(*f.mapping, table->offset(), table->size()));
  EXPECT_EQ(view.Find(values.back().key.trial, values.back().key.name, values.back().key.step),
            static_cast<int64_t>(values.size()) - 1);
}

TEST(StepTable, StoredReductionsTakePrecedenceOverMemos) {
  Fixture f = Open();
  ReadValue& first = f.values.front();
  ASSERT_TRUE(f.trial->Reduction(first.key.name, first.key.step, layout::Reduction::kMax, false).ok());
  first.stored_reductions = true;
  std::shared_ptr<const StepTable> table = BuildTable(f);
  ASSERT_NE(table, nullptr);
  StepTableView view;
  ASSERT_TRUE(view.Open(*f.mapping, table->offset(), table->size()));
  const int64_t index = view.Find(0, first.key.name, first.key.step);
  ASSERT_GE(index, 0);
  EXPECT_EQ(view.Row(static_cast<size_t>(index)).memo_mask, 0u);
}

TEST(StepTable, ValuesOutsideTheArenaAreLeftToTheRulesOwnEntries) {
  Fixture f = Open();
  // The same trial read into the heap: no value qualifies, so there is no table.
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  auto heap_trial = Trial::Open(Env::Default(), testing::FixturePath("pt_exploding").string(), options);
  ASSERT_TRUE(heap_trial.ok());
  std::vector<ReadValue> heap_values;
  for (const ReadValue& v : f.values) {
    heap_values.push_back({v.key, *(*heap_trial)->Value(v.key.name, v.key.step), false});
    EXPECT_FALSE(StepTable::Covers(*f.arena, heap_values.back()));
    EXPECT_TRUE(StepTable::Covers(*f.arena, v));
  }
  Trial* trials[] = {heap_trial->get()};
  EXPECT_EQ(StepTable::Build(*f.arena, heap_values, trials), nullptr);
  EXPECT_FALSE(StepTable::Covers(*f.arena, ReadValue{f.values.front().key, nullptr, false}));
}

// A summary (a value the runner read only for its reductions) is listed without data: its row
// has kSummaryOnly and no bytes, its shape as the value's, and those of its memos that were
// asked of the tensor (one made before its reductions were known holds more: the others are
// asked of the runner, which so learns of them); a row that claims data at kSummaryOnly is
// refused.
TEST(StepTable, SummariesAreListedWithTheirMemosAndNoData) {
  Fixture f = Open();
  ReadValue& first = f.values.front();
  LITMUS_ASSERT_OK_AND_ASSIGN(const double mean_abs, f.trial->Reduction(first.key.name, first.key.step, layout::Reduction::kMean, true));
  const TensorPtr whole = first.value;
  ASSERT_FALSE(whole->bytes().empty());
  first.value = Tensor::SummaryOf(*whole);
  first.value->SetMemo(static_cast<uint32_t>(layout::Reduction::kSum) * 2, 1.5);  // (not asked)
  EXPECT_TRUE(StepTable::Covers(*f.arena, first));
  std::shared_ptr<const StepTable> table = BuildTable(f);
  ASSERT_NE(table, nullptr);
  StepTableView view;
  ASSERT_TRUE(view.Open(*f.mapping, table->offset(), table->size()));
  ASSERT_EQ(view.rows(), f.values.size());
  const int64_t index = view.Find(0, first.key.name, first.key.step);
  ASSERT_GE(index, 0);
  const StepTableRow& row = view.Row(static_cast<size_t>(index));
  EXPECT_EQ(row.data_offset, kSummaryOnly);
  EXPECT_EQ(row.data_bytes, 0u);
  EXPECT_EQ(row.num_elements, whole->num_elements());
  ASSERT_EQ(row.rank, whole->shape().size());
  for (uint32_t d = 0; d < row.rank; ++d) EXPECT_EQ(view.Shape(row)[d], whole->shape()[d]);
  const uint32_t key = static_cast<uint32_t>(layout::Reduction::kMean) * 2 + 1;
  ASSERT_EQ(row.memo_mask, 1u << key);
  EXPECT_EQ(*view.Memos(row), mean_abs);
  // The same row claiming bytes at kSummaryOnly points outside the arena: refused.
  const uint64_t size = table->size();
  std::shared_ptr<std::byte[]> copy = f.arena->Allocate(size);
  uint64_t copy_offset = 0;
  ASSERT_TRUE(f.arena->Contains(copy.get(), size, &copy_offset));
  std::memcpy(copy.get(), f.mapping->At(table->offset(), size), size);
  StepTableRow bad = row;
  bad.data_bytes = 4;
  std::memcpy(copy.get() + (reinterpret_cast<const std::byte*>(&row) - f.mapping->At(table->offset(), size)), &bad,
              sizeof(bad));
  ASSERT_TRUE(view.Open(*f.mapping, copy_offset, size));
  EXPECT_LT(view.Find(0, first.key.name, first.key.step), 0);
}

TEST(StepTable, MalformedTablesAndRowsAreRefused) {
  Fixture f = Open();
  std::shared_ptr<const StepTable> table = BuildTable(f);
  ASSERT_NE(table, nullptr);
  StepTableView view;
  EXPECT_FALSE(view.Open(*f.mapping, table->offset(), 8)) << "shorter than its header";
  EXPECT_FALSE(view.Open(*f.mapping, table->offset(), uint64_t{1} << 40)) << "past the arena";
  // A copy of the table with its magic changed, and one with a row's shape outside the table.
  const uint64_t size = table->size();
  const std::byte* original = f.mapping->At(table->offset(), size);
  ASSERT_NE(original, nullptr);
  std::shared_ptr<std::byte[]> copy = f.arena->Allocate(size);
  uint64_t copy_offset = 0;
  ASSERT_TRUE(f.arena->Contains(copy.get(), size, &copy_offset));
  std::memcpy(copy.get(), original, size);
  copy[0] = std::byte{0};
  EXPECT_FALSE(view.Open(*f.mapping, copy_offset, size)) << "not a table";
  std::memcpy(copy.get(), original, size);
  ASSERT_TRUE(view.Open(*f.mapping, copy_offset, size));
  const ReadValue& first = f.values.front();
  const int64_t index = view.Find(0, first.key.name, first.key.step);
  ASSERT_GE(index, 0);
  StepTableRow row = view.Row(static_cast<size_t>(index));
  row.shape_offset = size;
  row.rank = 4;
  std::memcpy(copy.get() + (reinterpret_cast<const std::byte*>(&view.Row(static_cast<size_t>(index))) -
                            f.mapping->At(copy_offset, size)),
              &row, sizeof(row));
  ASSERT_TRUE(view.Open(*f.mapping, copy_offset, size));
  EXPECT_LT(view.Find(0, first.key.name, first.key.step), 0) << "a row whose shape lies outside the table";
}

}  // namespace
}  // namespace litmus::isolation
