// StepTable: the decoded tensors of one step that workers can read in the shared memory, listed
// once per step in a table that the runner writes into that memory too. Each isolated rule's
// Invoke names the table (offset, size) and its worker looks its tensors up there
// (StepTableView), so the runner encodes each tensor once per step whatever the number of rules,
// and no table travels through the sockets (with 20 rules on small tensors, encoding, sending and
// decoding a table per rule was most of what isolation cost). What a table cannot hold (strings,
// values outside the shared memory, keys the step's reads did not decode) still goes into the
// rule's own entries (TensorTable).
//
// Layout (native, one binary on one machine): a Header, `rows` StepTableRows in key order
// (ReadKey: trial, name bytes, step), then the shapes (int64), memos (double) and names they
// point at (the rows of one tensor of one trial share its name). Offsets in a row are from the
// table's start, except data_offset (in the arena).
// A built table is immutable; a StepTableView is used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "isolation/shared_arena.h"
#include "litmus/engine/trial.h"
#include "run/read_key.h"

namespace litmus::isolation {

struct StepTableRow {
  uint32_t trial;         // job-wide trial number
  uint32_t name_size;
  uint64_t name_offset;
  int64_t step;           // global step
  uint64_t data_offset;   // of the raw value, in the arena; kSummaryOnly: none (memos only)
  uint64_t data_bytes;
  int64_t num_elements;
  int64_t mode_step;
  int32_t dtype;
  int32_t mode;           // LITMUS_MODE_*
  uint32_t rank;
  uint32_t memo_mask;     // reductions the runner computed (TensorTable::UsableMemos)
  uint64_t shape_offset;  // rank int64
  uint64_t memo_offset;   // one double per bit of memo_mask, in bit order
};

// A row of a summary (Tensor::is_summary: a value read only for its reductions) has no data:
// data_offset kSummaryOnly, data_bytes 0. Its worker answers reductions from the memos and asks
// the runner for anything else.
inline constexpr uint64_t kSummaryOnly = UINT64_MAX;

class StepTable {
 public:
  // The table of `values` (sorted; job-wide trial numbers index `trials`) in `arena`, or null
  // when nothing qualifies or the arena has no room (then every rule sends its own entries).
  static std::shared_ptr<const StepTable> Build(SharedArena& arena, const std::vector<ReadValue>& values,
                                                std::span<Trial* const> trials);
  // Whether Build lists `value` (a worker finds it in the table): a value in the arena, or a
  // summary.
  static bool Covers(const SharedArena& arena, const ReadValue& value);

  uint64_t offset() const { return offset_; }
  uint64_t size() const { return size_; }

 private:
  StepTable(std::shared_ptr<std::byte[]> block, uint64_t offset, uint64_t size)
      : block_(std::move(block)), offset_(offset), size_(size) {}
  std::shared_ptr<std::byte[]> block_;  // in the arena; returns to it with the table
  uint64_t offset_;
  uint64_t size_;
};

// A worker's view of a table in its read-only mapping of the arena.
class StepTableView {
 public:
  // Checks the table's header; false (and no table) if it is not one. Rows are checked as they
  // are found (a rule reads a few of a table that the runner wrote for every rule).
  bool Open(const ReadOnlyMapping& arena, uint64_t offset, uint64_t size);
  // (What the view knows of the table stays for an Open of the same table.)
  void Close() { rows_ = {}; }
  size_t rows() const { return rows_.size(); }

  // The index of the row of (job-wide trial, name, step), or -1 (also for a row that points
  // outside the table or the arena). A rule mostly asks for its tensors in key order or step by
  // step: the row after the last one found, then the next tensor's row at that step, are tried
  // before a search. The search hashes the name to its tensor's rows (an index of the table's
  // tensors, made at the view's first search): a binary search compared names ~10 times a
  // lookup, ~500 instructions, with 20 rules on small tensors.
  int64_t Find(uint32_t trial, std::string_view name, int64_t step);
  const StepTableRow& Row(size_t index) const { return rows_[index]; }
  // The parts of a row that Find returned.
  const int64_t* Shape(const StepTableRow& row) const;
  const double* Memos(const StepTableRow& row) const;

 private:
  // The row's name (empty if it points outside the table).
  std::string_view Name(const StepTableRow& row) const;
  bool Valid(const StepTableRow& row) const;
  // The rows of one tensor: [start, end), a run of rows of one trial and one name.
  struct Run {
    uint32_t start = kNoRun;
    uint32_t end = 0;
  };
  static constexpr uint32_t kNoRun = UINT32_MAX;
  static size_t RunHash(uint32_t trial, std::string_view name);
  void IndexRuns();
  // Where (trial, name, step) is found by the index of runs, or SIZE_MAX.
  size_t FindInRuns(uint32_t trial, std::string_view name, int64_t step) const;

  const ReadOnlyMapping* arena_ = nullptr;
  const std::byte* base_ = nullptr;
  uint64_t size_ = 0;
  std::span<const StepTableRow> rows_;
  size_t next_ = 0;    // after the last row found
  size_t stride_ = 0;  // from one tensor's row to the next one's at the same step, if learned
  uint64_t serial_ = 0;    // of the table open
  std::vector<Run> runs_;  // open addressing by RunHash; empty until the first search
};

}  // namespace litmus::isolation
