// SeriesFiles: writes each rule's rule-reports/<name>.series.json (SeriesStore::ToJson) through
// the JobReporter, only when the series changed and, while the rule runs, at most every
// kInterval, or less often for a document whose writing takes long (a rule may publish at every
// step; the file is for people and `litmus report`).
// Thread-compatible: the runner's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "plugin/series_store.h"
#include "run/job_report.h"

namespace litmus {

class SeriesFiles {
 public:
  static constexpr std::chrono::seconds kInterval{2};

  // `force`: write now if changed (the rule ended). A store with nothing in it writes nothing.
  void Write(JobReporter& reporter, const std::string& configuration_name, const std::string& rule_class,
             const SeriesStore& series, bool force);

 private:
  struct Written {
    uint64_t version = 0;
    std::chrono::steady_clock::time_point at{};
    std::chrono::steady_clock::time_point next{};  // no earlier write unless forced
  };
  std::map<std::string, Written> written_;
};

}  // namespace litmus
