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

namespace litmus {
namespace {

using Json = nlohmann::ordered_json;

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

StatusOr<std::unique_ptr<JobReporter>> JobReporter::Create(Paths paths) {
  std::error_code ec;
  const std::filesystem::path out(paths.output_dir);
  for (const auto& dir : {out, out / "rule-reports", out / ".sagemaker-ignore"}) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return FailedPreconditionError("cannot create output folder " + dir.string() + ": " + ec.message());
  }
  std::unique_ptr<JobReporter> reporter(new JobReporter(std::move(paths)));
  const std::string events = (out / "events.jsonl").string();
  reporter->events_fd_ = open(events.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (reporter->events_fd_ < 0) return ErrnoToStatus(errno, "cannot open " + events);
  return reporter;
}

void JobReporter::AddRule(const std::string& configuration_name, const std::string& rule_class) {
  std::lock_guard lock(mu_);
  rules_.push_back({configuration_name, rule_class, RuleStatus::kInProgress, "", std::nullopt, IsoTimeNow()});
  WriteStatusLocked();
}

void JobReporter::Event(const EventFields& f) { Event(f, {}); }

void JobReporter::Event(const EventFields& f, const std::vector<std::pair<std::string, std::string>>& extra) {
  Json j;
  j["time"] = IsoTimeNow();
  j["event"] = f.event;
  j["rule"] = f.rule;
  j["rule_class"] = f.rule_class;
  j["step"] = f.step ? Json(*f.step) : Json(nullptr);
  j["mode"] = f.mode ? Json(ModeName(*f.mode)) : Json(nullptr);
  j["mode_step"] = f.mode_step ? Json(*f.mode_step) : Json(nullptr);
  if (f.status) j["status"] = *f.status;
  j["message"] = f.message;
  for (const auto& [key, value] : extra) j[key] = value;
  const std::string line = j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mu_);
  // One write(2) per line on an O_APPEND descriptor: lines never interleave and each is
  // visible to readers as soon as the event happens.
  if (events_fd_ >= 0 && write(events_fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    spdlog::warn("could not append to {}/events.jsonl: {}", paths_.output_dir, std::strerror(errno));
  }
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
  const auto path = std::filesystem::path(paths_.output_dir) / "rule-reports" / (configuration_name + ".json");
  WriteFileAtomically(path.string(), j.dump(2) + "\n",
                      (std::filesystem::path(paths_.output_dir) / ".sagemaker-ignore").string());
}

void JobReporter::Finish(int exit_code, const std::string& line) {
  {
    std::lock_guard lock(mu_);
    exit_code_ = exit_code;
    finish_line_ = line;
    WriteStatusLocked();
  }
  if (exit_code == 0 || line.empty()) return;
  std::string one_line = line.substr(0, 1024);
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  for (const std::string& path : {paths_.message_file, paths_.failure_file}) {
    if (path.empty()) continue;
    const auto parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    WriteFileAtomically(path, one_line + "\n", parent.string());
  }
}

void JobReporter::WriteStatusLocked() {
  Json j;
  if (rules_.size() == 1) {
    const RuleEntry& r = rules_.front();
    j = RuleJson(r.configuration_name, r.rule_class, r.status, r.details, r.step, r.last_modified);
  } else {
    // The job as a whole: the most severe rule status, names joined.
    std::string names, modified;
    RuleStatus status = RuleStatus::kNoIssuesFound;
    for (const auto& r : rules_) {
      names += (names.empty() ? "" : ",") + r.configuration_name;
      if (Severity(r.status) > Severity(status)) status = r.status;
      modified = std::max(modified, r.last_modified);
    }
    std::string details;
    if (rules_.empty()) {
      // No rule is known (a configuration that could not be read): the job's own outcome.
      status = !exit_code_ ? RuleStatus::kInProgress : StatusOfExitCode(*exit_code_);
      details = finish_line_;
    }
    j = RuleJson(names, "", status, details, std::nullopt, modified.empty() ? IsoTimeNow() : modified);
  }
  j["exit_code"] = exit_code_ ? Json(*exit_code_) : Json(nullptr);
  Json rules = Json::array();
  for (const auto& r : rules_) {
    rules.push_back(RuleJson(r.configuration_name, r.rule_class, r.status, r.details, r.step, r.last_modified));
  }
  j["rules"] = std::move(rules);
  WriteFileAtomically((std::filesystem::path(paths_.output_dir) / "status.json").string(), j.dump(2) + "\n",
                      (std::filesystem::path(paths_.output_dir) / ".sagemaker-ignore").string());
}

void JobReporter::WriteFileAtomically(const std::string& path, const std::string& content, const std::string& tmp_dir) {
  const std::string tmp = (std::filesystem::path(tmp_dir.empty() ? "." : tmp_dir) /
                           (std::filesystem::path(path).filename().string() + "." + std::to_string(getpid()) + ".tmp"))
                              .string();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out.flush()) {
      spdlog::warn("could not write {}: {}", tmp, std::strerror(errno));
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    spdlog::warn("could not write {}: {}", path, std::strerror(errno));
    std::remove(tmp.c_str());
  }
}

}  // namespace litmus
