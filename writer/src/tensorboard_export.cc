// The writer's TensorBoard summaries: per-step buffering, histogram building from tensor bytes
// and the per-mode, per-step event files; see tensorboard_export.h. Not thread-safe.
#include "tensorboard_export.h"

#include <cstdio>
#include <utility>
#include <vector>

#include "litmus/format/tensorboard_histogram.h"
#include "tensor_stats.h"

namespace litmus::writer::internal {
namespace {

constexpr std::string_view kFileSuffix = ".tfevents";

size_t ModeIndex(Mode mode) { return static_cast<size_t>(mode) - 1; }

std::string StepString(int64_t step) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%012lld", static_cast<long long>(step));
  return digits;
}

// Whether `relative` (a path under the TensorBoard folder) is "<MODE>/<S12>_<worker>.tfevents".
bool IsEventFileOf(std::string_view relative, std::string_view worker) {
  const size_t slash = relative.find('/');
  if (slash == std::string_view::npos || !ModeFromName(relative.substr(0, slash)).has_value()) return false;
  const std::string_view name = relative.substr(slash + 1);
  if (name.size() != 12 + 1 + worker.size() + kFileSuffix.size() || !name.ends_with(kFileSuffix) ||
      name[12] != '_' || name.substr(13, worker.size()) != worker) {
    return false;
  }
  for (char c : name.substr(0, 12)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

StatusOr<std::unique_ptr<TensorBoardExport>> TensorBoardExport::Open(Env* env, std::string dir, std::string worker,
                                                                     bool overwrite, LogFunction log) {
  if (!overwrite) {
    std::vector<FileEntry> files;
    const Status listed = env->ListFiles(dir, "", &files);
    if (!listed.ok() && listed.code() != StatusCode::kNotFound) return listed;
    for (const FileEntry& f : files) {
      if (IsEventFileOf(f.path, worker)) {
        return AlreadyExistsError("the TensorBoard folder " + dir + " already holds files of " + worker + " (" +
                                  f.path + "); set WriterOptions::overwrite_existing to write into it");
      }
    }
  }
  LITMUS_RETURN_IF_ERROR(env->CreateDirs(dir).WithContext("creating the TensorBoard folder"));
  return std::unique_ptr<TensorBoardExport>(
      new TensorBoardExport(env, std::move(dir), std::move(worker), std::move(log)));
}

TensorBoardExport::TensorBoardExport(Env* env, std::string dir, std::string worker, LogFunction log)
    : env_(env), dir_(std::move(dir)), worker_(std::move(worker)), log_(std::move(log)) {}

std::string TensorBoardExport::FilePath(std::string_view dir, Mode mode, int64_t step, std::string_view worker) {
  std::string relative(ModeName(mode));
  relative += '/';
  relative += StepString(step);
  relative += '_';
  relative += worker;
  relative += kFileSuffix;
  return Env::JoinPath(dir, relative);
}

void TensorBoardExport::AddScalar(int64_t step, std::string_view tag, double value, double wall_time) {
  if (!active_) return;
  Summary s;
  s.step = step;
  s.tag = tensorboard::CleanTag(tag);
  s.wall_time = wall_time;
  s.scalar = value;
  pending_.push_back(std::move(s));
}

void TensorBoardExport::AddHistogram(int64_t step, std::string_view tag, DType dtype, std::span<const std::byte> data,
                                     int64_t count, double wall_time) {
  if (!active_ || dtype == DType::kBool) return;
  tensorboard::HistogramBuilder builder;
  if (!ForEachReal(dtype, data, count, [&builder](double v) { builder.Add(v); }) || builder.num() == 0) return;
  Summary s;
  s.step = step;
  s.tag = tensorboard::CleanTag(tag);
  s.wall_time = wall_time;
  s.is_histogram = true;
  s.histogram = builder.Build();
  pending_.push_back(std::move(s));
}

Status TensorBoardExport::WriteStep(Mode mode, int64_t step) {
  bool& created = mode_dir_created_[ModeIndex(mode)];
  if (!created) {
    LITMUS_RETURN_IF_ERROR(env_->CreateDirs(Env::JoinPath(dir_, ModeName(mode))));
    created = true;
  }
  LITMUS_ASSIGN_OR_RETURN(std::unique_ptr<tensorboard::EventFileWriter> file,
                          tensorboard::EventFileWriter::CreateAt(env_, FilePath(dir_, mode, step, worker_)));
  for (const Summary& s : pending_) {
    if (s.is_histogram) {
      file->AddHistogram(s.step, s.tag, s.histogram, s.wall_time);
    } else {
      file->AddScalar(s.step, s.tag, static_cast<float>(s.scalar), s.wall_time);
    }
  }
  return file->Close();
}

void TensorBoardExport::EndStep(Mode mode, int64_t step) {
  if (!active_ || pending_.empty()) {
    pending_.clear();
    return;
  }
  const Status written = WriteStep(mode, step);
  pending_.clear();
  if (!written.ok()) {
    active_ = false;
    log_(LogLevel::kError, "TensorBoard export to " + dir_ + " stopped at step " + std::to_string(step) + ": " +
                               written.ToString() + " (the trial is still written)");
  }
}

}  // namespace litmus::writer::internal
