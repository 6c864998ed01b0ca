// JobFilesReader and VerdictRows: see job_files.h.
#include "job_files.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "litmus/format/mode.h"

namespace litmus::report {
namespace {

using Json = nlohmann::json;

StatusOr<Json> ReadJsonFile(Env* env, const std::string& path) {
  StatusOr<std::string> text = env->ReadFileToString(path);
  if (!text.ok()) return text.status();
  Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError("cannot read " + path + ": not valid JSON");
  return j;
}

std::string StringOr(const Json& j, const char* key, std::string fallback = "") {
  if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  return fallback;
}

std::optional<int64_t> IntOf(const Json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_number_integer()) return j[key].get<int64_t>();
  return std::nullopt;
}

// A number of the series file: JSON numbers, or "nan", "inf", "-inf" (docs/report.md).
double SeriesNumber(const Json& v) {
  if (v.is_number()) return v.get<double>();
  if (v == "inf") return std::numeric_limits<double>::infinity();
  if (v == "-inf") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> Numbers(const Json& s, const char* key) {
  std::vector<double> out;
  if (!s.contains(key) || !s[key].is_array()) return out;
  for (const Json& v : s[key]) out.push_back(SeriesNumber(v));
  return out;
}

std::vector<int64_t> Integers(const Json& s, const char* key) {
  std::vector<int64_t> out;
  if (!s.contains(key) || !s[key].is_array()) return out;
  for (const Json& v : s[key]) out.push_back(v.is_number() ? v.get<int64_t>() : 0);
  return out;
}

// The series file's contents into `rule`. A file with inconsistent columns is InvalidArgument.
Status ParseSeries(const Json& doc, const std::string& path, RuleFiles* rule) {
  if (!doc.is_object() || doc.value("format", "") != "litmus-series/1") {
    return InvalidArgumentError("cannot read " + path + ": not a litmus-series/1 file");
  }
  if (doc.contains("thresholds") && doc["thresholds"].is_object()) {
    for (const auto& [series, list] : doc["thresholds"].items()) {
      for (const Json& t : list) rule->thresholds[series].push_back({SeriesNumber(t.value("value", Json())), StringOr(t, "fires_when")});
    }
  }
  if (doc.contains("recommendations") && doc["recommendations"].is_array()) {
    for (const Json& r : doc["recommendations"]) {
      if (r.is_string()) rule->recommendations.push_back(r.get<std::string>());
    }
  }
  rule->dropped_series = IntOf(doc, "dropped_series").value_or(0);
  if (!doc.contains("series") || !doc["series"].is_array()) return OkStatus();
  for (const Json& s : doc["series"]) {
    SeriesData data;
    data.name = StringOr(s, "name");
    data.tensor = StringOr(s, "tensor");
    data.total_points = IntOf(s, "total_points").value_or(0);
    data.points_per_bucket = IntOf(s, "points_per_bucket").value_or(1);
    SeriesColumns& c = data.columns;
    c.step = Integers(s, "step");
    c.last_step = Integers(s, "last_step");
    c.value = Numbers(s, "value");
    c.min = Numbers(s, "min");
    c.max = Numbers(s, "max");
    c.count = Integers(s, "count");
    if (s.contains("mode") && s["mode"].is_array()) {
      for (const Json& m : s["mode"]) {
        const std::optional<Mode> mode = m.is_string() ? ModeFromName(m.get<std::string>()) : std::nullopt;
        c.mode.push_back(mode ? static_cast<int32_t>(*mode) : 0);
      }
    }
    const size_t n = c.step.size();
    if (c.last_step.size() != n || c.value.size() != n || c.min.size() != n || c.max.size() != n ||
        c.count.size() != n || c.mode.size() != n) {
      return InvalidArgumentError("cannot read " + path + ": the columns of series '" + data.name + "' (" +
                                  data.tensor + ") differ in length");
    }
    c = Downsample(std::move(c));
    if (s.contains("firings") && s["firings"].is_object()) {
      data.firing_step = Integers(s["firings"], "step");
      data.firing_value = Numbers(s["firings"], "value");
      data.firing_value.resize(data.firing_step.size(), std::numeric_limits<double>::quiet_NaN());
    }
    rule->series.push_back(std::move(data));
  }
  return OkStatus();
}

// A text as the series document carries it: invalid UTF-8 replaced (nlohmann's `replace`, as
// SeriesStore's writer does). ASCII, the usual case, is returned as it is.
std::string StoredText(const std::string& text) {
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) return text;
  return Json::parse(Json(text).dump(-1, ' ', false, Json::error_handler_t::replace)).get<std::string>();
}

// A double as read back from the document's shortest round-trip text: exact, except that "-0"
// reads as the integer 0.
double StoredNumber(double v) { return v == 0 ? 0.0 : v; }


}  // namespace

void SeriesFromStore(const SeriesStore& store, RuleFiles* rule) {
  for (const auto& [series, sides] : store.thresholds()) {
    std::vector<Threshold>& out = rule->thresholds[StoredText(series)];
    for (const SeriesStore::Threshold& t : sides) {
      out.push_back({StoredNumber(t.value), t.fires_when == 1 ? "above" : t.fires_when == 2 ? "below" : ""});
    }
  }
  for (const std::string& r : store.recommendations()) rule->recommendations.push_back(StoredText(r));
  rule->dropped_series = store.dropped_series();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const SeriesStore::Series& s : store.series()) {
    SeriesData data;
    data.name = StoredText(s.name);
    data.tensor = StoredText(s.tensor);
    data.total_points = s.total_points;
    data.points_per_bucket = s.points_per_bucket;
    SeriesColumns& c = data.columns;
    c.reserve(s.buckets.size());
    for (const SeriesStore::Bucket& b : s.buckets) {
      // What the document holds (SeriesStore::AppendSeriesJson): the only value as published,
      // else the mean of the finite ones; min/max of the finite ones, else that value.
      const double value = b.count == 1 ? b.first_value : b.finite > 0 ? b.sum / static_cast<double>(b.finite) : nan;
      c.step.push_back(b.first_step);
      c.last_step.push_back(b.last_step);
      c.mode.push_back(SeriesModeCode(b.mode));
      c.value.push_back(StoredNumber(value));
      c.min.push_back(StoredNumber(b.finite > 0 ? b.min : value));
      c.max.push_back(StoredNumber(b.finite > 0 ? b.max : value));
      c.count.push_back(b.count);
    }
    c = Downsample(std::move(c));
    data.firing_step.reserve(s.firings.size());
    data.firing_value.reserve(s.firings.size());
    for (const SeriesStore::Point& p : s.firings) {
      data.firing_step.push_back(p.step);
      data.firing_value.push_back(StoredNumber(p.value));
    }
    rule->series.push_back(std::move(data));
  }
}

std::string SeriesModeName(int32_t mode) {
  const std::optional<Mode> m = ModeFromValue(mode);
  return m ? std::string(ModeName(*m)) : std::string();
}

std::vector<VerdictRow> VerdictRows(const JobFiles& job) {
  std::vector<VerdictRow> rows;
  for (const RuleFiles& r : job.rules) {
    rows.push_back({.rule = r.name,
                    .status = r.status,
                    .first_firing = r.first_firing,
                    .firings = r.has_report ? r.triggered : r.firing_events,
                    .datapoints = r.has_report ? r.datapoints : r.steps_evaluated,
                    .seconds = r.seconds});
  }
  return rows;
}

JobFilesReader::JobFilesReader(Env* env, std::string output_dir) : env_(env), output_dir_(std::move(output_dir)) {}

Status JobFilesReader::ReadEvents() {
  const std::string path = Env::JoinPath(output_dir_, "events.jsonl");
  StatusOr<bool> exists = env_->FileExists(path);
  if (!exists.ok()) return exists.status();
  if (!*exists) return OkStatus();  // not yet
  StatusOr<std::unique_ptr<RandomAccessFile>> file = env_->NewRandomAccessFile(path);
  if (!file.ok()) return file.status();
  StatusOr<uint64_t> size = (*file)->Size();
  if (!size.ok()) return size.status();
  if (*size < events_offset_) {
    // A new job started in the folder (events.jsonl begins anew): read it from the start.
    events_offset_ = 0;
    start_time_.clear();
    firings_.clear();
  }
  std::string pending;
  std::vector<std::byte> buffer(1 << 20);
  uint64_t at = events_offset_;
  while (at < *size) {
    StatusOr<size_t> got = (*file)->Read(at, buffer);
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    at += *got;
    pending.append(reinterpret_cast<const char*>(buffer.data()), *got);
    size_t begin = 0;
    for (size_t end = pending.find('\n'); end != std::string::npos; end = pending.find('\n', begin)) {
      const std::string_view line(pending.data() + begin, end - begin);
      events_offset_ += end - begin + 1;
      begin = end + 1;
      const Json e = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (e.is_discarded() || !e.is_object()) continue;  // (a line being written: whole lines only reach here)
      if (start_time_.empty()) start_time_ = StringOr(e, "time");
      if (StringOr(e, "event") != "RuleEvaluationConditionMet") continue;
      const std::optional<int64_t> step = IntOf(e, "step");
      if (!step) continue;
      Firings& f = firings_[StringOr(e, "rule")];
      ++f.count;
      if (!f.first || *step < *f.first) {
        f.first = step;
        f.first_message = StringOr(e, "message");
      }
      if (!f.last || *step > *f.last) f.last = step;
    }
    pending.erase(0, begin);  // a line not yet ended is read again next time
  }
  return OkStatus();
}

StatusOr<JobFiles> JobFilesReader::Read(const LiveSeries* live) {
  const std::string status_path = Env::JoinPath(output_dir_, "status.json");
  StatusOr<bool> exists = env_->FileExists(status_path);
  if (!exists.ok()) return exists.status();
  if (!*exists) return NotFoundError("not a job output folder (no status.json): " + output_dir_);
  StatusOr<Json> status = ReadJsonFile(env_, status_path);
  if (!status.ok()) return status.status();
  if (!status->is_object() || !status->contains("rules") || !(*status)["rules"].is_array()) {
    return InvalidArgumentError("cannot read " + status_path + ": not a litmus status.json (no \"rules\")");
  }
  if (Status events = ReadEvents(); !events.ok()) {
    return Status(events.code(), "cannot read " + Env::JoinPath(output_dir_, "events.jsonl") + ": " +
                                     std::string(events.message()));
  }
  JobFiles job;
  job.output_dir = output_dir_;
  if (const std::optional<int64_t> code = IntOf(*status, "exit_code")) job.exit_code = static_cast<int>(*code);
  job.status = StringOr(*status, "RuleEvaluationStatus");
  job.details = StringOr(*status, "StatusDetails");
  job.last_modified = StringOr(*status, "LastModifiedTime");
  job.start_time = start_time_;
  if (status->contains("Warnings") && (*status)["Warnings"].is_array()) {
    for (const Json& w : (*status)["Warnings"]) {
      if (w.is_string()) job.warnings.push_back(w.get<std::string>());
    }
  }
  // The trial, as the job named it (absent before the job's checkpoint is first written).
  const std::string checkpoint = Env::JoinPath(output_dir_, "checkpoint.json");
  if (StatusOr<bool> has = env_->FileExists(checkpoint); has.ok() && *has) {
    if (StatusOr<Json> c = ReadJsonFile(env_, checkpoint); c.ok()) job.trial = StringOr(*c, "trial");
  }
  for (const Json& r : (*status)["rules"]) {
    RuleFiles rule;
    rule.name = StringOr(r, "RuleConfigurationName");
    rule.rule_class = StringOr(r, "rule");
    rule.status = StringOr(r, "RuleEvaluationStatus");
    rule.details = StringOr(r, "StatusDetails");
    if (r.contains("Progress")) {
      rule.steps_evaluated = IntOf(r["Progress"], "StepsEvaluated").value_or(0);
      rule.last_step = IntOf(r["Progress"], "LastStep");
    }
    if (r.contains("Warnings") && r["Warnings"].is_array()) {
      for (const Json& w : r["Warnings"]) {
        if (w.is_string()) rule.warnings.push_back(w.get<std::string>());
      }
    }
    const std::string report_path = Env::JoinPath(output_dir_, "rule-reports/" + rule.name + ".json");
    if (StatusOr<bool> has = env_->FileExists(report_path); has.ok() && *has) {
      StatusOr<Json> report = ReadJsonFile(env_, report_path);
      if (!report.ok()) return report.status();
      rule.has_report = true;
      rule.triggered = IntOf(*report, "RuleTriggered").value_or(0);
      rule.violations = IntOf(*report, "Violations").value_or(0);
      rule.datapoints = IntOf(*report, "Datapoints").value_or(0);
      rule.parameters = StringOr(*report, "RuleParameters");
      rule.description = StringOr(*report, "Description");
      if (report->contains("Seconds") && (*report)["Seconds"].is_number()) rule.seconds = (*report)["Seconds"].get<double>();
    }
    const SeriesStore* store = nullptr;
    if (live != nullptr) {
      if (const auto it = live->find(rule.name); it != live->end() && it->second != nullptr && !it->second->empty()) {
        store = it->second;
      }
    }
    const std::string series_path = Env::JoinPath(output_dir_, "rule-reports/" + rule.name + ".series.json");
    if (store != nullptr) {
      SeriesFromStore(*store, &rule);
    } else if (StatusOr<bool> has = env_->FileExists(series_path); has.ok() && *has) {
      StatusOr<Json> series = ReadJsonFile(env_, series_path);
      if (!series.ok()) return series.status();
      LITMUS_RETURN_IF_ERROR(ParseSeries(*series, series_path, &rule));
    }
    if (const auto f = firings_.find(rule.name); f != firings_.end()) {
      rule.firing_events = f->second.count;
      rule.first_firing = f->second.first;
      rule.last_firing = f->second.last;
      rule.first_message = f->second.first_message;
    }
    job.rules.push_back(std::move(rule));
  }
  return job;
}

}  // namespace litmus::report
