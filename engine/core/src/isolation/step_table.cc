// StepTable: writing a step's table into the shared memory, and a worker's lookups in it.
#include "isolation/step_table.h"

#include <algorithm>
#include <cstddef>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include "isolation/tensor_table.h"
#include "litmus/rule_abi.h"

namespace litmus::isolation {
namespace {

constexpr uint64_t kMagic = 0x314c4254504d5453ull;  // "STMPTBL1"

struct Header {
  uint64_t magic;
  uint64_t rows;
  uint64_t serial;  // one per table built: a view opened again on the same table keeps its index
};

std::atomic<uint64_t> g_next_serial{1};

// Sizes rounded up to 8 bytes, so that every part of the table stays aligned.
constexpr uint64_t Aligned(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

}  // namespace

bool StepTable::Covers(const SharedArena& arena, const ReadValue& value) {
  if (value.value == nullptr || value.value->is_string()) return false;
  if (value.value->is_summary()) return true;
  const std::span<const std::byte> bytes = value.value->bytes();
  uint64_t offset = 0;
  return !bytes.empty() && arena.Contains(bytes.data(), bytes.size(), &offset);
}

std::shared_ptr<const StepTable> StepTable::Build(SharedArena& arena, const std::vector<ReadValue>& values,
                                                  std::span<Trial* const> trials) {
  // What goes in, and the sizes of the parts.
  std::vector<const ReadValue*> listed;
  listed.reserve(values.size());
  uint64_t shapes = 0, names = 0, memo_count = 0;
  std::vector<std::pair<uint32_t, std::array<double, kMemoKeys>>> memos;
  memos.reserve(values.size());
  // The rows of one tensor of one trial are adjacent and share its name (a trial has one copy of
  // each name: equal keys' names are the same view).
  const auto same_name = [](const ReadValue* a, const ReadValue& b) {
    return a != nullptr && a->key.trial == b.key.trial && a->key.name.data() == b.key.name.data() &&
           a->key.name.size() == b.key.name.size();
  };
  for (const ReadValue& v : values) {
    if (v.key.trial >= trials.size() || !Covers(arena, v)) continue;
    if (!same_name(listed.empty() ? nullptr : listed.back(), v)) names += v.key.name.size();
    listed.push_back(&v);
    shapes += v.value->shape().size();
    auto& [mask, memo] = memos.emplace_back();
    mask = UsableMemos(*v.value, v.stored_reductions, memo);
    // A summary made before its tensor's reductions were known holds more than the rules asked
    // for (Trial::Prefetch): those they did not ask yet are asked of the runner, which so learns
    // of them, and answers from the summary.
    if (v.value->is_summary()) mask &= trials[v.key.trial]->ReductionsAsked(v.key.name);
    memo_count += static_cast<uint64_t>(std::popcount(mask));
  }
  if (listed.empty()) return nullptr;
  const uint64_t rows_at = sizeof(Header);
  const uint64_t shapes_at = rows_at + listed.size() * sizeof(StepTableRow);
  const uint64_t memos_at = shapes_at + shapes * sizeof(int64_t);
  const uint64_t names_at = memos_at + memo_count * sizeof(double);
  const uint64_t size = Aligned(names_at + names);
  std::shared_ptr<std::byte[]> block = arena.Allocate(static_cast<size_t>(size));
  uint64_t offset = 0;
  if (block == nullptr || !arena.Contains(block.get(), static_cast<size_t>(size), &offset)) return nullptr;

  std::byte* base = block.get();
  const Header header{kMagic, listed.size(), g_next_serial.fetch_add(1, std::memory_order_relaxed)};
  std::memcpy(base, &header, sizeof(header));
  uint64_t shape_at = shapes_at, memo_at = memos_at, name_at = names_at;
  // The mode of a step: every tensor of a step asks the same (a table holds one or a few steps).
  std::optional<std::pair<const Trial*, int64_t>> mode_of;
  std::pair<int32_t, int64_t> mode;
  for (size_t i = 0; i < listed.size(); ++i) {
    const ReadValue& v = *listed[i];
    const Tensor& tensor = *v.value;
    const Trial* trial = trials[v.key.trial];
    if (mode_of != std::pair(trial, v.key.step)) {
      mode = WireMode(*trial, v.key.step);
      mode_of = std::pair(trial, v.key.step);
    }
    StepTableRow row{};
    row.trial = v.key.trial;
    row.name_size = static_cast<uint32_t>(v.key.name.size());
    const bool new_name = !same_name(i == 0 ? nullptr : listed[i - 1], v);
    if (new_name) {
      std::memcpy(base + name_at, v.key.name.data(), v.key.name.size());
      name_at += v.key.name.size();
    }
    row.name_offset = name_at - v.key.name.size();
    row.step = v.key.step;
    if (tensor.is_summary()) {
      row.data_offset = kSummaryOnly;
    } else {
      arena.Contains(tensor.bytes().data(), tensor.bytes().size(), &row.data_offset);
    }
    row.data_bytes = tensor.bytes().size();
    row.num_elements = tensor.num_elements();
    row.mode = mode.first;
    row.mode_step = mode.second;
    row.dtype = static_cast<int32_t>(tensor.dtype());
    row.rank = static_cast<uint32_t>(tensor.shape().size());
    row.shape_offset = shape_at;
    row.memo_mask = memos[i].first;
    row.memo_offset = memo_at;
    std::memcpy(base + rows_at + i * sizeof(StepTableRow), &row, sizeof(row));
    if (row.rank > 0) std::memcpy(base + shape_at, tensor.shape().data(), row.rank * sizeof(int64_t));
    shape_at += row.rank * sizeof(int64_t);
    for (uint32_t key = 0; key < kMemoKeys; ++key) {
      if ((row.memo_mask >> key & 1) == 0) continue;
      std::memcpy(base + memo_at, &memos[i].second[key], sizeof(double));
      memo_at += sizeof(double);
    }
  }
  return std::shared_ptr<const StepTable>(new StepTable(std::move(block), offset, size));
}

bool StepTableView::Open(const ReadOnlyMapping& arena, uint64_t offset, uint64_t size) {
  const std::byte* base = arena.At(offset, size);
  Header header{};
  if (base != nullptr && size >= sizeof(Header)) std::memcpy(&header, base, sizeof(header));
  // The table of a call is opened again at each of its steps: the same table (its serial, where
  // it was) keeps the index of its tensors.
  const bool same = serial_ != 0 && arena_ == &arena && base == base_ && size == size_ && header.serial == serial_;
  Close();
  if (!same) {
    next_ = 0;
    stride_ = 0;
    runs_.clear();
  }
  if (base == nullptr || size < sizeof(Header) || reinterpret_cast<uintptr_t>(base) % alignof(StepTableRow) != 0) {
    return false;
  }
  if (header.magic != kMagic || header.rows > (size - sizeof(Header)) / sizeof(StepTableRow)) {
    serial_ = 0;
    return false;
  }
  serial_ = header.serial;
  arena_ = &arena;
  base_ = base;
  size_ = size;
  rows_ = std::span<const StepTableRow>(reinterpret_cast<const StepTableRow*>(base + sizeof(Header)), header.rows);
  return true;
}

bool StepTableView::Valid(const StepTableRow& r) const {
  const auto inside = [this](uint64_t at, uint64_t bytes) { return at <= size_ && bytes <= size_ - at; };
  return r.rank <= 64 && inside(r.shape_offset, r.rank * sizeof(int64_t)) && r.shape_offset % alignof(int64_t) == 0 &&
         r.memo_mask >> kMemoKeys == 0 && r.memo_offset % alignof(double) == 0 &&
         inside(r.memo_offset, static_cast<uint64_t>(std::popcount(r.memo_mask)) * sizeof(double)) &&
         ((r.data_offset == kSummaryOnly && r.data_bytes == 0) || arena_->At(r.data_offset, r.data_bytes) != nullptr);
}

std::string_view StepTableView::Name(const StepTableRow& row) const {
  if (row.name_offset > size_ || row.name_size > size_ - row.name_offset) return {};
  return std::string_view(reinterpret_cast<const char*>(base_ + row.name_offset), row.name_size);
}
const int64_t* StepTableView::Shape(const StepTableRow& row) const {
  return row.rank == 0 ? nullptr : reinterpret_cast<const int64_t*>(base_ + row.shape_offset);
}
const double* StepTableView::Memos(const StepTableRow& row) const {
  return reinterpret_cast<const double*>(base_ + row.memo_offset);
}

int64_t StepTableView::Find(uint32_t trial, std::string_view name, int64_t step) {
  if (rows_.empty()) return -1;  // (closed: runs_ may still index the table last open)
  const auto matches = [&](const StepTableRow& r) { return r.trial == trial && r.step == step && Name(r) == name; };
  // Near the last row found first (a rule that asks for two steps of each tensor, the later
  // first, misses the next row by one).
  size_t found = SIZE_MAX;
  const size_t from = next_ >= 2 ? next_ - 2 : 0;
  for (size_t i = from; i < std::min(rows_.size(), next_ + 3); ++i) {
    if (matches(rows_[i])) {
      found = i;
      break;
    }
  }
  // Then the next tensor at the same step: a call's table holds each tensor at each of the
  // call's steps, so a rule that asks for its tensors one step at a time jumps by that many rows
  // (stride_, learned from its last two lookups of one step).
  if (found == SIZE_MAX && stride_ > 0) {
    const size_t jump = next_ - 1 + stride_;
    if (jump < rows_.size() && matches(rows_[jump])) found = jump;
  }
  if (found == SIZE_MAX) {
    if (runs_.empty()) IndexRuns();
    found = FindInRuns(trial, name, step);
    if (found == SIZE_MAX) return -1;
  }
  if (!Valid(rows_[found])) return -1;
  if (next_ > 0 && found >= next_) {
    const StepTableRow& last = rows_[next_ - 1];
    if (last.step == step && last.trial == trial) stride_ = found - (next_ - 1);
  }
  next_ = found + 1;
  return static_cast<int64_t>(found);
}

size_t StepTableView::RunHash(uint32_t trial, std::string_view name) {
  return std::hash<std::string_view>{}(name) ^ (static_cast<size_t>(trial) * 0x9E3779B97F4A7C15ull);
}

void StepTableView::IndexRuns() {
  // Runs start where the trial or the name changes; a run is indexed once (its first rows, if a
  // table repeated a name further on: rows are in key order, so it cannot).
  size_t slots = 16;
  while (slots < 2 * rows_.size()) slots *= 2;
  runs_.assign(slots, Run{});
  for (size_t start = 0; start < rows_.size();) {
    const StepTableRow& first = rows_[start];
    size_t end = start + 1;
    while (end < rows_.size() && rows_[end].trial == first.trial && rows_[end].name_offset == first.name_offset &&
           rows_[end].name_size == first.name_size) {
      ++end;
    }
    const std::string_view name = Name(first);
    for (size_t i = RunHash(first.trial, name) & (slots - 1);; i = (i + 1) & (slots - 1)) {
      if (runs_[i].start == kNoRun) {
        runs_[i] = {static_cast<uint32_t>(start), static_cast<uint32_t>(end)};
        break;
      }
      const StepTableRow& other = rows_[runs_[i].start];
      if (other.trial == first.trial && Name(other) == name) break;
    }
    start = end;
  }
}

size_t StepTableView::FindInRuns(uint32_t trial, std::string_view name, int64_t step) const {
  const size_t mask = runs_.size() - 1;
  for (size_t i = RunHash(trial, name) & mask;; i = (i + 1) & mask) {
    const Run& run = runs_[i];
    if (run.start == kNoRun) return SIZE_MAX;
    const StepTableRow& first = rows_[run.start];
    if (first.trial != trial || Name(first) != name) continue;
    // Its steps ascend, usually one apart: the row `step - first.step` on is tried first.
    const uint64_t ahead = static_cast<uint64_t>(step) - static_cast<uint64_t>(first.step);  // (no overflow)
    if (step >= first.step && ahead < run.end - run.start) {
      const size_t guess = run.start + static_cast<size_t>(ahead);
      if (rows_[guess].step == step) return guess;
    }
    const auto begin = rows_.begin() + run.start, end = rows_.begin() + run.end;
    const auto it = std::partition_point(begin, end, [&](const StepTableRow& r) { return r.step < step; });
    return it != end && it->step == step ? static_cast<size_t>(it - rows_.begin()) : SIZE_MAX;
  }
}

}  // namespace litmus::isolation
