// RenderReportPage: the HTML report of a job (docs/report.md "The HTML report") as one
// self-contained page: the chart library, the styles and the data inline, nothing fetched when it
// is viewed. Sections: the job and trial, the rules summary (the verdict table's rows plus last
// firing, parameters, description and recommendations), per rule a chart of each published
// series (threshold lines, firing steps marked, EVAL/PREDICT steps shaded), the loss curves by
// mode and the statistics of the watched tensors. Every text from the job's files is escaped
// (html_text.h); every chart holds at most kMaxChartPoints points per series. The page keeps its
// charts in `window.litmusCharts` ([{spec, graph}]: the data it was given and the Dygraph). Pure
// function; thread-safe.
#pragma once

#include <string>

#include "job_files.h"
#include "trial_curves.h"

namespace litmus::report {

struct PageOptions {
  std::string generated_at;  // ISO time shown in the header
  std::string version;       // litmus version shown in the header
  int refresh_seconds = 0;   // > 0: a running job's page reloads itself that often
};

// `curves` may be null (no trial read).
std::string RenderReportPage(const JobFiles& job, const TrialCurves* curves, const PageOptions& options);

// At most this many tensors share one chart of a rule's series (more make further charts).
inline constexpr size_t kMaxTensorsPerChart = 8;

}  // namespace litmus::report
