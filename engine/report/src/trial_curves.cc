// TrialCurves: see trial_curves.h.
#include "trial_curves.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <utility>

#include "litmus/engine/reductions.h"

namespace litmus::report {

TrialCurves::TrialCurves(Env* env, std::string trial) : env_(env), trial_path_(std::move(trial)) {}
TrialCurves::TrialCurves(const Trial* trial, bool collected)
    : env_(nullptr), trial_(trial), borrowed_(true), collected_(collected) {}
TrialCurves::~TrialCurves() = default;

void TrialCurves::Watch(const std::vector<std::string>& tensors) {
  for (const std::string& t : tensors) {
    if (t.empty() || stat_cursors_.contains(t)) continue;
    if (watched_.size() >= kMaxWatched) {
      ++watched_dropped_;
      stat_cursors_[t].stride = 0;  // counted once, never read
      continue;
    }
    watched_index_.emplace(t, static_cast<uint32_t>(watched_.size()));
    watched_.push_back(t);
    stat_cursors_[t] = Cursor{};
  }
}

int64_t TrialCurves::stride(const std::string& tensor) const {
  const auto it = stat_cursors_.find(tensor);
  return it == stat_cursors_.end() ? 1 : it->second.stride;
}

void TrialCurves::Update(std::optional<int64_t> through) {
  if (borrowed_) {
    if (trial_ == nullptr) return;
  } else if (trial_path_.empty()) {
    return;
  } else if (!owned_) {
    TrialOptions options = TrialOptions::FromEnvironment();
    options.cache_bytes = 32ull << 20;  // values are read once each
    StatusOr<std::unique_ptr<Trial>> trial = Trial::Open(env_, trial_path_, options);
    if (!trial.ok()) {
      info_.error = std::string(trial.status().message());
      return;
    }
    owned_ = std::move(trial).value();
    trial_ = owned_.get();
  } else if (Status refreshed = owned_->Refresh(); !refreshed.ok()) {
    spdlog::debug("report: trial {}: {}", trial_path_, refreshed.message());  // next time
  }
  info_.open = true;
  info_.error.clear();
  const std::vector<int64_t> steps = trial_->Steps();
  info_.workers = trial_->workers().size();
  info_.steps = static_cast<int64_t>(steps.size());
  if (!steps.empty()) {
    info_.first_step = steps.front();
    info_.last_step = steps.back();
  }
  info_.steps_by_mode.clear();
  for (const Mode mode : {Mode::kTrain, Mode::kEval, Mode::kPredict}) {
    if (trial_->HasMode(mode)) info_.steps_by_mode[std::string(ModeName(mode))] = static_cast<int64_t>(trial_->Steps(mode).size());
  }
  info_.ended = trial_->end_marker_seen();
  ReadLosses();
  ReadStats(through);
}

void TrialCurves::ReadLosses() {
  StatusOr<std::vector<std::string>> names = trial_->TensorNamesInCollection("losses");
  if (!names.ok()) return;  // no such collection (yet)
  for (const std::string& name : *names) {
    Cursor& cursor = loss_cursors_[name];
    for (const int64_t step : trial_->TensorSteps(name)) {
      if (step <= cursor.last_step) continue;
      StatusOr<TensorPtr> value = trial_->Value(name, step);
      if (!value.ok()) {
        if (value.status().code() == StatusCode::kOutOfRange) break;  // not yet readable: next time
        spdlog::debug("report: loss {} at step {} left out: {}", name, step, value.status().message());
      } else if (!(*value)->is_string() && (*value)->num_elements() > 0) {
        const auto mode = trial_->ModeOfGlobalStep(step);
        const Mode m = mode ? mode->first : Mode::kGlobal;
        losses_.Add(ModeName(m), name, step, static_cast<int32_t>(m), (*value)->ElementAsDouble(0));
      }
      cursor.last_step = step;
      trial_->Release({{name, step}});
    }
  }
}

void TrialCurves::AddStats(uint32_t i, int64_t step, int32_t m, const TensorStatistics& s) {
  if (s.elements == 0) return;  // (strings, empty tensors: nothing to chart)
  static constexpr const char* kCurves[] = {kMean, kMin, kMax, kNan, kInf};
  const double values[] = {s.mean, s.min, s.max, static_cast<double>(s.non_finite.nan),
                           static_cast<double>(s.non_finite.posinf + s.non_finite.neginf)};
  std::array<uint32_t, 5>& positions = stat_series_[i];
  for (size_t k = 0; k < std::size(kCurves); ++k) {
    if (positions[k] != SeriesStore::kNotFound) {
      stats_.AddAt(positions[k], step, m, values[k]);
      continue;
    }
    positions[k] = stats_.Add(kCurves[k], watched_[i], step, m, values[k]);  // (AddAt ignores kDropped)
  }
}

bool TrialCurves::PlannedPosition(int64_t position) {
  int64_t stride = 1;  // (as a cursor's at that position: see ReadStats)
  while (position >= kFullSteps * stride) stride *= 2;
  return position % stride == 0;
}

void TrialCurves::TakeCollectedStatistics() {
  if (collected_ && trial_ != nullptr) TakeCollected();
}

void TrialCurves::TakeCollected() {
  if (watched_.size() != collecting_) {
    trial_->CollectStatistics(watched_);  // (also ends the "every tensor" of TrialOpened)
    collecting_ = watched_.size();
  }
  pending_.resize(watched_.size());
  for (const Trial::CollectedStatistics& c : trial_->TakeStatistics()) {
    const auto index = watched_index_.find(c.name);
    if (index == watched_index_.end()) continue;  // (steps the cursor passed are erased after ReadStats)
    // Only the steps ReadStats will read: what is kept stays bounded however long the job.
    if (const std::optional<int64_t> position = trial_->TensorStepPosition(c.name, c.step);
        position && !PlannedPosition(*position)) {
      continue;
    }
    std::vector<Collected>& pending = pending_[index->second];
    if (pending.empty() || pending.back().first < c.step) {
      pending.emplace_back(c.step, c.statistics);
      continue;
    }
    const auto at = std::lower_bound(pending.begin(), pending.end(), c.step,
                                     [](const Collected& p, int64_t step) { return p.first < step; });
    if (at->first == c.step) {
      at->second = c.statistics;
    } else {
      pending.insert(at, {c.step, c.statistics});
    }
  }
}

void TrialCurves::ReadStats(std::optional<int64_t> through) {
  pending_.resize(watched_.size());
  stat_series_.resize(watched_.size(), {SeriesStore::kNotFound, SeriesStore::kNotFound, SeriesStore::kNotFound,
                                        SeriesStore::kNotFound, SeriesStore::kNotFound});
  if (collected_) TakeCollected();
  // The plan: per watched tensor, the steps after its cursor (up to `through`), each with the
  // cursor as it stands after that step and whether its value is read (every stride-th step).
  struct Planned {
    int64_t step;
    Cursor after;
    bool read;
  };
  struct StepReads {
    int32_t mode = 0;               // the LITMUS_MODE_* of the step
    std::vector<uint32_t> tensors;  // the watched tensors read at it
  };
  std::vector<std::vector<Planned>> plans(watched_.size());
  std::map<int64_t, StepReads> reads;
  for (uint32_t i = 0; i < watched_.size(); ++i) {
    if (!trial_->HasTensor(watched_[i])) continue;
    Cursor c = stat_cursors_[watched_[i]];
    for (const int64_t step : trial_->TensorSteps(watched_[i])) {
      if (step <= c.last_step) continue;
      if (through && step > *through) break;
      while (c.seen >= kFullSteps * c.stride) c.stride *= 2;
      const bool read = c.seen % c.stride == 0;
      if (read) reads[step].tensors.push_back(i);
      ++c.seen;
      c.last_step = step;
      plans[i].push_back({step, c, read});
    }
  }
  for (auto& [step, at] : reads) {
    const auto step_mode = trial_->ModeOfGlobalStep(step);
    at.mode = static_cast<int32_t>(step_mode ? step_mode->first : Mode::kGlobal);
  }
  constexpr int64_t kReadable = INT64_MAX;
  std::vector<int64_t> blocked(watched_.size(), kReadable);  // the first step not yet readable
  // What was collected of watched tensor i at `step` (or null), for steps asked in increasing
  // order: `next` holds each tensor's position in pending_ (a pass's own).
  const auto collected_at = [this](std::vector<size_t>& next, uint32_t i, int64_t step) -> const TensorStatistics* {
    const std::vector<Collected>& pending = pending_[i];
    size_t& k = next[i];
    while (k < pending.size() && pending[k].first < step) ++k;
    return k < pending.size() && pending[k].first == step ? &pending[k].second : nullptr;
  };
  // 1. The values the trial did not collect (the runner's reads), read step by step, a few steps
  //    at a time: the records of a step lie together in its event files, so Prefetch reads a
  //    batch with a few reads instead of one per tensor and step. Their statistics wait in
  //    `read_here` for step 2.
  constexpr size_t kBatchKeys = 64;
  std::vector<std::vector<Collected>> read_here(watched_.size());
  std::vector<size_t> next_key(watched_.size(), 0), next_read(watched_.size(), 0);
  for (auto begin = reads.begin(); begin != reads.end();) {
    std::vector<Trial::StepTensor> keys;
    auto end = begin;
    for (; end != reads.end() && keys.size() < kBatchKeys; ++end) {
      for (const uint32_t i : end->second.tensors) {
        if (collected_at(next_key, i, end->first) == nullptr) keys.emplace_back(watched_[i], end->first);
      }
    }
    if (!keys.empty()) trial_->Prefetch(keys);
    for (auto at = keys.empty() ? end : begin; at != end; ++at) {
      const int64_t step = at->first;
      for (const uint32_t i : at->second.tensors) {
        if (blocked[i] != kReadable || collected_at(next_read, i, step) != nullptr) continue;
        ++values_read_;
        StatusOr<TensorPtr> value = trial_->Value(watched_[i], step);
        if (!value.ok()) {
          if (value.status().code() == StatusCode::kOutOfRange) {
            blocked[i] = step;  // not yet readable: from this step on next time
            continue;
          }
          spdlog::debug("report: tensor {} at step {} left out: {}", watched_[i], step, value.status().message());
        } else {
          read_here[i].emplace_back(step, ComputeStatistics(**value));
        }
      }
    }
    if (!keys.empty()) trial_->Release(keys);
    begin = end;
  }
  // 2. The curves, tensor by tensor (its five series stay in cache; step by step, each point went
  //    to another tensor's), in step order up to the first step not yet readable: what was
  //    collected, else what was read (a value left out has neither).
  std::vector<size_t> next_added(watched_.size(), 0);
  for (uint32_t i = 0; i < watched_.size(); ++i) {
    auto step_reads = reads.begin();
    size_t next_here = 0;
    for (const Planned& p : plans[i]) {
      if (p.step >= blocked[i]) break;
      if (!p.read) continue;
      while (step_reads->first < p.step) ++step_reads;  // (p.step is one of its keys)
      if (const TensorStatistics* collected = collected_at(next_added, i, p.step)) {
        AddStats(i, p.step, step_reads->second.mode, *collected);
        ++statistics_collected_;
        continue;
      }
      const std::vector<Collected>& here = read_here[i];
      while (next_here < here.size() && here[next_here].first < p.step) ++next_here;
      if (next_here < here.size() && here[next_here].first == p.step) {
        AddStats(i, p.step, step_reads->second.mode, here[next_here].second);
      }
    }
  }
  // Each cursor moves past the steps considered, up to the first one not yet readable; what was
  // collected for the steps it passed is no longer needed.
  for (uint32_t i = 0; i < watched_.size(); ++i) {
    Cursor& cursor = stat_cursors_[watched_[i]];
    for (const Planned& p : plans[i]) {
      if (p.step >= blocked[i]) break;
      cursor = p.after;
    }
    std::vector<Collected>& pending = pending_[i];
    pending.erase(pending.begin(), std::upper_bound(pending.begin(), pending.end(), cursor.last_step,
                                                    [](int64_t s, const Collected& p) { return s < p.first; }));
  }
  if (statistics_collected_ + values_read_ > 0) {
    spdlog::debug("report: watched tensors' statistics: {} from the runner's reads, {} values read again",
                  statistics_collected_, values_read_);
  }
}

}  // namespace litmus::report
