// ReportGenerator: see report_generator.h.
#include "report_generator.h"

#include <chrono>
#include <ctime>
#include <span>
#include <utility>

#include "report_page.h"

namespace litmus::report {
namespace {

std::string UtcNow() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

}  // namespace

Status WriteFileAtomically(Env* env, const std::string& path, const std::string& content) {
  const std::string temp = path + ".tmp";
  StatusOr<std::unique_ptr<WritableFile>> file = env->NewWritableFile(temp);
  if (!file.ok()) return file.status();
  Status written = (*file)->Append(std::as_bytes(std::span(content.data(), content.size())));
  if (written.ok()) written = (*file)->Close();
  if (written.ok()) written = env->ReplaceUnsyncedFile(temp, path);
  if (!written.ok()) {
    (void)(*file)->Close();
    (void)env->RemoveFile(temp);
  }
  return written;
}

ReportGenerator::ReportGenerator(ReportOptions options, Env* files, Env* trial_env)
    : options_(std::move(options)),
      path_(options_.file.empty() ? Env::JoinPath(options_.output_dir, kDefaultName) : options_.file),
      files_(files),
      trial_env_(trial_env),
      reader_(files, options_.output_dir) {}

ReportGenerator::~ReportGenerator() = default;

Status ReportGenerator::Write(const LiveSeries* live, std::optional<int64_t> through) {
  StatusOr<JobFiles> job = reader_.Read(live);
  if (!job.ok()) return job.status();
  const std::string trial = options_.trial.empty() ? job->trial : options_.trial;
  if (!curves_ && runner_trial_ != nullptr) curves_ = std::make_unique<TrialCurves>(runner_trial_, collected_);
  if (!curves_ && !trial.empty()) curves_ = std::make_unique<TrialCurves>(trial_env_, trial);
  if (curves_) {
    std::vector<std::string> tensors;
    for (const RuleFiles& r : job->rules) {
      for (const SeriesData& s : r.series) tensors.push_back(s.tensor);
    }
    curves_->Watch(tensors);
    curves_->Update(through);
  }
  if (!options_.trial.empty()) job->trial = options_.trial;
  const std::string page = RenderReportPage(
      *job, curves_.get(),
      {.generated_at = UtcNow(), .version = LITMUS_VERSION, .refresh_seconds = options_.refresh_seconds});
  if (Status written = WriteFileAtomically(files_, path_, page); !written.ok()) {
    return Status(written.code(), "cannot write " + path_ + ": " + std::string(written.message()));
  }
  return OkStatus();
}

}  // namespace litmus::report
