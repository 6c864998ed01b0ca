// SeriesFiles: writes each rule's rule-reports/<name>.series.json (SeriesStore::ToJson) through
// the JobReporter, only when the series changed and, while the rule runs, at most every
// kInterval, or less often when writing the job's documents takes long: all documents together
// share one budget of ~2 % of the runner's time (a rule may publish at every step, 20 rules write
// 20 documents of up to tens of MB; the files are for people and `litmus report`).
// A rule's last document (its rule ended: the store no longer changes) is written in the
// background, so that rules ending together (the end of a trial) format theirs at once on
// the runner's idle cores (Wait: before the job's verdict). Thread-compatible: the runner's
// thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <tbb/task_group.h>

#include "plugin/series_store.h"
#include "run/job_report.h"

namespace litmus {

class SeriesFiles {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  static constexpr std::chrono::seconds kInterval{2};
  // A document's next write waits kBudgetFactor times what writing every document once took.
  static constexpr int kBudgetFactor = 50;

  // `clock` times the writes and the intervals (tests pass their own).
  explicit SeriesFiles(Clock clock = std::chrono::steady_clock::now) : clock_(std::move(clock)) {}
  ~SeriesFiles() { Wait(); }

  // `ended`: the rule ended; its document is written if changed, in the background (`series`
  // must stay as it is until Wait returns). A store with nothing in it writes nothing.
  void Write(JobReporter& reporter, const std::string& configuration_name, const std::string& rule_class,
             const SeriesStore& series, bool ended);
  // Until the documents written in the background are written.
  void Wait() { finals_.wait(); }
  // Documents written so far, all rules together.
  uint64_t writes() const { return writes_; }

 private:
  struct Written {
    uint64_t version = 0;
    std::chrono::steady_clock::time_point at{};
    std::chrono::steady_clock::time_point next{};  // no earlier write unless forced
    std::chrono::steady_clock::duration cost{};    // of its last write
  };
  Clock clock_;
  std::map<std::string, Written> written_;
  std::chrono::steady_clock::duration total_cost_{};  // the sum of every document's last cost
  uint64_t writes_ = 0;
  tbb::task_group finals_;
};

}  // namespace litmus
