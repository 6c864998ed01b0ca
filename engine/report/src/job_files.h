// JobFilesReader: what the HTML report shows of a job, read from the job's own output folder
// (docs/run.md "Output"): status.json (rules, statuses, exit code), rule-reports/<rule>.json
// (firings, datapoints, parameters, description, time), rule-reports/<rule>.series.json (what
// each rule watched) and events.jsonl (firing steps and messages, start time), checkpoint.json
// (the trial). events.jsonl is read incrementally (only the bytes appended since the last Read),
// so a report rewritten every few seconds of a long job does not reread it. Works on a finished
// and on a running job (its files are replaced atomically; a half-written last line of
// events.jsonl is read next time). Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "downsample.h"
#include "litmus/format/env.h"
#include "litmus/format/mode.h"
#include "litmus/status.h"
#include "plugin/series_store.h"
#include "run/verdict_table.h"

namespace litmus::report {

struct SeriesData {
  std::string name;
  std::string tensor;  // empty: a series of the rule itself
  int64_t total_points = 0;
  int64_t points_per_bucket = 1;
  SeriesColumns columns;            // the file's buckets, Downsample'd to kMaxChartPoints
  std::vector<int64_t> firing_step;  // values kept at firing steps, exactly
  std::vector<double> firing_value;
};

struct Threshold {
  double value = 0;
  std::string fires_when;  // "above" or "below"
};

struct RuleFiles {
  std::string name;        // RuleConfigurationName
  std::string rule_class;
  std::string status;      // RuleEvaluationStatus
  std::string details;     // StatusDetails
  int64_t steps_evaluated = 0;
  std::optional<int64_t> last_step;
  std::vector<std::string> warnings;
  // rule-reports/<rule>.json (absent until the rule's report is first written)
  bool has_report = false;
  int64_t triggered = 0;
  int64_t violations = 0;
  int64_t datapoints = 0;
  std::string parameters;   // "key:value" lines
  std::string description;
  double seconds = 0;
  // rule-reports/<rule>.series.json
  std::vector<SeriesData> series;
  std::map<std::string, std::vector<Threshold>> thresholds;  // by series name
  std::vector<std::string> recommendations;
  int64_t dropped_series = 0;
  // events.jsonl: RuleEvaluationConditionMet events of the rule
  int64_t firing_events = 0;
  std::optional<int64_t> first_firing;
  std::optional<int64_t> last_firing;
  std::string first_message;
};

struct JobFiles {
  std::string output_dir;
  std::optional<int> exit_code;  // null while the job runs
  std::string status;            // top-level RuleEvaluationStatus and StatusDetails
  std::string details;
  std::string last_modified;     // top-level LastModifiedTime
  std::string trial;             // checkpoint.json's trial ("" if unknown)
  std::string start_time;        // the first event's time
  std::vector<std::string> warnings;
  std::vector<RuleFiles> rules;  // status.json's order
};

// The name of a LITMUS_MODE_* value as the series document writes it ("TRAIN", ...); "" for 0
// (unknown) or any other value.
std::string SeriesModeName(int32_t mode);
// `mode` if it is a LITMUS_MODE_* value (litmus::Mode), else 0: a bucket's mode as SeriesColumns
// keeps it.
inline int32_t SeriesModeCode(int32_t mode) {
  return mode >= static_cast<int32_t>(Mode::kTrain) && mode <= static_cast<int32_t>(Mode::kGlobal) ? mode : 0;
}

// The rows of the verdict table (run/verdict_table.h) that `litmus run` prints, from the files:
// the report's summary is the same table. A rule without a report yet counts its firing events.
std::vector<VerdictRow> VerdictRows(const JobFiles& job);

// The series a running job holds in memory, by rule (configuration name): the stores the runner
// writes rule-reports/<rule>.series.json from (SeriesStore::ToJson). Not owned.
using LiveSeries = std::map<std::string, const SeriesStore*>;

// The series of `store` into `rule` (series, thresholds, recommendations, dropped_series): the
// same values as reading the document store.ToJson() writes, without writing and parsing it
// (an 8 MB document for 200 series of 1024 buckets). Text the document would carry as U+FFFD
// (invalid UTF-8) is replaced the same way.
void SeriesFromStore(const SeriesStore& store, RuleFiles* rule);

class JobFilesReader {
 public:
  // `env` (not owned) reads the files of `output_dir`.
  JobFilesReader(Env* env, std::string output_dir);

  // The files as they are now. NotFound "not a job output folder (no status.json): DIR";
  // DataLoss/InvalidArgument naming the file for a file that cannot be read or parsed. With
  // `live`, a rule whose store there holds something takes its series from it (SeriesFromStore)
  // instead of its series file (`litmus run --report`: the runner's memory, never older than the
  // file); other rules read their file.
  StatusOr<JobFiles> Read(const LiveSeries* live = nullptr);

 private:
  Status ReadEvents();

  struct Firings {
    int64_t count = 0;
    std::optional<int64_t> first, last;
    std::string first_message;
  };
  Env* env_;
  std::string output_dir_;
  uint64_t events_offset_ = 0;  // bytes of events.jsonl consumed (whole lines)
  std::string start_time_;
  std::map<std::string, Firings> firings_;  // by rule
};

}  // namespace litmus::report
