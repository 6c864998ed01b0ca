// litmus::writer::Writer: writes an smdebug-compatible trial from a C++ training loop, the way
// smdebug's hook does (docs/trial-format.md §9): one Writer per worker; per saved step an event
// file then its index file, each written to <final>.tmp and renamed into place; the collections
// file before the first step is published; the end-of-training marker last.
// Threading: a Writer is used by one thread at a time. Writers of different workers may write
// the same trial concurrently from different threads or processes.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "litmus/format/dtype.h"
#include "litmus/format/env.h"
#include "litmus/format/mode.h"
#include "litmus/status.h"
#include "litmus/writer/config.h"

namespace litmus::writer {

enum class LogLevel { kInfo, kWarning, kError };
// Receives the writer's diagnostics (one line, no trailing newline). Must be thread-safe if
// several writers share it.
using LogFunction = std::function<void(LogLevel level, std::string_view message)>;

// Who writes training_job_end.ts (docs/trial-format.md §1.2, §9).
enum class EndMarkerPolicy {
  // Close() writes it when num_workers == 1; with several workers nobody does, and a coordinator
  // calls MarkTrainingEnded() after every worker has closed. The default.
  kSingleWorker,
  // Every worker's Close() writes it, as smdebug does: readers may then finish about 1 s after
  // the *first* worker closes and miss later files of the others.
  kEveryWorker,
  // Close() never writes it.
  kNever,
};

struct WriterOptions {
  // Worker name used in file names: [A-Za-z0-9.-][A-Za-z0-9_.-]*, no "__" (layout::
  // ValidateWorkerName). By convention worker_<rank>.
  std::string worker = "worker_0";
  // Number of workers that write index files into this trial (_meta.num_workers); the same in
  // every worker's options.
  int64_t num_workers = 1;
  // All I/O goes through this Env (not owned; must outlive the Writer). nullptr = Env::Default().
  Env* env = nullptr;

  // Open() refuses a folder that already holds a trial (training_job_end.ts, or index or
  // collections files of this worker). With this set it writes anyway: files of the same
  // (step, worker) are replaced, other old files stay, and an old end marker is removed.
  bool overwrite_existing = false;
  // Open() refuses an out_dir whose path contains "__": smdebug's reader would then turn worker
  // names like worker_0 into worker/0 (docs/trial-format.md §1.6).
  bool allow_double_underscore_path = false;

  // Defaults for collections that leave save_config / reduction_config unset.
  SaveConfig save_config;
  ReductionConfig reduction_config;
  // The collections, exported in this order. A tensor that matches none of them is added to
  // `default` (as smdebug's hook.save_tensor does) or, without a `default` collection, not saved.
  // Collections other than all/default need an include_regex or tensor_names.
  std::vector<CollectionConfig> collections = DefaultCollections();

  EndMarkerPolicy end_marker = EndMarkerPolicy::kSingleWorker;
  // smdebug skips the end marker when TRAINING_JOB_NAME is set (SageMaker writes it instead).
  bool skip_end_marker_if_training_job_name_set = true;

  // Footer of each record: smdebug's placeholder (default; smdebug's reader rejects anything
  // else) or the real masked CRC-32C of the payload (litmus reads both).
  bool write_payload_crc = false;
  // int8, int16, uint16, uint32, uint64 and complex64 are refused unless this is set, because
  // smdebug 1.0.34 cannot read them back (int8 comes back as uint8, the others raise KeyError).
  bool allow_dtypes_smdebug_cannot_read = false;
  // With save_shape, a tensor whose raw record is also written gets no shape_payload entry
  // unless this is set: smdebug's reader lets the shape entry replace the raw record's location,
  // so value() would fail (docs/trial-format.md §4.3). The raw record carries the shape anyway.
  bool write_shape_with_raw_tensor = false;

  // TensorBoard summaries, as smdebug's hook arguments export_tensorboard and tensorboard_dir:
  // exported when export_tensorboard is set or tensorboard_dir is not empty (smdebug too exports
  // whenever a tensorboard_dir is given); tensorboard_dir "" means <out_dir>/tensorboard. Each
  // saved step of mode M writes <tensorboard_dir>/<M>/<S12>_<worker>.tfevents (M = TRAIN, EVAL,
  // PREDICT or GLOBAL: one TensorBoard run per mode), all records at the global step:
  //  - histogram "<collection>/<tensor>" of each saved numeric tensor (not bool or complex) of a
  //    due collection with save_histogram (the first such one in `collections`; scalar
  //    collections never), over its finite elements;
  //  - scalar "<tensor>" of each single-element tensor of a due scalar collection (losses,
  //    metrics, ...), and scalar "scalar/<name>" of each SaveScalar.
  // Tags go through TensorFlow's clean_tag. Open() creates the folder and, unless
  // overwrite_existing, refuses one already holding this worker's files. A failed TensorBoard
  // write is logged and stops the export; the trial is unaffected. docs/report.md, "From the writer".
  bool export_tensorboard = false;
  std::string tensorboard_dir;

  // Records smaller than this are copied into one buffer and written together (one Append per
  // buffer); larger tensor contents are written straight from the caller's memory.
  size_t write_buffer_bytes = size_t{1} << 20;
  // Event.wall_time source in seconds since the epoch. nullptr = the system clock.
  std::function<double()> wall_clock;
  // Diagnostics (the destructor's "not closed" warning, skipped reductions). nullptr = stderr.
  LogFunction log;
};

// A float16 element as its IEEE bit pattern, so SaveTensor<Float16> picks DType::kFloat16.
struct Float16 {
  uint16_t bits = 0;
};

// The DType SaveTensor<T> uses for element type T.
template <typename T>
constexpr DType DTypeOf() {
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  else if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  else if constexpr (std::is_same_v<T, Float16>) return DType::kFloat16;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::kInt8;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::kInt16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::kUInt8;
  else if constexpr (std::is_same_v<T, uint16_t>) return DType::kUInt16;
  else if constexpr (std::is_same_v<T, uint32_t>) return DType::kUInt32;
  else if constexpr (std::is_same_v<T, uint64_t>) return DType::kUInt64;
  else if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return DType::kComplex64;
  else if constexpr (std::is_same_v<T, std::complex<double>>) return DType::kComplex128;
  else static_assert(sizeof(T) == 0, "no litmus DType for this element type");
}

class Writer {
 public:
  // Validates the options (worker name, collections, regexes, configs), creates out_dir and
  // checks that it does not already hold a trial (see WriterOptions::overwrite_existing).
  // InvalidArgument for bad options, AlreadyExists for a folder holding a trial, the Env's error
  // for an unusable folder. No file is written until the first saved step ends.
  static StatusOr<std::unique_ptr<Writer>> Open(std::string out_dir, WriterOptions options = {});

  // Without Close(), the destructor discards the open step (removes its .tmp files), writes no
  // end marker and logs an error: an unwinding training loop must not look like a finished job.
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Mode of the following steps. The first use of a mode starts its mode step counter at 0.
  // FailedPrecondition inside a step (smdebug lets the mode change mid-step; litmus does not).
  Status SetMode(Mode mode);

  // Starts the next step: the global step and the current mode's step both advance by one
  // (the first step is global step 0). FailedPrecondition if a step is open or after Close();
  // OutOfRange past step 999'999'999'999.
  Status BeginStep();
  // Publishes the step: flushes and renames the event file, writes the collections file if it
  // has not been written yet, then writes and renames the index file. A step that saved nothing
  // leaves no files. On error every file of the step is removed and the step is abandoned.
  Status EndStep();

  // Whether SaveTensor(name, ...) would write anything in the current step: the name belongs to
  // a collection due at this mode step (gradients and optimizer_variables are never due in EVAL
  // or PREDICT, as in smdebug). False outside a step. Lets callers skip computing tensors.
  bool ShouldSave(std::string_view name);

  // Saves a numeric tensor in the current step if ShouldSave(name): its stored reductions, its
  // shape entry and its raw record, per the configs of its collections that are due. `data` holds
  // the elements little-endian in C order, DTypeSize(dtype) bytes each (bool: 0 or 1); it is only
  // read during the call. shape {} is 0-d.
  // InvalidArgument: bad name (layout::ValidateTensorName), size mismatch, negative dims, zero
  //   elements, a string dtype (use SaveStrings), a dtype smdebug cannot read without the opt-in,
  //   the same name twice in one step. Unimplemented: a dtype litmus cannot encode.
  // FailedPrecondition: outside a step, after Close(), or in a step abandoned after an error.
  // I/O errors (ResourceExhausted for a full disk) abandon the step (see EndStep).
  Status SaveTensor(std::string_view name, std::span<const std::byte> data,
                    std::span<const int64_t> shape, DType dtype);
  Status SaveTensor(std::string_view name, std::span<const std::byte> data,
                    std::initializer_list<int64_t> shape, DType dtype) {
    return SaveTensor(name, data, std::span<const int64_t>(shape.begin(), shape.size()), dtype);
  }
  // Typed forms: the dtype follows from T (DTypeOf<T>()).
  template <typename T>
  Status SaveTensor(std::string_view name, std::span<const T> values,
                    std::span<const int64_t> shape) {
    return SaveTensor(name, std::as_bytes(values), shape, DTypeOf<T>());
  }
  template <typename T>
  Status SaveTensor(std::string_view name, std::span<const T> values,
                    std::initializer_list<int64_t> shape) {
    return SaveTensor(name, std::as_bytes(values),
                      std::span<const int64_t>(shape.begin(), shape.size()), DTypeOf<T>());
  }
  template <typename T>
  Status SaveTensor(std::string_view name, const std::vector<T>& values,
                    std::initializer_list<int64_t> shape) {
    return SaveTensor(name, std::span<const T>(values), shape);
  }
  // A 1-D string tensor (the only string shape smdebug reads): no dtype, one string_val each.
  Status SaveStrings(std::string_view name, std::span<const std::string> values);

  // smdebug's save_scalar (§9.4): tensor scalar/<name>, float64 of shape (1,), written with the
  // current step's files whatever the save configs say; belongs to no collection. Only inside
  // a step.
  Status SaveScalar(std::string_view name, double value);

  // Ends the open step (if any), writes the collections file if not yet written, then the end
  // marker per EndMarkerPolicy (tmp + rename, last). Further calls return FailedPrecondition.
  Status Close();

  const std::string& out_dir() const;
  // The folder TensorBoard summaries go to; empty when they are not exported.
  const std::string& tensorboard_dir() const;
  const std::string& worker() const;
  bool closed() const;
  bool in_step() const;
  int64_t step() const;            // current (or last) global step; -1 before the first step
  Mode mode() const;
  int64_t mode_step() const;       // current mode's step counter; -1 before its first step
  int64_t mode_step(Mode mode) const;

 private:
  struct Impl;
  explicit Writer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Writes out_dir/training_job_end.ts (empty, via .tmp and rename). For a coordinator of a
// multi-worker job, to be called after every worker's Writer has closed. env nullptr =
// Env::Default().
Status MarkTrainingEnded(Env* env, const std::string& out_dir);

}  // namespace litmus::writer
