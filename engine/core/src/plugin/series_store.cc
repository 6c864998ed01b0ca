// SeriesStore: bounded series, pairwise bucket merging, and the series JSON document.
#include "plugin/series_store.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include <tbb/parallel_for.h>

#include "json_string.h"

namespace litmus {
namespace {

// A JSON value for a double: shortest round-trip text; NaN and infinities as the strings "nan",
// "inf", "-inf" (JSON has no such numbers; the report and TensorBoard writer read them back).
void AppendNumber(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "\"nan\"";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "\"inf\"" : "\"-inf\"";
    return;
  }
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), v);
  out.append(buffer, result.ptr);
}

void AppendInt(std::string& out, int64_t v) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), v);
  out.append(buffer, result.ptr);
}

const char* ModeText(int32_t mode) {
  switch (mode) {
    case 1: return "\"TRAIN\"";
    case 2: return "\"EVAL\"";
    case 3: return "\"PREDICT\"";
    case 4: return "\"GLOBAL\"";
    default: return "null";
  }
}

const char* FiresText(int32_t fires_when) {
  switch (fires_when) {
    case 1: return "\"above\"";
    case 2: return "\"below\"";
    default: return "null";
  }
}

// What a bucket shows: its only value as published, else the mean of its finite values (NaN if
// none is finite).
double ValueOf(const SeriesStore::Bucket& b) {
  if (b.count == 1) return b.first_value;
  return b.finite > 0 ? b.sum / static_cast<double>(b.finite) : std::nan("");
}

// The index_ key of (name, tensor): the name's size first, so that names with NUL bytes never
// collide ("a\0" + "b" and "a" + "\0b").
void Key(std::string_view name, std::string_view tensor, std::string& out) {
  const uint64_t size = name.size();
  out.assign(reinterpret_cast<const char*>(&size), sizeof size);
  out.append(name);
  out.append(tensor);
}

std::string Truncated(std::string_view text) {
  return std::string(text.substr(0, SeriesStore::kMaxTextBytes));
}

}  // namespace

void SeriesStore::Disable() {
  disabled_ = true;
  series_.clear();
  index_.clear();
  thresholds_.clear();
  recommendations_.clear();
  new_points_.clear();
  dropped_series_ = 0;
  dropped_keys_.clear();
  next_ = 0;
  ++version_;
}

uint32_t SeriesStore::Add(std::string_view name, std::string_view tensor, int64_t step, int32_t mode, double value) {
  if (disabled_) return kNotFound;
  // A rule publishes the same series in the same order at every step: the one after the last
  // found is tried first (two comparisons instead of building a key and hashing it).
  // (Names kept truncated are always looked up by their whole text.)
  uint32_t at = next_;
  if (at >= series_.size() || name.size() > kMaxTextBytes || tensor.size() > kMaxTextBytes ||
      series_[at].name != name || series_[at].tensor != tensor) {
    Key(name, tensor, key_);
    auto it = index_.find(key_);
    if (it == index_.end()) {
      if (series_.size() >= kMaxSeries) {
        // (Counted once per series, not per point: a rule publishes its series at every step.)
        if (dropped_keys_.size() < kMaxDroppedCounted && dropped_keys_.insert(std::hash<std::string>{}(key_)).second) {
          ++dropped_series_;
        }
        return kDropped;
      }
      it = index_.emplace(key_, static_cast<uint32_t>(series_.size())).first;
      Series s;
      s.name = Truncated(name);
      s.tensor = Truncated(tensor);
      // Room for every bucket it will hold at once: growing by doubling copied the buckets and
      // faulted in fresh pages at every growth, for every series of every rule (the memory is
      // only touched as buckets are added; a long job fills it anyway).
      s.buckets.reserve(kMaxBuckets + 1);
      series_.push_back(std::move(s));
    }
    at = it->second;
  }
  AddAt(at, step, mode, value);
  return at;
}

uint32_t SeriesStore::Find(std::string_view name, std::string_view tensor) const {
  if (disabled_) return kNotFound;
  std::string key;
  Key(name, tensor, key);
  const auto it = index_.find(key);
  return it == index_.end() ? kNotFound : it->second;
}

void SeriesStore::AddAt(uint32_t at, int64_t step, int32_t mode, double value) {
  if (disabled_ || at >= series_.size()) return;
  next_ = at + 1 == series_.size() ? 0 : at + 1;
  Series& s = series_[at];
  ++version_;
  ++s.total_points;
  if (s.recent.size() < kRecentPoints) {
    s.recent.push_back({step, mode, value});
  } else {
    s.recent[s.recent_next] = {step, mode, value};
    s.recent_next = (s.recent_next + 1) % kRecentPoints;
  }
  if (keep_new_points_) new_points_.push_back({at, step, value});
  const bool finite = std::isfinite(value);
  if (!s.buckets.empty() && s.buckets.back().count < s.points_per_bucket) {
    // Merge of a one-point bucket, inlined (the common case once a series has been compacted).
    Bucket& b = s.buckets.back();
    if (finite) {
      if (b.finite == 0) {
        b.min = value;
        b.max = value;
      } else {
        b.min = std::min(b.min, value);
        b.max = std::max(b.max, value);
      }
      ++b.finite;
      b.sum += value;
    }
    ++b.count;
    b.last_step = std::max(b.last_step, step);
    b.first_step = std::min(b.first_step, step);
  } else {
    s.buckets.push_back(Bucket{.first_step = step,
                               .last_step = step,
                               .mode = mode,
                               .count = 1,
                               .finite = finite ? 1 : 0,
                               .sum = finite ? value : 0.0,
                               .min = finite ? value : 0.0,
                               .max = finite ? value : 0.0,
                               .first_value = value});
    if (s.buckets.size() > kMaxBuckets) Compact(s);
  }
}

void SeriesStore::Merge(Bucket& into, const Bucket& from) {
  if (from.finite > 0) {
    if (into.finite == 0) {
      into.min = from.min;
      into.max = from.max;
    } else {
      into.min = std::min(into.min, from.min);
      into.max = std::max(into.max, from.max);
    }
  }
  into.finite += from.finite;
  into.sum += from.sum;
  into.count += from.count;
  into.last_step = std::max(into.last_step, from.last_step);
  into.first_step = std::min(into.first_step, from.first_step);
}

void SeriesStore::Compact(Series& s) {
  std::vector<Bucket>& b = s.buckets;
  size_t out = 0;
  for (size_t i = 0; i < b.size(); i += 2) {
    Bucket merged = b[i];
    if (i + 1 < b.size()) Merge(merged, b[i + 1]);
    b[out++] = merged;
  }
  b.resize(out);
  s.points_per_bucket *= 2;
}

void SeriesStore::SetThreshold(std::string_view series, double value, int32_t fires_when) {
  if (disabled_) return;
  const std::string name = Truncated(series);
  auto it = thresholds_.find(name);
  if (it == thresholds_.end()) {
    if (thresholds_.size() >= kMaxSeries) return;
    it = thresholds_.emplace(name, std::vector<Threshold>()).first;
  }
  std::vector<Threshold>& sides = it->second;
  const auto same_side = std::find_if(sides.begin(), sides.end(),
                                      [&](const Threshold& t) { return t.fires_when == fires_when; });
  if (same_side != sides.end()) {
    same_side->value = value;
  } else {
    sides.push_back({value, fires_when});
    std::sort(sides.begin(), sides.end(),
              [](const Threshold& a, const Threshold& b) { return a.fires_when < b.fires_when; });
  }
  ++version_;
}

void SeriesStore::AddRecommendation(std::string_view text) {
  if (disabled_) return;
  std::string t = Truncated(text);
  if (recommendations_.size() >= kMaxRecommendations ||
      std::find(recommendations_.begin(), recommendations_.end(), t) != recommendations_.end()) {
    return;
  }
  recommendations_.push_back(std::move(t));
  ++version_;
}

void SeriesStore::MarkFiring(int64_t step) {
  if (disabled_) return;
  for (Series& s : series_) {
    if (s.firings.size() >= kMaxFirings || (!s.firings.empty() && s.firings.back().step == step)) continue;
    // Newest first: the slot before recent_next, backwards around the ring.
    const size_t n = s.recent.size();
    for (size_t i = 0; i < n; ++i) {
      const Point& p = s.recent[(s.recent_next + n - 1 - i) % n];
      if (p.step != step) continue;
      s.firings.push_back(p);
      ++version_;
      break;
    }
  }
}

std::vector<SeriesStore::NewPoint> SeriesStore::TakeNewPoints() {
  std::vector<NewPoint> out;
  out.swap(new_points_);
  new_points_.reserve(out.size());  // (a rule publishes about as many points at every step)
  return out;
}

// One element of the "series" list (no separator before it).
void SeriesStore::AppendSeriesJson(std::string& out, const Series& s) {
  out += "\n{\"name\":";
  AppendJsonString(out, s.name);
  out += ",\"tensor\":";
  AppendJsonString(out, s.tensor);
  out += ",\"total_points\":";
  AppendInt(out, s.total_points);
  out += ",\"points_per_bucket\":";
  AppendInt(out, s.points_per_bucket);
  // Columns, one entry per bucket.
  const auto column = [&](const char* key, auto&& append) {
    out += ",\"";
    out += key;
    out += "\":";
    const size_t begin = out.size();
    out += '[';
    for (size_t j = 0; j < s.buckets.size(); ++j) {
      if (j > 0) out += ',';
      append(s.buckets[j]);
    }
    out += ']';
    return begin;  // where the column's list starts
  };
  // A series whose buckets hold one point each (every series shorter than kMaxBuckets) has
  // last_step == step and min == max == value: their text is copied, not formatted again
  // (formatting doubles is most of the cost of a large document).
  const bool single = std::all_of(s.buckets.begin(), s.buckets.end(), [](const Bucket& b) { return b.count == 1; });
  const auto copy_column = [&](const char* key, size_t from, size_t to) {
    out += ",\"";
    out += key;
    out += "\":";
    out.append(out, from, to - from);  // (appending a part of itself is safe)
  };
  size_t from = column("step", [&](const Bucket& b) { AppendInt(out, b.first_step); });
  if (single) {
    copy_column("last_step", from, out.size());
  } else {
    column("last_step", [&](const Bucket& b) { AppendInt(out, b.last_step); });
  }
  column("mode", [&](const Bucket& b) { out += ModeText(b.mode); });
  from = column("value", [&](const Bucket& b) { AppendNumber(out, ValueOf(b)); });
  if (single) {
    const size_t to = out.size();
    copy_column("min", from, to);
    copy_column("max", from, to);
  } else {
    column("min", [&](const Bucket& b) { AppendNumber(out, b.finite > 0 ? b.min : ValueOf(b)); });
    column("max", [&](const Bucket& b) { AppendNumber(out, b.finite > 0 ? b.max : ValueOf(b)); });
  }
  column("count", [&](const Bucket& b) { AppendInt(out, b.count); });
  out += ",\"firings\":{\"step\":[";
  for (size_t j = 0; j < s.firings.size(); ++j) {
    if (j > 0) out += ',';
    AppendInt(out, s.firings[j].step);
  }
  out += "],\"mode\":[";
  for (size_t j = 0; j < s.firings.size(); ++j) {
    if (j > 0) out += ',';
    out += ModeText(s.firings[j].mode);
  }
  out += "],\"value\":[";
  for (size_t j = 0; j < s.firings.size(); ++j) {
    if (j > 0) out += ',';
    AppendNumber(out, s.firings[j].value);
  }
  out += "]}}";
}

std::vector<std::string> SeriesStore::ToJsonPieces(std::string_view rule, std::string_view rule_class) const {
  std::vector<std::string> pieces(1);
  std::string& out = pieces.front();
  out.reserve(1024);
  out += "{\"format\":\"litmus-series/1\",\"rule\":";
  AppendJsonString(out, rule);
  out += ",\"rule_class\":";
  AppendJsonString(out, rule_class);
  out += ",\"thresholds\":{";
  bool first = true;
  for (const auto& [name, sides] : thresholds_) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(out, name);
    out += ":[";
    for (size_t i = 0; i < sides.size(); ++i) {
      if (i > 0) out += ',';
      out += "{\"value\":";
      AppendNumber(out, sides[i].value);
      out += ",\"fires_when\":";
      out += FiresText(sides[i].fires_when);
      out += '}';
    }
    out += ']';
  }
  out += "},\"recommendations\":[";
  for (size_t i = 0; i < recommendations_.size(); ++i) {
    if (i > 0) out += ',';
    AppendJsonString(out, recommendations_[i]);
  }
  out += "],\"dropped_series\":";
  AppendInt(out, dropped_series_);
  out += ",\"series\":[";
  // ~16 bytes per column entry (7 columns) per bucket: one allocation, not a doubling chain of
  // multi-megabyte strings.
  size_t buckets = 0;
  for (const Series& s : series_) buckets += s.buckets.size();
  const auto append_range = [this](std::string& text, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (i > 0) text += ',';
      AppendSeriesJson(text, series_[i]);
    }
  };
  if (buckets < kParallelBuckets) {
    out.reserve(out.size() + series_.size() * 256 + buckets * 7 * 16);
    append_range(out, 0, series_.size());
    out += "]}\n";
    return pieces;
  }
  // (Each part from its series' global positions on: a separator before every series but the
  // first, so the parts one after the other are the document formatted in one go.)
  pieces.resize(1 + kParts);
  tbb::parallel_for(size_t{0}, kParts, [&](size_t k) {
    const size_t begin = series_.size() * k / kParts, end = series_.size() * (k + 1) / kParts;
    std::string& part = pieces[1 + k];
    part.reserve((end - begin) * 256 + buckets * 7 * 16 / kParts);
    append_range(part, begin, end);
  });
  pieces.back() += "]}\n";
  return pieces;
}

std::string SeriesStore::ToJson(std::string_view rule, std::string_view rule_class) const {
  std::vector<std::string> pieces = ToJsonPieces(rule, rule_class);
  size_t total = 0;
  for (const std::string& piece : pieces) total += piece.size();
  std::string out = std::move(pieces.front());
  out.reserve(total);
  for (size_t i = 1; i < pieces.size(); ++i) out += pieces[i];
  return out;
}

}  // namespace litmus
