// SeriesFiles: change- and time-throttled writes of the series files.
#include "run/series_files.h"

namespace litmus {

void SeriesFiles::Write(JobReporter& reporter, const std::string& configuration_name, const std::string& rule_class,
                        const SeriesStore& series, bool force) {
  if (series.empty()) return;
  Written& w = written_[configuration_name];
  if (w.version == series.version()) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && w.at != std::chrono::steady_clock::time_point{} && now - w.at < kInterval) return;
  reporter.WriteRuleSeries(configuration_name, series.ToJson(configuration_name, rule_class));
  w.version = series.version();
  w.at = now;
}

}  // namespace litmus
