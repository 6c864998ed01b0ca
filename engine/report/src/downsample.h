// Downsample: bounds a series shown in the HTML report to at most kMaxChartPoints points the way
// the runner's SeriesStore bounds what a rule publishes: consecutive points merge into one whose
// step is the first, whose value is the mean of the finite values, and whose min/max band keeps
// the extremes, so a spike survives. A 100k-step series stays a ~1000-point chart. Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace litmus::report {

inline constexpr size_t kMaxChartPoints = 1024;

// Columns of one series, index i = one point (a bucket: steps step[i]..last_step[i]). value/min/max
// may hold NaN and infinities (min/max of a bucket are those of its finite values; NaN when it has
// none). mode: the LITMUS_MODE_* value (litmus::Mode) of the bucket's first step, 0 when unknown.
struct SeriesColumns {
  std::vector<int64_t> step;
  std::vector<int64_t> last_step;
  std::vector<int32_t> mode;
  std::vector<double> value;
  std::vector<double> min;
  std::vector<double> max;
  std::vector<int64_t> count;  // points merged into each

  // Room for n points in every column (one allocation each: a job's page makes hundreds).
  void reserve(size_t n) {
    step.reserve(n);
    last_step.reserve(n);
    mode.reserve(n);
    value.reserve(n);
    min.reserve(n);
    max.reserve(n);
    count.reserve(n);
  }
};

// At most `max_points` points: groups of ceil(n / max_points) consecutive points merged as above
// (value: the count-weighted mean of the groups' finite values). Unchanged when already small.
SeriesColumns Downsample(SeriesColumns in, size_t max_points = kMaxChartPoints);

}  // namespace litmus::report
