// TensorBoardExport: the writer's TensorBoard summaries, laid out as smdebug's hook lays them
// (hook._maybe_get_tb_writer, TensorboardFileLocation): one event file per saved step and mode,
// <dir>/<MODE>/<S12>_<worker>.tfevents, its records keyed by the global step. Summaries are
// kept in memory during the step and the file is created and written whole (one append) at its
// end, so TensorBoard never sees a partial record nor an abandoned step. A by-product of the
// trial: a failed write is logged once and stops the export, never the training.
// Not thread-safe: owned by one Writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/format/dtype.h"
#include "litmus/format/env.h"
#include "litmus/format/mode.h"
#include "litmus/format/tensorboard_events.h"
#include "litmus/status.h"
#include "litmus/writer/writer.h"

namespace litmus::writer::internal {

class TensorBoardExport {
 public:
  // Checks that `dir` holds no event file of `worker` (AlreadyExists unless `overwrite`: its files
  // of the same step and mode are then replaced) and creates it. `env` is not owned.
  static StatusOr<std::unique_ptr<TensorBoardExport>> Open(Env* env, std::string dir, std::string worker,
                                                           bool overwrite, LogFunction log);

  // "<dir>/<MODE>/<S12>_<worker>.tfevents".
  static std::string FilePath(std::string_view dir, Mode mode, int64_t step, std::string_view worker);

  bool active() const { return active_; }
  const std::string& dir() const { return dir_; }

  // Buffer one summary of the open step (tags are cleaned with tensorboard::CleanTag).
  void AddScalar(int64_t step, std::string_view tag, double value, double wall_time);
  // A histogram of the tensor's elements (DTypeSize(dtype) bytes each, little-endian), as reals;
  // nothing for bool, complex and string tensors (smdebug skips bool, and TensorBoard has no
  // complex histogram) or when no element is finite.
  void AddHistogram(int64_t step, std::string_view tag, DType dtype, std::span<const std::byte> data,
                    int64_t count, double wall_time);

  // Writes the step's file if it holds a summary, then forgets them. A failure is logged and
  // turns the export off.
  void EndStep(Mode mode, int64_t step);
  // Drops the open step's summaries (an abandoned step).
  void DiscardStep() { pending_.clear(); }
  size_t pending() const { return pending_.size(); }

 private:
  struct Summary {
    int64_t step = 0;
    std::string tag;  // cleaned
    double wall_time = 0;
    bool is_histogram = false;
    double scalar = 0;
    tensorboard::Histogram histogram;
  };

  TensorBoardExport(Env* env, std::string dir, std::string worker, LogFunction log);
  Status WriteStep(Mode mode, int64_t step);

  Env* env_;
  std::string dir_;
  std::string worker_;
  LogFunction log_;
  bool active_ = true;
  std::vector<Summary> pending_;  // the open step's summaries, in the order they were added
  bool mode_dir_created_[4] = {false, false, false, false};
};

}  // namespace litmus::writer::internal
