// JobCheckpoint: the durable record of a `litmus run` job's progress, kept in its output folder
// (<output>/checkpoint.json) so that the same command restarted after a crash or kill -9 resumes
// where the job was instead of starting over (docs/run.md, "Resume").
//
// Durability order: the JobReporter fsyncs events.jsonl before a checkpoint that covers it is
// written, and the checkpoint itself is written atomically (temp file, fsync, rename, fsync of
// the folder). A checkpoint may lag events.jsonl (a kill between the two), never lead it, so on
// resume the firings already reported are taken from events.jsonl (RecoverJobEvents) and the
// checkpoint says where each rule's evaluation can safely go on: a step counts as evaluated
// only once its outcome is known (a stop in the middle of a step leaves it to the resumed job).
// Pure data and functions; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "litmus/status.h"

namespace litmus {

// One rule's progress.
struct RuleCheckpoint {
  std::string name;         // RuleConfigurationName
  std::string fingerprint;  // of what decides the rule's verdicts (JobFingerprint)
  int64_t cursor = 0;       // the next global step to consider
  int64_t last_step = -1;   // the last step evaluated
  int64_t datapoints = 0;
  std::vector<int64_t> fired_steps;
  bool done = false;
  std::string status;       // RuleEvaluationStatus name once done
  std::string details;
  int exit_code = 0;
  // The rule's report (report_violations / report_detail) up to last_step.
  int64_t violations = 0;
  std::map<std::string, std::string> details_json;
};

struct JobCheckpoint {
  static constexpr int kVersion = 1;
  std::string trial;
  int64_t restarts = 0;   // how many times the job was resumed
  bool finished = false;  // the job reached its end (any exit code but 143): a rerun starts over
  std::vector<RuleCheckpoint> rules;
};

// The checkpoint's file name inside the output folder.
inline constexpr const char* kCheckpointFileName = "checkpoint.json";

// Writes `checkpoint` to <output_dir>/checkpoint.json atomically and durably. An error names the
// file and the cause (a full disk, a read-only folder).
Status WriteCheckpoint(const std::string& output_dir, const JobCheckpoint& checkpoint);

// Reads <output_dir>/checkpoint.json: nullopt if there is none; InvalidArgument naming the file
// if it cannot be parsed or has another version.
StatusOr<std::optional<JobCheckpoint>> ReadCheckpoint(const std::string& output_dir);

// What an earlier run of the job already reported in events.jsonl, per rule configuration name.
struct ReportedRuleEvents {
  std::set<int64_t> firings;                // steps of RuleEvaluationConditionMet events
  std::optional<std::string> ended_status;  // status of its RuleEnded event, if any
  std::string ended_message;
  std::optional<int64_t> ended_step;
};

// Reads <events_path> (a missing file is no events). A last line without its newline is a write
// cut short by the crash: it is removed from the file (truncated) so that the resumed job appends
// after a whole line, and it counts as not written. InvalidArgument for a whole line that is not
// JSON (the file is not ours).
StatusOr<std::map<std::string, ReportedRuleEvents>> RecoverJobEvents(const std::string& events_path);

// What a job started in an output folder takes over from an interrupted run of itself there.
struct RuleResume {
  std::set<int64_t> reported_firings;         // already in events.jsonl: never reported again
  std::optional<RuleCheckpoint> checkpoint;   // the rule's progress in the last checkpoint
  // The rule ended before the interruption (a RuleEnded event with a final status: NoIssuesFound,
  // IssuesFound or Error; a Stopped rule is resumed).
  bool ended = false;
  std::string ended_status;
  std::string ended_details;
  std::optional<int64_t> ended_step;
};
struct ResumePlan {
  bool resume = false;    // false: start over (no checkpoint, a finished job's, or --fresh)
  int64_t restarts = 0;   // of the checkpoint resumed (the new run is restart restarts + 1)
  std::map<std::string, RuleResume> rules;  // by RuleConfigurationName
};

// Decides how a job starts in `output_dir`: over (fresh, no checkpoint, or the checkpoint of a
// finished job), or as the resumption of the interrupted job whose checkpoint is there. `rules`
// are the job's (RuleConfigurationName, JobFingerprint) pairs. InvalidArgument, naming the
// folder and what differs, when the interrupted job there is another one (other trial, rules or
// parameters): the user resumes it with the same command, or starts over with --fresh.
StatusOr<ResumePlan> PlanResume(const std::string& output_dir, bool fresh, const std::string& trial,
                                const std::vector<std::pair<std::string, std::string>>& rules);

// A stable text that changes when anything that decides a rule's verdicts changes: the trial,
// the rule's class and plugin file, its parameters, start and end steps, other trials,
// --keep-going and --skip-damaged. A checkpoint is resumed only by a job with the same fingerprints.
std::string JobFingerprint(const std::string& trial, const std::string& rule_class, const std::string& plugin,
                           const std::map<std::string, std::string>& parameters, int64_t start_step,
                           std::optional<int64_t> end_step, const std::vector<std::string>& other_trials,
                           bool keep_going, bool skip_damaged = false);

}  // namespace litmus
