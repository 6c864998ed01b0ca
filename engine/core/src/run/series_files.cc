// SeriesFiles: change- and time-throttled writes of the series files.
#include "run/series_files.h"

#include <algorithm>

namespace litmus {

void SeriesFiles::Write(JobReporter& reporter, const std::string& configuration_name, const std::string& rule_class,
                        const SeriesStore& series, bool force) {
  if (series.empty()) return;
  Written& w = written_[configuration_name];
  if (w.version == series.version()) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && w.at != std::chrono::steady_clock::time_point{} && now < w.next) return;
  reporter.WriteRuleSeries(configuration_name, series.ToJson(configuration_name, rule_class));
  w.version = series.version();
  w.at = now;
  // A large document (hundreds of series of 1024 buckets: tens of MB) is not rewritten more
  // often than keeps its cost at ~2 % of the runner's time.
  w.next = now + std::max<std::chrono::steady_clock::duration>(kInterval, 50 * (std::chrono::steady_clock::now() - now));
}

}  // namespace litmus
