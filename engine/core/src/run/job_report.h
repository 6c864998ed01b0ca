// JobReporter: everything `litmus run` tells the outside world besides its exit code
// (docs/job-contract.md §6.4): <output>/events.jsonl (one JSON object per line, flushed as each
// event happens), <output>/status.json (rewritten on every status change),
// <output>/rule-reports/<RuleConfigurationName>.json (and .series.json: what the rule watched), and
// the one-line message/failure files.
// Every file but events.jsonl is written atomically (a temp file beside it, or in the layout's
// temp folder, then rename). A write that fails (a full disk, a read-only folder) is logged and
// remembered (write_failure()): the runner turns it into exit code 3, so that a verdict nobody
// could read never passes for a green job. Thread-safe (one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "litmus/events/event_destinations.h"
#include "litmus/format/mode.h"
#include "litmus/status.h"

namespace litmus {
namespace events {
class EventPublisher;
}

// SageMaker's RuleEvaluationStatus values.
enum class RuleStatus { kInProgress, kNoIssuesFound, kIssuesFound, kError, kStopping, kStopped };
std::string_view RuleStatusName(RuleStatus status);
// The status of a RuleStatusName; nullopt for any other text.
std::optional<RuleStatus> RuleStatusFromName(std::string_view name);

struct RuleReportData {
  int64_t rule_triggered = 0;  // steps at which the condition was met
  int64_t violations = 0;
  int64_t datapoints = 0;      // steps evaluated
  std::map<std::string, std::string> details_json;  // key -> JSON text
  std::string rule_parameters;  // "key:value" lines
  std::vector<std::string> warnings;  // configuration warnings of this rule (unknown keys, ...)
  int64_t damaged_skipped = 0;        // steps skipped for a damaged record (--skip-damaged)
  // litmus's own (the HTML report reads them): the rule's one-line description from its plugin's
  // metadata, and the seconds spent in its own calls (the verdict table's "time").
  std::string description;
  double seconds = 0;
};

struct EventFields {
  std::string event;                  // RuleStarted, StatusChanged, RuleEvaluationConditionMet, RuleEnded, ...
  std::string rule;                   // RuleConfigurationName
  std::string rule_class;             // the rule's class name
  std::optional<int64_t> step;
  std::optional<Mode> mode;
  std::optional<int64_t> mode_step;
  std::string message;
  std::optional<std::string> status;  // for StatusChanged / RuleEnded
};

class JobReporter {
 public:
  struct Paths {
    std::string output_dir;
    std::string message_file;
    std::string failure_file;
    std::string temp_dir;  // temp files of atomic writes; empty: beside each target
    events::EventDestinations events = {};  // each event is also published there (docs/events.md)
  };
  // Creates <output_dir>, rule-reports/ and temp_dir (if not empty). Errors name the folder.
  static StatusOr<std::unique_ptr<JobReporter>> Create(Paths paths);
  ~JobReporter();

  // Registers a rule so status.json lists it (in registration order) as InProgress.
  void AddRule(const std::string& configuration_name, const std::string& rule_class);
  void Event(const EventFields& fields);
  // The same, with extra string fields appended to the JSON object in order (e.g. an
  // ActionInvoked event's action, target, outcome, error).
  void Event(const EventFields& fields, const std::vector<std::pair<std::string, std::string>>& extra);
  // Records a rule's status and rewrites status.json; also emits a StatusChanged event when the
  // status changes.
  void SetRuleStatus(const std::string& configuration_name, RuleStatus status, const std::string& details,
                     std::optional<int64_t> step);
  // Warnings recorded in status.json ("Warnings" of the rule; the job's own warnings are listed
  // with every rule and at the top level). Not written until the next status write.
  void SetRuleWarnings(const std::string& configuration_name, std::vector<std::string> warnings);
  void SetJobWarnings(std::vector<std::string> warnings);
  // Progress shown in status.json ("Progress": StepsEvaluated, LastStep) of a rule and of the job
  // (distinct steps evaluated; the top level of a multi-rule status.json). Not written until
  // WriteStatus or the next status change.
  void SetRuleProgress(const std::string& configuration_name, int64_t steps_evaluated, std::optional<int64_t> last_step);
  void SetJobProgress(int64_t steps_evaluated, std::optional<int64_t> last_step);
  void WriteStatus();
  void WriteRuleReport(const std::string& configuration_name, const RuleReportData& report);
  // rule-reports/<configuration_name>.series.json: the pieces of `json` as given, one after the
  // other (run/series_files.h); never synced (Env::ReplaceUnsyncedFile).
  void WriteRuleSeries(const std::string& configuration_name, std::span<const std::string> json);
  // Every rule still InProgress becomes Stopped with `details` (as SetRuleStatus); for a job that
  // must end at once (isolation/stop_watchdog.h).
  void StopRulesInProgress(const std::string& details);
  // The job's end: exit code into status.json, the events still queued for paths().events
  // delivered (until its flush timeout), and the one-line files: for 1, 2 and 3 the message
  // and failure files hold `line` ("RuleEvaluationConditionMet: Evaluation of the rule X at step N
  // ...", "ClientError: ..."); for 143 the message file holds it ("Stopped: ...") and no failure
  // file is left; for 0 neither file is left. At most 1024 bytes (newline included; cut at a
  // UTF-8 character boundary). A job without rules (its configuration named none) shows the status
  // of the exit code, with `line` as StatusDetails, at the top level of status.json.
  void Finish(int exit_code, const std::string& line);

  // Resume (run/checkpoint.h). StartOver empties events.jsonl: a job that does not resume an
  // interrupted one starts its own. SyncEvents makes what events.jsonl holds durable (before a
  // checkpoint that covers it is written). RestoreRuleStatus sets a rule's status as an earlier
  // run of the job reported it, without a StatusChanged event (that one is in events.jsonl).
  void StartOver();
  // Removes the message and failure files a previous run left (a run's files describe that run
  // only), once the job knows it runs (not when it refuses to resume another job's folder).
  void RemovePreviousVerdict();
  Status SyncEvents();
  void RestoreRuleStatus(const std::string& configuration_name, RuleStatus status, const std::string& details,
                         std::optional<int64_t> step);
  // A write of one of the job's files that failed, and why ("status.json: No space left on
  // device"); the first one. Also recorded by the runner for the checkpoint (RecordWriteFailure).
  std::optional<std::string> write_failure() const;
  void RecordWriteFailure(const std::string& what);

  const Paths& paths() const { return paths_; }

 private:
  explicit JobReporter(Paths paths);
  void WriteStatusLocked();
  void WriteFileAtomically(const std::string& path, const std::string& content, bool in_output_dir) {
    WriteFileAtomically(path, std::span(&content, 1), in_output_dir);
  }
  // `pieces` one after the other. `unsynced`: a large by-product rewritten often (the series),
  // which replaces its previous version without a writeback forced (Env::ReplaceUnsyncedFile).
  void WriteFileAtomically(const std::string& path, std::span<const std::string> pieces, bool in_output_dir,
                           bool unsynced = false);

  struct RuleEntry {
    std::string configuration_name;
    std::string rule_class;
    RuleStatus status = RuleStatus::kInProgress;
    std::string details;
    std::optional<int64_t> step;
    std::string last_modified;
    std::vector<std::string> warnings;
    int64_t steps_evaluated = 0;
    std::optional<int64_t> last_step;
  };

  Paths paths_;
  std::mutex mu_;
  std::vector<RuleEntry> rules_;
  std::optional<int> exit_code_;
  std::string finish_line_;  // Finish's line: StatusDetails of a job without rules
  std::vector<std::string> job_warnings_;
  int64_t job_steps_evaluated_ = 0;
  std::optional<int64_t> job_last_step_;
  int events_fd_ = -1;
  mutable std::mutex failure_mu_;  // after mu_ when both are held
  std::optional<std::string> write_failure_;
  std::unique_ptr<events::EventPublisher> publisher_;  // null: no destination
};

// ISO-8601 UTC with milliseconds: "2026-11-22T05:19:10.123Z".
std::string IsoTimeNow();

}  // namespace litmus
