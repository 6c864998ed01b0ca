// Downsample: see downsample.h.
#include "downsample.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace litmus::report {

SeriesColumns Downsample(SeriesColumns in, size_t max_points) {
  const size_t n = in.step.size();
  if (max_points == 0 || n <= max_points) return in;
  const size_t group = (n + max_points - 1) / max_points;
  SeriesColumns out;
  out.reserve((n + group - 1) / group);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (size_t begin = 0; begin < n; begin += group) {
    const size_t end = std::min(n, begin + group);
    double sum = 0, lo = nan, hi = nan;
    int64_t weight = 0, count = 0;
    for (size_t i = begin; i < end; ++i) {
      const int64_t c = std::max<int64_t>(1, in.count[i]);
      count += c;
      if (std::isfinite(in.value[i])) {
        sum += in.value[i] * static_cast<double>(c);
        weight += c;
      }
      if (!std::isnan(in.min[i])) lo = std::isnan(lo) ? in.min[i] : std::min(lo, in.min[i]);
      if (!std::isnan(in.max[i])) hi = std::isnan(hi) ? in.max[i] : std::max(hi, in.max[i]);
    }
    out.step.push_back(in.step[begin]);
    out.last_step.push_back(in.last_step[end - 1]);
    out.mode.push_back(in.mode[begin]);
    // A group of only NaN/inf keeps its first value (the chart shows a gap there).
    out.value.push_back(weight > 0 ? sum / static_cast<double>(weight) : in.value[begin]);
    out.min.push_back(lo);
    out.max.push_back(hi);
    out.count.push_back(count);
  }
  return out;
}

}  // namespace litmus::report
