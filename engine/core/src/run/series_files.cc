// SeriesFiles: change- and time-throttled writes of the series files.
#include "run/series_files.h"

#include <algorithm>

namespace litmus {

void SeriesFiles::Write(JobReporter& reporter, const std::string& configuration_name, const std::string& rule_class,
                        const SeriesStore& series, bool ended) {
  if (series.empty()) return;
  Written& w = written_[configuration_name];
  if (w.version == series.version()) return;
  if (ended) {
    ++writes_;
    w.version = series.version();
    finals_.run([&reporter, configuration_name, rule_class, &series] {
      reporter.WriteRuleSeries(configuration_name, series.ToJsonPieces(configuration_name, rule_class));
    });
    return;
  }
  const auto now = clock_();
  if (w.at != std::chrono::steady_clock::time_point{} && now < w.next) return;
  reporter.WriteRuleSeries(configuration_name, series.ToJsonPieces(configuration_name, rule_class));
  ++writes_;
  w.version = series.version();
  w.at = now;
  total_cost_ -= w.cost;
  w.cost = clock_() - now;
  total_cost_ += w.cost;
  // Each document waits kBudgetFactor times the cost of writing all of them once: rewriting
  // every document once per wait keeps the job's series writes at ~1/kBudgetFactor of its time.
  w.next = now + std::max<std::chrono::steady_clock::duration>(kInterval, kBudgetFactor * total_cost_);
}

}  // namespace litmus
