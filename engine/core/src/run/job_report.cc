// JobReporter: events.jsonl, status.json, rule reports and message/failure files.
#include "run/job_report.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "json_string.h"
#include "litmus/events/event_publisher.h"
#include "litmus/format/env.h"

namespace litmus {
namespace {

using Json = nlohmann::ordered_json;

Json StringArray(const std::vector<std::string>& items) {
  Json out = Json::array();
  for (const auto& item : items) out.push_back(item);
  return out;
}

Json ProgressJson(int64_t steps_evaluated, std::optional<int64_t> last_step) {
  Json j;
  j["StepsEvaluated"] = steps_evaluated;
  j["LastStep"] = last_step ? Json(*last_step) : Json(nullptr);
  return j;
}

Json RuleJson(const std::string& name, const std::string& rule_class, RuleStatus status, const std::string& details,
              std::optional<int64_t> step, const std::string& modified) {
  Json j;
  j["RuleConfigurationName"] = name;
  j["RuleEvaluationStatus"] = RuleStatusName(status);
  j["StatusDetails"] = details.substr(0, 1024);
  j["LastModifiedTime"] = modified;
  j["rule"] = rule_class;
  j["step"] = step ? Json(*step) : Json(nullptr);
  return j;
}

// `text` cut to at most `max_bytes`, never inside a UTF-8 sequence.
std::string CutUtf8(std::string text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text;
}

// Errors > Stopped > IssuesFound > InProgress > NoIssuesFound: what the job as a whole shows.
int Severity(RuleStatus s) {
  switch (s) {
    case RuleStatus::kNoIssuesFound: return 0;
    case RuleStatus::kInProgress: return 1;
    case RuleStatus::kIssuesFound: return 2;
    case RuleStatus::kStopping: return 3;
    case RuleStatus::kStopped: return 4;
    case RuleStatus::kError: return 5;
  }
  return 5;
}

// What a job without rules shows for its exit code (0, 1, 2, 3, 143).
RuleStatus StatusOfExitCode(int exit_code) {
  switch (exit_code) {
    case 0: return RuleStatus::kNoIssuesFound;
    case 1: return RuleStatus::kIssuesFound;
    case 143: return RuleStatus::kStopped;
    default: return RuleStatus::kError;
  }
}

}  // namespace

std::string_view RuleStatusName(RuleStatus status) {
  switch (status) {
    case RuleStatus::kInProgress: return "InProgress";
    case RuleStatus::kNoIssuesFound: return "NoIssuesFound";
    case RuleStatus::kIssuesFound: return "IssuesFound";
    case RuleStatus::kError: return "Error";
    case RuleStatus::kStopping: return "Stopping";
    case RuleStatus::kStopped: return "Stopped";
  }
  return "Error";
}

std::optional<RuleStatus> RuleStatusFromName(std::string_view name) {
  for (const RuleStatus status : {RuleStatus::kInProgress, RuleStatus::kNoIssuesFound, RuleStatus::kIssuesFound,
                                  RuleStatus::kError, RuleStatus::kStopping, RuleStatus::kStopped}) {
    if (RuleStatusName(status) == name) return status;
  }
  return std::nullopt;
}

std::string IsoTimeNow() {
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buffer;
}

JobReporter::JobReporter(Paths paths) : paths_(std::move(paths)) {}
JobReporter::~JobReporter() = default;

StatusOr<std::unique_ptr<JobReporter>> JobReporter::Create(Paths paths) {
  std::error_code ec;
  const std::filesystem::path out(paths.output_dir);
  std::vector<std::filesystem::path> dirs = {out, out / "rule-reports"};
  if (!paths.temp_dir.empty()) dirs.emplace_back(paths.temp_dir);
  for (const auto& dir : dirs) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return FailedPreconditionError("cannot create output folder " + dir.string() + ": " + ec.message());
  }
  std::unique_ptr<JobReporter> reporter(new JobReporter(std::move(paths)));
  const std::string events = (out / "events.jsonl").string();
  reporter->events_fd_ = open(events.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (reporter->events_fd_ < 0) return ErrnoToStatus(errno, "cannot open " + events);
  reporter->publisher_ = events::EventPublisher::Create(reporter->paths_.events);
  return reporter;
}

void JobReporter::AddRule(const std::string& configuration_name, const std::string& rule_class) {
  std::lock_guard lock(mu_);
  RuleEntry entry;
  entry.configuration_name = configuration_name;
  entry.rule_class = rule_class;
  entry.last_modified = IsoTimeNow();
  rules_.push_back(std::move(entry));
  WriteStatusLocked();
}

void JobReporter::Event(const EventFields& f) { Event(f, {}); }

void JobReporter::Event(const EventFields& f, const std::vector<std::pair<std::string, std::string>>& extra) {
  // The line nlohmann::ordered_json would write for these fields in this order, written
  // directly: a job on small tensors can fire at most steps, and building a JSON object per
  // event was ~28,000 instructions of the runner's each.
  std::string line;
  line.reserve(256 + f.message.size());
  const auto field = [&](std::string_view key) {
    line += line.empty() ? "{" : ",";
    AppendJsonString(line, key);
    line += ':';
  };
  const auto integer = [&](std::optional<int64_t> value) { line += value ? std::to_string(*value) : "null"; };
  field("time");
  AppendJsonString(line, IsoTimeNow());
  field("event");
  AppendJsonString(line, f.event);
  field("rule");
  AppendJsonString(line, f.rule);
  field("rule_class");
  AppendJsonString(line, f.rule_class);
  field("step");
  integer(f.step);
  field("mode");
  if (f.mode) {
    AppendJsonString(line, ModeName(*f.mode));
  } else {
    line += "null";
  }
  field("mode_step");
  integer(f.mode_step);
  if (f.status) {
    field("status");
    AppendJsonString(line, *f.status);
  }
  field("message");
  AppendJsonString(line, f.message);
  for (const auto& [key, value] : extra) {
    field(key);
    AppendJsonString(line, value);
  }
  line += "}\n";
  std::lock_guard lock(mu_);
  // One write(2) per line on an O_APPEND descriptor: lines never interleave and each is
  // visible to readers as soon as the event happens.
  if (events_fd_ >= 0 && write(events_fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    RecordWriteFailure("events.jsonl: " + std::string(std::strerror(errno)));
  }
  // Queued under the lock, so receivers get events in the file's order; never waits for them.
  if (publisher_) publisher_->Publish(line.substr(0, line.size() - 1));
}

void JobReporter::RemovePreviousVerdict() {
  // The previous run's verdict must not outlive it (Finish writes this run's, if any).
  for (const std::string& path : {paths_.message_file, paths_.failure_file}) {
    if (path.empty()) continue;
    std::error_code ec;
    std::filesystem::remove(path, ec);
    if (ec) spdlog::warn("could not remove the previous run's {}: {}", path, ec.message());
  }
}

void JobReporter::StartOver() {
  std::lock_guard lock(mu_);
  if (events_fd_ >= 0 && ftruncate(events_fd_, 0) != 0) {
    RecordWriteFailure("events.jsonl: " + std::string(std::strerror(errno)));
  }
}

Status JobReporter::SyncEvents() {
  std::lock_guard lock(mu_);
  if (events_fd_ >= 0 && fdatasync(events_fd_) != 0) {
    return ErrnoToStatus(errno, "cannot sync " + paths_.output_dir + "/events.jsonl");
  }
  return OkStatus();
}

void JobReporter::RestoreRuleStatus(const std::string& configuration_name, RuleStatus status,
                                    const std::string& details, std::optional<int64_t> step) {
  std::lock_guard lock(mu_);
  for (auto& r : rules_) {
    if (r.configuration_name != configuration_name) continue;
    r.status = status;
    r.details = details;
    if (step) r.step = step;
  }
  WriteStatusLocked();
}

std::optional<std::string> JobReporter::write_failure() const {
  std::lock_guard lock(failure_mu_);
  return write_failure_;
}

void JobReporter::RecordWriteFailure(const std::string& what) {
  std::lock_guard lock(failure_mu_);
  if (write_failure_) return;
  spdlog::error("cannot write the job's files in {}: {}", paths_.output_dir, what);
  write_failure_ = what;
}

void JobReporter::SetRuleStatus(const std::string& configuration_name, RuleStatus status, const std::string& details,
                                std::optional<int64_t> step) {
  std::string rule_class;
  bool changed = false;
  {
    std::lock_guard lock(mu_);
    for (auto& r : rules_) {
      if (r.configuration_name != configuration_name) continue;
      changed = r.status != status;
      r.status = status;
      r.details = details;
      if (step) r.step = step;
      r.last_modified = IsoTimeNow();
      rule_class = r.rule_class;
    }
    WriteStatusLocked();
  }
  if (changed) {
    Event({.event = "StatusChanged",
           .rule = configuration_name,
           .rule_class = rule_class,
           .step = step,
           .mode = std::nullopt,
           .mode_step = std::nullopt,
           .message = details,
           .status = std::string(RuleStatusName(status))});
  }
}

void JobReporter::StopRulesInProgress(const std::string& details) {
  std::vector<std::string> running;
  {
    std::lock_guard lock(mu_);
    for (const auto& r : rules_) {
      if (r.status == RuleStatus::kInProgress) running.push_back(r.configuration_name);
    }
  }
  for (const std::string& name : running) SetRuleStatus(name, RuleStatus::kStopped, details, std::nullopt);
}

void JobReporter::SetRuleWarnings(const std::string& configuration_name, std::vector<std::string> warnings) {
  std::lock_guard lock(mu_);
  for (auto& r : rules_) {
    if (r.configuration_name == configuration_name) r.warnings = warnings;
  }
}

void JobReporter::SetJobWarnings(std::vector<std::string> warnings) {
  std::lock_guard lock(mu_);
  job_warnings_ = std::move(warnings);
}

void JobReporter::SetRuleProgress(const std::string& configuration_name, int64_t steps_evaluated,
                                  std::optional<int64_t> last_step) {
  std::lock_guard lock(mu_);
  for (auto& r : rules_) {
    if (r.configuration_name != configuration_name) continue;
    r.steps_evaluated = steps_evaluated;
    r.last_step = last_step;
  }
}

void JobReporter::SetJobProgress(int64_t steps_evaluated, std::optional<int64_t> last_step) {
  std::lock_guard lock(mu_);
  job_steps_evaluated_ = steps_evaluated;
  job_last_step_ = last_step;
}

void JobReporter::WriteStatus() {
  std::lock_guard lock(mu_);
  WriteStatusLocked();
}

void JobReporter::WriteRuleReport(const std::string& configuration_name, const RuleReportData& report) {
  Json j;
  j["RuleTriggered"] = report.rule_triggered;
  j["Violations"] = report.violations;
  Json details = Json::object();
  for (const auto& [key, text] : report.details_json) {
    Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    details[key] = value.is_discarded() ? Json(text) : value;
  }
  j["Details"] = std::move(details);
  j["Datapoints"] = report.datapoints;
  j["RuleParameters"] = report.rule_parameters;
  std::vector<std::string> warnings;
  {
    std::lock_guard lock(mu_);
    warnings = job_warnings_;
  }
  warnings.insert(warnings.end(), report.warnings.begin(), report.warnings.end());
  j["Warnings"] = StringArray(warnings);
  j["DamagedStepsSkipped"] = report.damaged_skipped;
  j["Description"] = report.description;
  j["Seconds"] = report.seconds;
  const auto path = std::filesystem::path(paths_.output_dir) / "rule-reports" / (configuration_name + ".json");
  WriteFileAtomically(path.string(), j.dump(2) + "\n", /*in_output_dir=*/true);
}

void JobReporter::WriteRuleSeries(const std::string& configuration_name, std::span<const std::string> json) {
  const auto path = std::filesystem::path(paths_.output_dir) / "rule-reports" / (configuration_name + ".series.json");
  WriteFileAtomically(path.string(), json, /*in_output_dir=*/true, /*unsynced=*/true);
}

void JobReporter::Finish(int exit_code, const std::string& line) {
  {
    std::lock_guard lock(mu_);
    exit_code_ = exit_code;
    finish_line_ = line;
    WriteStatusLocked();
  }
  std::string one_line = line;
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  one_line = CutUtf8(one_line, 1023) + "\n";
  const bool message = exit_code != 0 && !line.empty();
  const bool failure = message && exit_code != 143;
  for (const auto& [path, write] : {std::pair{paths_.message_file, message}, std::pair{paths_.failure_file, failure}}) {
    if (path.empty()) continue;
    std::error_code ec;
    if (!write) {
      std::filesystem::remove(path, ec);
      continue;
    }
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    WriteFileAtomically(path, one_line, /*in_output_dir=*/false);
  }
  if (publisher_) publisher_->Close();
}

namespace {

// StatusDetails of a job of several rules: how many rules ended how, the firing ones with their
// first firing step ("2 of 5 rules found issues: ExplodingTensor at step 5, Overfit at step 9;
// 3 found no issues").
template <class Entries>
std::string JobDetails(const Entries& rules) {
  struct Group {
    RuleStatus status;
    const char* verb;
  };
  static constexpr Group kGroups[] = {{RuleStatus::kError, "failed"},
                                      {RuleStatus::kIssuesFound, "found issues"},
                                      {RuleStatus::kStopped, "stopped"},
                                      {RuleStatus::kStopping, "stopping"},
                                      {RuleStatus::kInProgress, "in progress"},
                                      {RuleStatus::kNoIssuesFound, "found no issues"}};
  std::string out;
  for (const Group& group : kGroups) {
    std::string names;
    size_t count = 0;
    for (const auto& r : rules) {
      if (r.status != group.status) continue;
      ++count;
      if (group.status == RuleStatus::kIssuesFound || group.status == RuleStatus::kError) {
        names += (names.empty() ? "" : ", ") + r.configuration_name;
        if (group.status == RuleStatus::kIssuesFound && r.step) names += " at step " + std::to_string(*r.step);
      }
    }
    if (count == 0) continue;
    out += out.empty() ? std::to_string(count) + " of " + std::to_string(rules.size()) + " rules "
                       : "; " + std::to_string(count) + " ";
    out += group.verb;
    if (!names.empty()) out += ": " + names;
  }
  return out;
}

}  // namespace

void JobReporter::WriteStatusLocked() {
  const auto warnings_of = [&](const RuleEntry& r) {
    std::vector<std::string> all = job_warnings_;
    all.insert(all.end(), r.warnings.begin(), r.warnings.end());
    return all;
  };
  Json j;
  if (rules_.size() == 1) {
    const RuleEntry& r = rules_.front();
    j = RuleJson(r.configuration_name, r.rule_class, r.status, r.details, r.step, r.last_modified);
    j["Progress"] = ProgressJson(r.steps_evaluated, r.last_step);
    j["Warnings"] = StringArray(warnings_of(r));
  } else {
    // The job as a whole: the most severe rule status, names and classes joined, the first
    // firing step (else the furthest step a rule reached), and details counting the outcomes.
    std::string names, classes, modified;
    RuleStatus status = RuleStatus::kNoIssuesFound;
    std::optional<int64_t> first_firing, furthest;
    std::vector<std::string> warnings = job_warnings_;
    for (const auto& r : rules_) {
      names += (names.empty() ? "" : ",") + r.configuration_name;
      classes += (classes.empty() ? "" : ",") + r.rule_class;
      if (Severity(r.status) > Severity(status)) status = r.status;
      modified = std::max(modified, r.last_modified);
      if (r.step && r.status == RuleStatus::kIssuesFound) first_firing = std::min(first_firing.value_or(*r.step), *r.step);
      if (r.step) furthest = std::max(furthest.value_or(*r.step), *r.step);
      warnings.insert(warnings.end(), r.warnings.begin(), r.warnings.end());
    }
    std::string details = JobDetails(rules_);
    if (rules_.empty()) {
      // No rule is known (a configuration that could not be read): the job's own outcome.
      status = !exit_code_ ? RuleStatus::kInProgress : StatusOfExitCode(*exit_code_);
      details = finish_line_;
    }
    j = RuleJson(names, classes, status, details, first_firing ? first_firing : furthest,
                 modified.empty() ? IsoTimeNow() : modified);
    j["Progress"] = ProgressJson(job_steps_evaluated_, job_last_step_);
    j["Warnings"] = StringArray(warnings);
  }
  j["exit_code"] = exit_code_ ? Json(*exit_code_) : Json(nullptr);
  Json rules = Json::array();
  for (const auto& r : rules_) {
    Json rule = RuleJson(r.configuration_name, r.rule_class, r.status, r.details, r.step, r.last_modified);
    rule["Progress"] = ProgressJson(r.steps_evaluated, r.last_step);
    rule["Warnings"] = StringArray(warnings_of(r));
    rules.push_back(std::move(rule));
  }
  j["rules"] = std::move(rules);
  WriteFileAtomically((std::filesystem::path(paths_.output_dir) / "status.json").string(), j.dump(2) + "\n",
                      /*in_output_dir=*/true);
}

void JobReporter::WriteFileAtomically(const std::string& path, std::span<const std::string> pieces,
                                      bool in_output_dir, bool unsynced) {
  // Beside the target, unless it is in the output folder and the layout names a temp folder
  // there (SageMaker's .sagemaker-ignore, which the platform does not upload): a rename never
  // crosses file systems. Hidden, and unique to this process.
  const std::filesystem::path target(path);
  const std::filesystem::path dir =
      in_output_dir && !paths_.temp_dir.empty() ? std::filesystem::path(paths_.temp_dir)
                               : (target.has_parent_path() ? target.parent_path() : std::filesystem::path("."));
  // (Appended piece by piece: GCC 12's -Wrestrict misfires on "." + std::string.)
  std::string name(".");
  name += target.filename().string();
  name += '.';
  name += std::to_string(getpid());
  name += ".tmp";
  const std::string tmp = (dir / name).string();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    for (const std::string& piece : pieces) out << piece;
    out.close();
    if (!out) {
      RecordWriteFailure(path + ": " + std::strerror(errno));
      std::remove(tmp.c_str());
      return;
    }
  }
  if (unsynced) {
    if (Status replaced = Env::Default()->ReplaceUnsyncedFile(tmp, path); !replaced.ok()) {
      RecordWriteFailure(path + ": " + std::string(replaced.message()));
      std::remove(tmp.c_str());
    }
  } else if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    RecordWriteFailure(path + ": " + std::strerror(errno));
    std::remove(tmp.c_str());
  }
}

}  // namespace litmus
