// RenderReportPage: see report_page.h. The page's own script (kPageScript) draws each chart spec
// with dygraphs; the specs are built here from the job's files and the trial's curves.
#include "report_page.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include "html_text.h"
#include "litmus/format/mode.h"
#include "report_assets.h"

namespace litmus::report {
namespace {

// One line of a chart: its columns, its label in the legend, and its axis.
struct Line {
  std::string label;
  std::string name;    // the series' name
  std::string tensor;  // the series' tensor ("" for a rule's own series)
  const SeriesColumns* columns = nullptr;
  bool y2 = false;
};

// A chart spec for the page's script (see kPageScript) as JSON text, script-safe (html_text.h),
// written straight from the columns (a large job's page holds millions of numbers: no JSON
// document is built and dumped). Keys in the order the page always had them (sorted).
struct ChartSpec {
  std::string id;
  std::string columns;     // [{"axis","label","name","tensor"}, ...]
  // The rows [[step, [min, value, max] | null, ...], ...] as binary (decoded by kPageScript):
  // `rows` their count n, `data` base64 of little-endian doubles: the n steps, then for each
  // column (line) c, n cells of [min, value, max] (at n + 3 * (c * n + row)), all NaN for a gap.
  // Formatting a long job's millions of numbers as text took most of the time to make its page.
  size_t rows = 0;
  std::vector<double> data;  // (little-endian: encoded as base64 by AppendTo, into the page)
  std::string shade;       // [[from, to, mode], ...]
  std::string firings = "[]";     // [[step, value | null], ...]
  std::string thresholds = "[]";  // [{"fires_when", "value"}, ...]
  std::string kind, rule, series;  // JSON strings, or "" when absent

  // At least the size AppendTo appends (the JSON texts plus the keys and the escaped id).
  size_t SizeHint() const {
    return 128 + 6 * id.size() + columns.size() + 4 * (data.size() * sizeof(double) + 2) / 3 +
           shade.size() + firings.size() + thresholds.size() + kind.size() + rule.size() + series.size();
  }

  void AppendTo(std::string& out) const {
    out += "{\"columns\":";
    out += columns;
    out += ",\"data\":";
    AppendBase64String(out, std::as_bytes(std::span(data)));
    out += ",\"firings\":";
    out += firings;
    out += ",\"id\":";
    AppendScriptString(out, id);
    if (!kind.empty()) out += ",\"kind\":" + kind;
    out += ",\"rows\":";
    AppendJsonInt(out, static_cast<int64_t>(rows));
    if (!rule.empty()) out += ",\"rule\":" + rule;
    if (!series.empty()) out += ",\"series\":" + series;
    out += ",\"shade\":";
    out += shade;
    out += ",\"thresholds\":";
    out += thresholds;
    out += '}';
  }
};

std::string ScriptString(std::string_view text) {
  std::string out;
  AppendScriptString(out, text);
  return out;
}

// rows = the union of the lines' steps, each cell [min, value, max] (customBars) or a gap; steps
// of modes other than TRAIN shaded.
ChartSpec MakeChartSpec(const std::string& id, const std::vector<Line>& lines) {
  ChartSpec spec;
  spec.id = id;
  std::vector<std::tuple<int64_t, int64_t, int32_t>> shaded;
  for (const Line& line : lines) {
    const SeriesColumns& s = *line.columns;
    for (size_t i = 0; i < s.step.size(); ++i) {
      const int32_t mode = s.mode[i];
      if (mode != 0 && mode != static_cast<int32_t>(Mode::kTrain) && mode != static_cast<int32_t>(Mode::kGlobal)) {
        shaded.emplace_back(s.step[i], s.last_step[i], mode);
      }
    }
  }
  // The rows: when every line has the same steps in increasing order (a rule's tensors
  // published at every step, a tensor's statistics), row r holds each line's point r; else the
  // points sorted by step, a line's later point at the same step winning.
  const std::vector<int64_t>* steps = lines.empty() ? nullptr : &lines[0].columns->step;
  const bool aligned =
      steps != nullptr && std::adjacent_find(steps->begin(), steps->end(), std::greater_equal<>()) == steps->end() &&
      std::all_of(lines.begin(), lines.end(), [&](const Line& l) { return l.columns->step == *steps; });
  struct Cell {  // (step, line, index)
    int64_t step;
    uint32_t line;
    uint32_t index;
  };
  std::vector<Cell> cells;
  size_t num_rows = aligned ? steps->size() : 0;
  if (!aligned) {
    size_t total = 0;
    for (const Line& line : lines) total += line.columns->step.size();
    cells.reserve(total);
    for (size_t c = 0; c < lines.size(); ++c) {
      const std::vector<int64_t>& step = lines[c].columns->step;
      for (size_t i = 0; i < step.size(); ++i) {
        cells.push_back({step[i], static_cast<uint32_t>(c), static_cast<uint32_t>(i)});
      }
    }
    std::stable_sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) { return a.step < b.step; });
    for (size_t i = 0; i < cells.size(); ++i) num_rows += i == 0 || cells[i].step != cells[i - 1].step;
  }
  // The rows as doubles (see ChartSpec::data): the steps, then each line's cells.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double>& data = spec.data;
  data.assign((1 + 3 * lines.size()) * num_rows, nan);
  const auto put = [&](size_t row, size_t line, size_t index) {
    const SeriesColumns& s = *lines[line].columns;
    double* cell = data.data() + num_rows + 3 * (line * num_rows + row);
    const double v = s.value[index];
    cell[0] = cell[1] = cell[2] = nan;  // (overwrites a point of the same line at the same step)
    if (!std::isfinite(v)) return;  // a gap
    const double lo = s.min[index], hi = s.max[index];
    cell[0] = std::isfinite(lo) ? std::min(lo, v) : v;
    cell[1] = v;
    cell[2] = std::isfinite(hi) ? std::max(hi, v) : v;
  };
  if (aligned) {
    for (size_t r = 0; r < num_rows; ++r) data[r] = static_cast<double>((*steps)[r]);
    for (size_t c = 0; c < lines.size(); ++c) {
      for (size_t r = 0; r < num_rows; ++r) put(r, c, r);
    }
  } else {
    for (size_t i = 0, row = 0; i < cells.size(); ++i) {
      if (i > 0 && cells[i].step != cells[i - 1].step) ++row;
      data[row] = static_cast<double>(cells[i].step);
      put(row, cells[i].line, cells[i].index);
    }
  }
  if constexpr (std::endian::native == std::endian::big) {
    for (double& d : data) d = std::bit_cast<double>(__builtin_bswap64(std::bit_cast<uint64_t>(d)));
  }
  spec.rows = num_rows;
  // Shaded ranges: overlapping or adjacent ones of the same mode merged.
  std::sort(shaded.begin(), shaded.end());
  std::vector<std::tuple<int64_t, int64_t, int32_t>> merged;
  for (const auto& [from, to, mode] : shaded) {
    if (!merged.empty() && std::get<2>(merged.back()) == mode && std::get<1>(merged.back()) + 1 >= from) {
      std::get<1>(merged.back()) = std::max(std::get<1>(merged.back()), to);
    } else {
      merged.emplace_back(from, to, mode);
    }
  }
  spec.shade += '[';
  for (size_t i = 0; i < merged.size(); ++i) {
    if (i > 0) spec.shade += ',';
    spec.shade += '[';
    AppendJsonInt(spec.shade, std::get<0>(merged[i]));
    spec.shade += ',';
    AppendJsonInt(spec.shade, std::get<1>(merged[i]));
    spec.shade += ',';
    AppendScriptString(spec.shade, SeriesModeName(std::get<2>(merged[i])));
    spec.shade += ']';
  }
  spec.shade += ']';
  spec.columns += '[';
  std::set<std::string> used;
  for (const Line& line : lines) {
    // dygraphs needs distinct labels.
    std::string label = line.label;
    for (int n = 2; used.contains(label); ++n) label = line.label + " (" + std::to_string(n) + ")";
    used.insert(label);
    if (spec.columns.size() > 1) spec.columns += ',';
    spec.columns += line.y2 ? "{\"axis\":\"y2\",\"label\":" : "{\"axis\":\"y\",\"label\":";
    AppendScriptString(spec.columns, label);
    spec.columns += ",\"name\":";
    AppendScriptString(spec.columns, line.name);
    spec.columns += ",\"tensor\":";
    AppendScriptString(spec.columns, line.tensor);
    spec.columns += '}';
  }
  spec.columns += ']';
  return spec;
}

// A SeriesStore curve as columns: per bucket its mean (its only value when it holds one), min, max.
SeriesColumns ColumnsOf(const SeriesStore::Series& s) {
  SeriesColumns c;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.reserve(s.buckets.size());
  for (const SeriesStore::Bucket& b : s.buckets) {
    c.step.push_back(b.first_step);
    c.last_step.push_back(b.last_step);
    c.mode.push_back(SeriesModeCode(b.mode));
    c.value.push_back(b.count == 1 || b.finite == 0 ? b.first_value : b.sum / static_cast<double>(b.finite));
    c.min.push_back(b.finite > 0 ? b.min : nan);
    c.max.push_back(b.finite > 0 ? b.max : nan);
    c.count.push_back(b.count);
  }
  return c;
}

std::string FormatNumber(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string Optional(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "–"; }

std::string StatusClass(const std::string& status) {
  if (status == "IssuesFound") return "issues";
  if (status == "NoIssuesFound") return "ok";
  if (status == "Error") return "error";
  return "other";
}

// "key:value" lines as escaped lines.
std::string Lines(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (!out.empty()) out += "<br>";
    out += EscapeHtml(line);
  }
  return out.empty() ? "–" : out;
}

std::string FormatSeconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2fs", seconds);
  return buffer;
}

constexpr const char* kStyle = R"css(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1400px;padding:0 16px 40px;color:#1d2329}
h1{font-size:1.5em;margin:18px 0 4px} h2{font-size:1.25em;margin:28px 0 8px;border-bottom:1px solid #d5dae0;padding-bottom:4px}
h3{font-size:1.05em;margin:18px 0 6px} .muted{color:#5f6b77} code{background:#f1f3f5;padding:0 3px;border-radius:3px}
table{border-collapse:collapse;font-size:.9em;margin:6px 0} th,td{border:1px solid #d5dae0;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f1f3f5} table.summary{width:100%} table.summary td:nth-child(9){min-width:180px}
table.summary td:nth-child(10){min-width:240px} td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;border-radius:10px;padding:1px 9px;font-size:.85em;font-weight:600;color:#fff}
.badge.issues{background:#c62828} .badge.ok{background:#2e7d32} .badge.error{background:#6a1b9a} .badge.other{background:#546e7a}
.chart{width:100%;height:260px} .chartbox{margin:8px 0 18px} .legendline{font-size:.82em;color:#5f6b77;margin:2px 0}
.rec{background:#fff8e1;border-left:4px solid #f9a825;padding:6px 10px;margin:6px 0}
.note{font-size:.85em;color:#5f6b77} .controls{margin:8px 0;font-size:.9em}
.dygraph-legend{font-size:12px !important;background:rgba(255,255,255,.85) !important}
)css";

// Draws window.LITMUS_SPECS with dygraphs (customBars: each cell [min, value, max]); shades the
// steps of other modes than TRAIN, draws each threshold as a dashed line and each firing step as
// a red vertical line with the value kept at that step. Labels and modes are text, escaped where
// dygraphs takes HTML (the x value formatter; dygraphs escapes legend labels itself).
constexpr const char* kPageScript = R"js(
(function () {
  'use strict';
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
    });
  }
  function modeAt(spec, x) {
    for (var i = 0; i < spec.shade.length; ++i) {
      if (x >= spec.shade[i][0] && x <= spec.shade[i][1]) return spec.shade[i][2];
    }
    return '';
  }
  // spec.rows rows of spec.data (see ChartSpec in report_page.cc) as dygraphs takes them.
  function decodeRows(spec) {
    var text = atob(spec.data), n = spec.rows, bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; ++i) bytes[i] = text.charCodeAt(i);
    var view = new DataView(bytes.buffer), rows = new Array(n);
    function at(k) { return view.getFloat64(8 * k, true); }
    for (var r = 0; r < n; ++r) {
      var row = [at(r)];
      for (var c = 0; c < spec.columns.length; ++c) {
        var k = n + 3 * (c * n + r), v = at(k + 1);
        row.push(isNaN(v) ? null : [at(k), v, at(k + 2)]);
      }
      rows[r] = row;
    }
    return rows;
  }
  var shadeColors = {EVAL: 'rgba(33,150,243,0.12)', PREDICT: 'rgba(156,39,176,0.12)'};
  window.litmusCharts = [];
  window.LITMUS_SPECS.forEach(function (spec) {
    var el = document.getElementById(spec.id);
    if (!el || spec.rows === 0) return;
    var rows = decodeRows(spec);
    var labels = ['step'];
    var series = {};
    spec.columns.forEach(function (c) {
      labels.push(c.label);
      if (c.axis === 'y2') series[c.label] = {axis: 'y2'};
    });
    var options = {
      labels: labels,
      customBars: true,
      series: series,
      connectSeparatedPoints: true,
      drawPoints: rows.length <= 120,
      pointSize: 2,
      labelsSeparateLines: true,
      legend: 'follow',
      xlabel: 'global step',
      axes: {x: {valueFormatter: function (x) {
        var mode = modeAt(spec, x);
        return 'step ' + esc(x) + (mode ? ' &middot; ' + esc(mode) : '');
      }}},
      underlayCallback: function (ctx, area, g) {
        spec.shade.forEach(function (r) {
          var left = g.toDomXCoord(r[0] - 0.5), right = g.toDomXCoord(r[1] + 0.5);
          ctx.fillStyle = shadeColors[r[2]] || 'rgba(120,120,120,0.12)';
          ctx.fillRect(left, area.y, Math.max(1, right - left), area.h);
        });
        spec.thresholds.forEach(function (t) {
          var y = g.toDomYCoord(t.value);
          if (!isFinite(y) || y < area.y || y > area.y + area.h) return;
          ctx.save();
          ctx.strokeStyle = t.fires_when === 'below' ? '#e65100' : '#c62828';
          ctx.setLineDash([6, 4]);
          ctx.beginPath(); ctx.moveTo(area.x, y); ctx.lineTo(area.x + area.w, y); ctx.stroke();
          ctx.restore();
        });
        // (A rule that fires at most steps, --keep-going, gets dots only: lines would hide the data.)
        var lines = spec.firings.length <= 20;
        spec.firings.forEach(function (f) {
          var x = g.toDomXCoord(f[0]);
          ctx.save();
          ctx.strokeStyle = 'rgba(198,40,40,0.4)';
          if (lines) { ctx.beginPath(); ctx.moveTo(x, area.y); ctx.lineTo(x, area.y + area.h); ctx.stroke(); }
          if (f[1] !== null) {
            var y = g.toDomYCoord(f[1]);
            if (isFinite(y)) { ctx.fillStyle = '#c62828'; ctx.beginPath(); ctx.arc(x, y, 3.5, 0, 2 * Math.PI); ctx.fill(); }
          }
          ctx.restore();
        });
      }
    };
    if (Object.keys(series).length > 0) options.axes.y2 = {independentTicks: true};
    var graph = new Dygraph(el, rows, options);
    window.litmusCharts.push({spec: spec, graph: graph});
  });
  var log = document.getElementById('logscale');
  if (log) log.addEventListener('change', function () {
    window.litmusCharts.forEach(function (c) { c.graph.updateOptions({logscale: log.checked}); });
  });
  document.body.setAttribute('data-charts-drawn', String(window.litmusCharts.length));
})();
)js";

class PageBuilder {
 public:
  PageBuilder(const JobFiles& job, const TrialCurves* curves, const PageOptions& options)
      : job_(job), curves_(curves), options_(options) {}

  std::string Build() {
    Header();
    JobSection();
    SummarySection();
    for (size_t i = 0; i < job_.rules.size(); ++i) RuleSection(i, job_.rules[i]);
    LossSection();
    TensorSection();
    std::string head = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    if (options_.refresh_seconds > 0 && !job_.exit_code) {
      head += "<meta http-equiv=\"refresh\" content=\"" + std::to_string(options_.refresh_seconds) + "\">\n";
    }
    head += "<meta name=\"generator\" content=\"litmus " + EscapeHtml(options_.version) + "\">\n";
    head += "<title>litmus report: " + EscapeHtml(Title()) + "</title>\n";
    head += "<style>" + std::string(DygraphCss()) + "</style>\n<style>" + kStyle + "</style>\n";
    // (dygraph.min.js holds no "</script": checked by the report's tests.)
    const std::string_view library = DygraphJs();
    constexpr std::string_view kSpecsOpen = "<script>window.LITMUS_SPECS = [";
    constexpr std::string_view kSpecsClose = "];</script>\n<script>";
    constexpr std::string_view kEnd = "</script>\n</body>\n</html>\n";
    const std::string_view script = kPageScript;
    // The page is assembled once, at its final size: the charts' data make it tens of MB on a
    // long job, and growing it piece by piece copied it several times over (each copy into
    // fresh, page-faulted memory).
    size_t size = head.size() + library.size() + 64 + body_.size() + kSpecsOpen.size() + kSpecsClose.size() +
                  script.size() + kEnd.size();
    for (const ChartSpec& spec : specs_) size += spec.SizeHint() + 1;
    std::string page;
    page.reserve(size);
    page += head;
    page += "<script>";
    page += library;
    page += "</script>\n</head>\n<body>\n";
    page += body_;
    page += kSpecsOpen;
    for (size_t i = 0; i < specs_.size(); ++i) {
      if (i > 0) page += ',';
      specs_[i].AppendTo(page);
    }
    page += kSpecsClose;
    page += script;
    page += kEnd;
    return page;
  }

 private:
  std::string Title() const {
    std::string names;
    for (const RuleFiles& r : job_.rules) names += (names.empty() ? "" : ", ") + r.name;
    return names.empty() ? job_.output_dir : names;
  }

  void Header() {
    body_ += "<h1>litmus report</h1>\n<p class=\"muted\">" + EscapeHtml(Title()) + " &middot; ";
    if (job_.exit_code) {
      body_ += "finished, exit code " + std::to_string(*job_.exit_code);
    } else {
      body_ += "<b>running</b>: this page is rewritten while the job runs";
      if (options_.refresh_seconds > 0) body_ += " and reloads every " + std::to_string(options_.refresh_seconds) + " s";
    }
    body_ += " &middot; written " + EscapeHtml(options_.generated_at) + " by litmus " + EscapeHtml(options_.version) +
             "</p>\n<p class=\"controls\"><label><input type=\"checkbox\" id=\"logscale\"> logarithmic y axes</label> "
             "&middot; <span class=\"note\">shaded: EVAL steps (blue), PREDICT steps (purple); dashed: thresholds; red: "
             "firings; bands: min/max of the steps a point stands for</span></p>\n";
  }

  void Row(const std::string& key, const std::string& html) {
    body_ += "<tr><th>" + EscapeHtml(key) + "</th><td>" + html + "</td></tr>\n";
  }

  void JobSection() {
    body_ += "<h2 id=\"job\">Job and trial</h2>\n<table class=\"job\">\n";
    Row("status", "<span class=\"badge " + StatusClass(job_.status) + "\">" + EscapeHtml(job_.status) + "</span> " +
                      EscapeHtml(job_.details));
    Row("output folder", "<code>" + EscapeHtml(job_.output_dir) + "</code>");
    Row("trial", job_.trial.empty() ? "unknown" : "<code>" + EscapeHtml(job_.trial) + "</code>");
    if (curves_ != nullptr && curves_->info().open) {
      const TrialInfo& t = curves_->info();
      Row("workers", std::to_string(t.workers));
      std::string steps = std::to_string(t.steps) + " global steps";
      if (t.first_step) steps += " (" + std::to_string(*t.first_step) + "–" + std::to_string(*t.last_step) + ")";
      steps += t.ended ? ", training ended" : ", training not ended (yet)";
      Row("steps", EscapeHtml(steps));
      std::string modes;
      for (const auto& [mode, count] : t.steps_by_mode) modes += (modes.empty() ? "" : ", ") + mode + " " + std::to_string(count);
      Row("modes", modes.empty() ? "–" : EscapeHtml(modes));
    } else if (curves_ != nullptr && !curves_->info().error.empty()) {
      Row("trial contents", "not readable: " + EscapeHtml(curves_->info().error));
    }
    Row("started", job_.start_time.empty() ? "–" : EscapeHtml(job_.start_time));
    Row("ended", job_.exit_code ? EscapeHtml(job_.last_modified) : "running");
    Row("litmus", EscapeHtml(options_.version));
    if (!job_.warnings.empty()) {
      std::string w;
      for (const std::string& s : job_.warnings) w += (w.empty() ? "" : "<br>") + EscapeHtml(s);
      Row("warnings", w);
    }
    body_ += "</table>\n";
  }

  void SummarySection() {
    body_ += "<h2 id=\"rules\">Rules</h2>\n<table class=\"summary\">\n<tr><th>rule</th><th>status</th><th>first "
             "firing</th><th>last firing</th><th>firings</th><th>datapoints</th><th>time</th><th>parameters</th>"
             "<th>description</th><th>what to do</th></tr>\n";
    const std::vector<VerdictRow> rows = VerdictRows(job_);
    for (size_t i = 0; i < rows.size(); ++i) {
      const VerdictRow& row = rows[i];
      const RuleFiles& r = job_.rules[i];
      std::string recs;
      for (const std::string& s : r.recommendations) recs += (recs.empty() ? "" : "<br>") + EscapeHtml(s);
      body_ += "<tr class=\"verdict\" data-rule=\"" + EscapeHtml(row.rule) + "\"><td><a href=\"#rule-" +
               std::to_string(i) + "\">" + EscapeHtml(row.rule) + "</a></td><td><span class=\"badge " +
               StatusClass(row.status) + "\">" + EscapeHtml(row.status) + "</span></td><td class=\"num\">" +
               Optional(row.first_firing) + "</td><td class=\"num\">" + Optional(r.last_firing) +
               "</td><td class=\"num\">" + std::to_string(row.firings) + "</td><td class=\"num\">" +
               std::to_string(row.datapoints) + "</td><td class=\"num\">" + FormatSeconds(row.seconds) +
               "</td><td>" + Lines(r.parameters) + "</td><td>" +
               (r.description.empty() ? "–" : EscapeHtml(r.description)) + "</td><td>" + (recs.empty() ? "–" : recs) +
               "</td></tr>\n";
    }
    body_ += "</table>\n";
  }

  std::string NewChart(const std::string& title, const std::string& legend, ChartSpec spec) {
    const std::string id = spec.id;
    body_ += "<div class=\"chartbox\"><h3>" + EscapeHtml(title) + "</h3>";
    if (!legend.empty()) body_ += "<p class=\"legendline\">" + legend + "</p>";
    body_ += "<div class=\"chart\" id=\"" + id + "\"></div></div>\n";
    ++charts_;
    specs_.push_back(std::move(spec));  // (its JSON is written into the page: see Build)
    return id;
  }

  std::string NextId() const { return "chart-" + std::to_string(charts_); }

  void RuleSection(size_t index, const RuleFiles& r) {
    body_ += "<section class=\"rule\" id=\"rule-" + std::to_string(index) + "\" data-rule=\"" + EscapeHtml(r.name) +
             "\">\n<h2>" + EscapeHtml(r.name);
    if (!r.rule_class.empty() && r.rule_class != r.name) body_ += " <span class=\"muted\">(" + EscapeHtml(r.rule_class) + ")</span>";
    body_ += " <span class=\"badge " + StatusClass(r.status) + "\">" + EscapeHtml(r.status) + "</span></h2>\n";
    if (!r.description.empty()) body_ += "<p>" + EscapeHtml(r.description) + "</p>\n";
    body_ += "<p class=\"muted\">" + EscapeHtml(r.details) + "</p>\n";
    if (!r.first_message.empty()) body_ += "<p>First firing: " + EscapeHtml(r.first_message) + "</p>\n";
    for (const std::string& rec : r.recommendations) body_ += "<div class=\"rec\">" + EscapeHtml(rec) + "</div>\n";
    for (const std::string& w : r.warnings) body_ += "<p class=\"note\">warning: " + EscapeHtml(w) + "</p>\n";
    if (r.series.empty()) {
      body_ += "<p class=\"note\">No series published (yet): the rule published no value it compared, or was "
               "built for plugin ABI 1.0–1.2.</p>\n";
    }
    // One chart per series name, at most kMaxTensorsPerChart tensors each (in the file's order).
    std::vector<std::string> names;
    std::map<std::string, std::vector<const SeriesData*>> by_name;
    for (const SeriesData& s : r.series) {
      if (!by_name.contains(s.name)) names.push_back(s.name);
      by_name[s.name].push_back(&s);
    }
    for (const std::string& name : names) {
      const std::vector<const SeriesData*>& all = by_name[name];
      for (size_t begin = 0; begin < all.size(); begin += kMaxTensorsPerChart) {
        const size_t end = std::min(all.size(), begin + kMaxTensorsPerChart);
        std::vector<Line> lines;
        std::string firings = "[";
        size_t firings_kept = 0;
        int64_t total = 0, per_bucket = 1;
        for (size_t i = begin; i < end; ++i) {
          const SeriesData& s = *all[i];
          lines.push_back({.label = s.tensor.empty() ? s.name : s.tensor, .name = s.name, .tensor = s.tensor,
                           .columns = &s.columns});
          for (size_t f = 0; f < s.firing_step.size() && firings_kept < kMaxChartPoints; ++f, ++firings_kept) {
            if (firings_kept > 0) firings += ',';
            firings += '[';
            AppendJsonInt(firings, s.firing_step[f]);
            firings += ',';
            AppendJsonNumber(firings, s.firing_value[f]);
            firings += ']';
          }
          total = std::max(total, s.total_points);
          per_bucket = std::max(per_bucket, s.points_per_bucket);
        }
        firings += ']';
        ChartSpec spec = MakeChartSpec(NextId(), lines);
        spec.rule = ScriptString(r.name);
        spec.series = ScriptString(name);
        spec.firings = std::move(firings);
        spec.thresholds = "[";
        std::string legend;
        if (const auto t = r.thresholds.find(name); t != r.thresholds.end()) {
          for (const Threshold& th : t->second) {
            if (spec.thresholds.size() > 1) spec.thresholds += ',';
            spec.thresholds += "{\"fires_when\":";
            AppendScriptString(spec.thresholds, th.fires_when);
            spec.thresholds += ",\"value\":";
            AppendJsonNumber(spec.thresholds, th.value);
            spec.thresholds += '}';
            legend += (legend.empty() ? "" : "; ") + std::string("fires ") + EscapeHtml(th.fires_when) + " " +
                      EscapeHtml(FormatNumber(th.value));
          }
        }
        if (per_bucket > 1) {
          legend += (legend.empty() ? "" : "; ") + std::to_string(total) + " points, up to " +
                    std::to_string(per_bucket) + " per chart point (mean; band: min/max)";
        }
        std::string title = name;
        if (all.size() > kMaxTensorsPerChart) {
          title += " (" + std::to_string(begin / kMaxTensorsPerChart + 1) + "/" +
                   std::to_string((all.size() + kMaxTensorsPerChart - 1) / kMaxTensorsPerChart) + ")";
        }
        spec.thresholds += ']';
        NewChart(title, legend, std::move(spec));
      }
    }
    if (r.dropped_series > 0) {
      body_ += "<p class=\"note\">" + std::to_string(r.dropped_series) + " further series were not kept.</p>\n";
    }
    body_ += "</section>\n";
  }

  void LossSection() {
    body_ += "<h2 id=\"losses\">Loss curves</h2>\n";
    if (curves_ == nullptr || !curves_->info().open) {
      body_ += "<p class=\"note\">The trial could not be read" +
               (curves_ != nullptr && !curves_->info().error.empty() ? ": " + EscapeHtml(curves_->info().error) : std::string()) +
               ".</p>\n";
      return;
    }
    // One chart per loss tensor, a line per mode.
    std::vector<std::string> tensors;
    std::map<std::string, std::vector<const SeriesStore::Series*>> by_tensor;
    for (const SeriesStore::Series& s : curves_->losses().series()) {
      if (!by_tensor.contains(s.tensor)) tensors.push_back(s.tensor);
      by_tensor[s.tensor].push_back(&s);
    }
    if (tensors.empty()) body_ += "<p class=\"note\">The trial has no <code>losses</code> collection (yet).</p>\n";
    for (const std::string& tensor : tensors) {
      std::vector<SeriesColumns>& columns = loss_columns_.emplace_back();
      columns.reserve(by_tensor[tensor].size());
      std::vector<Line> lines;
      for (const SeriesStore::Series* s : by_tensor[tensor]) {
        columns.push_back(ColumnsOf(*s));
        lines.push_back({.label = s->name, .name = s->name, .tensor = tensor, .columns = &columns.back()});
      }
      ChartSpec spec = MakeChartSpec(NextId(), lines);
      spec.kind = "\"loss\"";
      NewChart(tensor, "a line per mode, at the trial's global steps", std::move(spec));
    }
  }

  void TensorSection() {
    body_ += "<h2 id=\"tensors\">Watched tensors</h2>\n";
    if (curves_ == nullptr || !curves_->info().open) {
      body_ += "<p class=\"note\">The trial could not be read.</p>\n";
      return;
    }
    if (curves_->watched().empty()) {
      body_ += "<p class=\"note\">No rule published a series of a tensor.</p>\n";
      return;
    }
    body_ += "<p class=\"note\">The tensors the rules published series of: mean (line) with the min/max band, and "
             "NaN/inf counts (right axis).</p>\n";
    std::map<std::pair<std::string, std::string>, const SeriesStore::Series*> stats;
    for (const SeriesStore::Series& s : curves_->stats().series()) stats[{s.tensor, s.name}] = &s;
    for (const std::string& tensor : curves_->watched()) {
      const auto get = [&](const char* name) -> const SeriesStore::Series* {
        const auto it = stats.find({tensor, name});
        return it == stats.end() ? nullptr : it->second;
      };
      const SeriesStore::Series* mean = get(TrialCurves::kMean);
      if (mean == nullptr) continue;  // not in the trial (yet)
      std::vector<SeriesColumns>& columns = loss_columns_.emplace_back();
      columns.reserve(3);
      columns.push_back(ColumnsOf(*mean));
      const SeriesStore::Series* lo = get(TrialCurves::kMin);
      const SeriesStore::Series* hi = get(TrialCurves::kMax);
      if (lo != nullptr && hi != nullptr && lo->buckets.size() == mean->buckets.size() &&
          hi->buckets.size() == mean->buckets.size()) {
        // (The band: the least minimum and the largest maximum of each bucket, as ColumnsOf.)
        const double nan = std::numeric_limits<double>::quiet_NaN();
        for (size_t i = 0; i < mean->buckets.size(); ++i) {
          columns.back().min[i] = lo->buckets[i].finite > 0 ? lo->buckets[i].min : nan;
          columns.back().max[i] = hi->buckets[i].finite > 0 ? hi->buckets[i].max : nan;
        }
      }
      std::vector<Line> lines = {{.label = "mean", .name = "mean", .tensor = tensor, .columns = &columns.back()}};
      for (const char* name : {TrialCurves::kNan, TrialCurves::kInf}) {
        if (const SeriesStore::Series* s = get(name)) {
          columns.push_back(ColumnsOf(*s));
          columns.back().value = columns.back().max;  // the most in a chart point
          lines.push_back({.label = name, .name = name, .tensor = tensor, .columns = &columns.back(), .y2 = true});
        }
      }
      ChartSpec spec = MakeChartSpec(NextId(), lines);
      spec.kind = "\"tensor\"";
      const int64_t stride = curves_->stride(tensor);
      NewChart(tensor, stride > 1 ? "read at every " + std::to_string(stride) + "th of its steps (bounded cost)" : "",
               std::move(spec));
    }
    if (curves_->watched_dropped() > 0) {
      body_ += "<p class=\"note\">" + std::to_string(curves_->watched_dropped()) + " further tensors not shown (at most " +
               std::to_string(TrialCurves::kMaxWatched) + ").</p>\n";
    }
  }

  const JobFiles& job_;
  const TrialCurves* curves_;
  const PageOptions& options_;
  std::string body_;
  std::vector<ChartSpec> specs_;
  size_t charts_ = 0;
  std::vector<std::vector<SeriesColumns>> loss_columns_;  // (vectors reserved before pointers are taken)
};

}  // namespace

std::string RenderReportPage(const JobFiles& job, const TrialCurves* curves, const PageOptions& options) {
  return PageBuilder(job, curves, options).Build();
}

}  // namespace litmus::report
