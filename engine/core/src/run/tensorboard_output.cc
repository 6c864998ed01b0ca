// TensorBoardOutput: the runner's verdicts as TensorBoard summaries (tensorboard_output.h).
#include "run/tensorboard_output.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace litmus {

TensorBoardOutput::TensorBoardOutput(TensorBoardOptions options, Env* files) : options_(std::move(options)) {
  if (options_.dir.starts_with("s3://")) {
    Fail(InvalidArgumentError("an s3:// folder is not supported; give a local folder"));
    return;
  }
  StatusOr<std::unique_ptr<tensorboard::EventFileWriter>> writer =
      tensorboard::EventFileWriter::Create(files, Env::JoinPath(options_.dir, kRunName), kFileSuffix);
  if (!writer.ok()) {
    Fail(writer.status());
    return;
  }
  writer_ = std::move(writer).value();
  spdlog::info("TensorBoard: writing {} (tensorboard --logdir {})", writer_->path(), options_.dir);
}

TensorBoardOutput::~TensorBoardOutput() {
  if (writer_) (void)writer_->Close();
}

std::string TensorBoardOutput::path() const { return writer_ ? writer_->path() : std::string(); }

std::string TensorBoardOutput::ConditionMetTag(const std::string& rule) { return "litmus/" + rule + "/condition_met"; }

std::string TensorBoardOutput::SeriesTag(const std::string& rule, const std::string& series,
                                         const std::string& tensor) {
  std::string tag = "litmus/" + rule + "/" + series;
  if (!tensor.empty()) tag += "/" + tensor;
  return tag;
}

std::string TensorBoardOutput::FiringTag(const std::string& rule) { return "litmus/" + rule + "/firing"; }

std::string TensorBoardOutput::LossTag(const std::string& tensor) { return "losses/" + tensor; }

void TensorBoardOutput::Fail(const Status& status) {
  // One line, once: the TensorBoard file is a by-product, never the job's verdict.
  spdlog::error("TensorBoard output (--tensorboard-dir {}) stopped: {} (the job's verdict is not affected)",
                options_.dir, status.message());
  if (writer_) (void)writer_->Close();
  writer_.reset();
}

void TensorBoardOutput::StepEvaluated(const std::string& rule, int64_t step, bool condition_met,
                                      const SeriesStore& series, const std::vector<SeriesStore::NewPoint>& points) {
  if (!writer_) return;
  const double now = tensorboard::WallTimeNow();
  RuleTags& tags = tags_[rule];
  if (tags.condition_met.empty()) tags.condition_met = ConditionMetTag(rule);
  writer_->AddScalar(step, tags.condition_met, condition_met ? 1.0f : 0.0f, now);
  for (const SeriesStore::NewPoint& point : points) {
    if (point.series >= series.series().size()) continue;
    // A series keeps its index in the store: its tag is made once (a rule may publish hundreds
    // of points per step).
    while (tags.series.size() <= point.series) {
      const SeriesStore::Series& s = series.series()[tags.series.size()];
      tags.series.push_back(SeriesTag(rule, s.name, s.tensor));
    }
    writer_->AddScalar(point.step, tags.series[point.series], static_cast<float>(point.value), now);
  }
}

void TensorBoardOutput::RuleFired(const std::string& rule, int64_t step, const std::string& message) {
  if (!writer_) return;
  writer_->AddText(step, FiringTag(rule), message);
}

void TensorBoardOutput::AddLosses() {
  // The runner's trial, as far as the runner has refreshed it (no second reader of the trial).
  if (trial_ == nullptr) return;
  StatusOr<std::vector<std::string>> names = trial_->TensorNamesInCollection("losses");
  if (!names.ok()) return;  // no such collection (yet)
  for (const std::string& name : *names) {
    auto [last, inserted] = loss_written_.try_emplace(name, INT64_MIN);
    for (const int64_t step : trial_->TensorSteps(name)) {
      if (step <= last->second) continue;
      StatusOr<TensorPtr> value = trial_->Value(name, step);
      if (!value.ok()) {
        if (value.status().code() == StatusCode::kOutOfRange) break;  // not yet readable: next time
        spdlog::warn("TensorBoard output: loss {} at step {} left out: {}", name, step, value.status().message());
      } else if (!(*value)->is_string() && (*value)->num_elements() > 0) {
        writer_->AddScalar(step, LossTag(name), static_cast<float>((*value)->ElementAsDouble(0)));
      }
      last->second = step;
    }
  }
}

void TensorBoardOutput::FilesWritten(bool finished) {
  if (!writer_) return;
  if (options_.losses) AddLosses();
  if (Status flushed = writer_->Flush(); !flushed.ok()) {
    Fail(flushed);
    return;
  }
  if (finished) {
    if (Status closed = writer_->Close(); !closed.ok()) Fail(closed);
    writer_.reset();
  }
}

}  // namespace litmus
