// TrialCatalog (trial_catalog.h): smdebug's step/mode/worker bookkeeping (trials/trial.py
// _add_tensor and friends, core/tensor.py Tensor.steps), re-expressed over ordered maps.
#include "trial_catalog.h"

#include <algorithm>

#include <tbb/parallel_for.h>

#include "litmus/format/trial_layout.h"

namespace litmus::internal {
namespace {

template <typename Map>
std::vector<typename Map::key_type> Keys(const Map& map) {
  std::vector<typename Map::key_type> keys;
  keys.reserve(map.size());
  for (const auto& [key, value] : map) keys.push_back(key);
  return keys;
}

template <typename Set>
std::vector<std::string> SetToVector(const Set& set) {
  return {set.begin(), set.end()};
}

}  // namespace

TrialCatalog::~TrialCatalog() {
  std::vector<TensorRecord*> records;
  records.reserve(tensors_.size());
  for (auto& [name, record] : tensors_) records.push_back(&record);
  tbb::parallel_for(size_t{0}, records.size(), [&records](size_t i) {
    records[i]->entries = TensorEntries();
    records[i]->steps = FlatMap<int64_t, WorkerEntries>();
  });
}

void TrialCatalog::NoteStep(int64_t global_step, const std::string& worker, Mode mode,
                            int64_t mode_step) {
  // First seen wins in both directions (_populate_step_dict); GLOBAL is never a mode_to_global key.
  FlatMap<int64_t, int64_t>& owners = mode == Mode::kGlobal ? global_mode_owner_ : mode_to_global_[mode];
  GrowStepMap(owners);
  if (owners.try_emplace(mode_step, global_step).first->second != global_step && mode_steps_derived_) {
    // (Before this file's entries are added: they go to the maps built now.)
    MaterializeModeSteps();
  }
  if (!global_to_mode_.empty() && global_step < global_to_mode_.back().first && !global_to_mode_.contains(global_step)) {
    // A straggler: a new known step before the last one moves the positions of the steps after
    // it, which dense tensors find their entries by. (Rare: index files are added in step order.)
    for (auto& [name, record] : tensors_) {
      if (record.dense) MakeSparse(record);
    }
  }
  GrowStepMap(global_to_mode_);
  global_to_mode_.try_emplace(global_step, mode, mode_step);
  // _populate_workers_for_global_step: exact equality with num_workers, as smdebug.
  const std::string* name = &*worker_names_.insert(worker).first;
  GrowStepMap(workers_for_step_);
  StepWorkers& workers = workers_for_step_[global_step];
  workers.Insert(name);
  if (static_cast<int64_t>(workers.all().size()) == num_workers_ && global_step > last_complete_step_) {
    last_complete_step_ = global_step;
  }
}

void TrialCatalog::MaterializeModeSteps() {
  mode_steps_derived_ = false;
  // Until now every (mode, mode step) had one global step, so the entries hold no two keys that
  // disagree and the order they are added in does not matter: first seen wins from here on.
  for (auto& [name, record] : tensors_) {
    record.mode_steps.reserve(record.entries.size());
    ForEachStep(record, [&](int64_t global_step, StepEntryList by_worker) {
      for (size_t i = 0; i < by_worker.size(); ++i) {
        const IndexFileInfo& file = files_.of(by_worker[i]);
        record.mode_steps.try_emplace({file.mode, file.mode_step}, global_step);
      }
    });
  }
}

std::optional<int64_t> TrialCatalog::TensorGlobalStep(const TensorRecord& tensor, Mode mode, int64_t mode_step) const {
  if (!mode_steps_derived_) {
    const auto it = tensor.mode_steps.find({mode, mode_step});
    if (it == tensor.mode_steps.end()) return std::nullopt;
    return it->second;
  }
  // No other global step has (mode, mode step): the tensor has it at its owner's or nowhere.
  const FlatMap<int64_t, int64_t>* owners = &global_mode_owner_;
  if (mode != Mode::kGlobal) {
    const auto it = mode_to_global_.find(mode);
    if (it == mode_to_global_.end()) return std::nullopt;
    owners = &it->second;
  }
  const auto owner = owners->find(mode_step);
  if (owner == owners->end()) return std::nullopt;
  const StepEntryList entries = StepEntries(tensor, owner->second);
  for (size_t i = 0; i < entries.size(); ++i) {
    const IndexFileInfo& file = files_.of(entries[i]);
    if (file.mode == mode && file.mode_step == mode_step) return owner->second;
  }
  return std::nullopt;
}

void TrialCatalog::MakeSparse(TensorRecord& tensor) {
  if (!tensor.dense) return;
  tensor.dense = false;
  tensor.steps.reserve(tensor.entries.size());
  for (size_t i = 0; i < tensor.entries.size(); ++i) {
    // (Keys in order: appends.)
    tensor.steps.try_emplace(global_to_mode_.item(tensor.dense_first + i).first, &tensor.entries[i]);
  }
}

CatalogEntry& TrialCatalog::EntryFor(std::string_view name, int64_t global_step, uint32_t file_number) {
  const IndexFileInfo* file = &files_[file_number];
  // smdebug records the *unfolded* index name in its per-step and per-mode name maps, so
  // tensor_names(step=...) would list "smdebug/reductions/..." names; we list the folded tensor,
  // consistently with tensor_names() (no fixture has stored reductions).
  auto known = by_name_.find(name);
  if (known == by_name_.end()) {
    const auto it = tensors_.try_emplace(std::string(name)).first;
    it->second.name = it->first;
    known = by_name_.emplace(it->first, &it->second).first;
    by_address_.emplace(it->first.data(), &it->second);
  }
  TensorRecord& record = *known->second;
  const std::string_view stable_name = record.name;  // tensors_'s key
  if (file->mode != Mode::kGlobal && !record.HasEntriesIn(file->mode)) {
    tensors_for_mode_[file->mode].insert(stable_name);
  }
  record.modes_seen |= TensorRecord::ModeBit(file->mode);
  if (!mode_steps_derived_) {
    GrowForFilesAhead(record.mode_steps);
    if (const auto [it, inserted] = record.mode_steps.try_emplace({file->mode, file->mode_step}, global_step);
        !inserted && it->second != global_step) {
      record.mode_steps_unique = false;
    }
  }
  if (record.dense) {
    // The entry's step is known (NoteStep): usually the last one.
    const size_t position = global_to_mode_.back().first == global_step
                                ? global_to_mode_.size() - 1
                                : static_cast<size_t>(global_to_mode_.find(global_step) - global_to_mode_.begin());
    if (record.entries.empty()) record.dense_first = position;
    const size_t end = record.dense_first + record.entries.size();
    if (position == end) {
      CatalogEntry& entry = record.entries.Append();
      entry.file = file_number;
      return entry;
    }
    if (position >= record.dense_first && position < end) {
      CatalogEntry& known_entry = record.entries[position - record.dense_first];
      if (files_.of(known_entry).worker == file->worker) return known_entry;  // (names kept once)
    }
    MakeSparse(record);  // a second worker, a skipped step or an earlier one
  }
  GrowForFilesAhead(record.steps);
  auto [step_it, new_step] = record.steps.try_emplace(global_step);
  WorkerEntries& by_worker = step_it->second;
  if (!new_step) {
    if (const CatalogEntry* known_entry = by_worker.view().Find(*file->worker, files_)) {
      return const_cast<CatalogEntry&>(*known_entry);  // (the catalog's own entry)
    }
  }
  CatalogEntry& entry = record.entries.Append();
  entry.file = file_number;
  by_worker.Insert(&entry, files_);
  return entry;
}

void TrialCatalog::AddIndexFile(int64_t global_step, const std::string& worker, const IndexFileView& index,
                                std::vector<std::string>* warnings) {
  // The step counts as written by this worker once the file has any entry (the same for every
  // entry, so noted once); a file without any adds nothing.
  if (index.tensor_payload.empty() && index.shape_payload.empty()) return;
  if (files_.size() >= EntryFiles::kMaxFiles) {  // (2^30 index files: not a trial that exists)
    warnings->push_back("step " + std::to_string(global_step) + " worker " + worker +
                        ": more index files than the catalog holds; ignored");
    return;
  }
  NoteStep(global_step, worker, index.mode, index.mode_step);
  const uint32_t file = files_.Add(worker, index.mode, index.mode_step, index.event_file_name.value_or(""));
  for (const IndexEntryView& item : index.tensor_payload) {
    if (item.tensor_name.find("smdebug/reductions/") != std::string_view::npos) {
      if (std::optional<layout::ParsedReductionName> reduction =
              layout::ParseReductionTensorName(item.tensor_name)) {
        CatalogEntry& entry = EntryFor(reduction->tensor, global_step, file);
        files_.MutableExtras(entry).stored_reductions[{reduction->reduction, reduction->abs}] =
            IndexEntry{std::string(item.tensor_name), item.start_idx, item.length};
        continue;
      }
      warnings->push_back("step " + std::to_string(global_step) + " worker " + worker +
                          ": unknown stored reduction '" + std::string(item.tensor_name) +
                          "' kept as a tensor of its own");
    }
    // A later entry for the same (name, step, worker) replaces the location, as in smdebug.
    // (Assigned in place: the entry's address is the reader's cache key.)
    CatalogEntry& entry = EntryFor(item.tensor_name, global_step, file);
    files_.SetStart(entry, item.start_idx);
    entry.length = CatalogEntry::SaturatedLength(item.length);  // (>= 16: the parser checked; 0 reads as "no raw value")
  }
  for (const ShapeEntry& shape : index.shape_payload) {
    // Kept beside the location, never instead of it (docs/trial-format.md §4.3 [rec]).
    files_.MutableExtras(EntryFor(shape.tensor_name, global_step, file)).shape = shape.shape;
  }
}

void TrialCatalog::ApplyWaitWindow(int64_t window) {
  const auto known = static_cast<int64_t>(global_to_mode_.size());
  if (known - (last_complete_step_ + 1) > window) last_complete_step_ += window / 2;
}

void TrialCatalog::MarkAllStepsLoaded() {
  loaded_all_steps_ = true;
  if (!global_to_mode_.empty()) last_complete_step_ = global_to_mode_.back().first;
}

bool TrialCatalog::IsStepComplete(int64_t global_step) const {
  const auto it = workers_for_step_.find(global_step);
  if (it == workers_for_step_.end()) return false;
  return static_cast<int64_t>(it->second.all().size()) == num_workers_ || loaded_all_steps_ ||
         global_step <= last_complete_step_;
}

std::vector<int64_t> TrialCatalog::Steps(Mode mode, bool include_incomplete) const {
  std::vector<int64_t> out;
  if (mode == Mode::kGlobal) {
    for (const auto& [global, unused] : global_to_mode_) {
      if (include_incomplete || IsStepComplete(global)) out.push_back(global);
    }
    return out;
  }
  const auto it = mode_to_global_.find(mode);
  if (it == mode_to_global_.end()) return out;
  for (const auto& [mode_step, global] : it->second) {
    if (include_incomplete || IsStepComplete(global)) out.push_back(mode_step);
  }
  return out;
}

bool TrialCatalog::HasMode(Mode mode) const {
  return mode == Mode::kGlobal || tensors_for_mode_.contains(mode);
}

std::optional<int64_t> TrialCatalog::GlobalStep(Mode mode, int64_t mode_step) const {
  if (mode == Mode::kGlobal) return mode_step;
  const auto it = mode_to_global_.find(mode);
  if (it == mode_to_global_.end()) return std::nullopt;
  const auto step = it->second.find(mode_step);
  if (step == it->second.end()) return std::nullopt;
  return step->second;
}

std::optional<std::pair<Mode, int64_t>> TrialCatalog::ModeOfGlobalStep(int64_t global_step) const {
  const auto it = global_to_mode_.find(global_step);
  if (it == global_to_mode_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> TrialCatalog::WorkersForStep(int64_t global_step) const {
  const auto it = workers_for_step_.find(global_step);
  if (it == workers_for_step_.end()) return {};
  std::vector<std::string> out;
  out.reserve(it->second.all().size());
  for (const std::string* worker : it->second.all()) out.push_back(*worker);
  return out;
}

std::optional<int64_t> TrialCatalog::FirstStepAtOrAfter(int64_t step) const {
  const auto it = global_to_mode_.lower_bound(step);
  if (it == global_to_mode_.end()) return std::nullopt;
  return it->first;
}

std::optional<int64_t> TrialCatalog::LastKnownStep() const {
  if (global_to_mode_.empty()) return std::nullopt;
  return global_to_mode_.back().first;
}

StepState TrialCatalog::StepAvailability(int64_t step, Mode mode) const {
  // has_passed_step (§8.5): A = all known steps of the mode, i = first index with A[i] >= step.
  // Looked up in the sorted maps directly: this runs for every value read, so it must not be
  // O(number of steps).
  std::optional<std::pair<int64_t, int64_t>> found;  // (A[i], its global step)
  if (mode == Mode::kGlobal) {
    const auto it = global_to_mode_.lower_bound(step);
    if (it != global_to_mode_.end()) found.emplace(it->first, it->first);
  } else if (const auto steps = mode_to_global_.find(mode); steps != mode_to_global_.end()) {
    const auto it = steps->second.lower_bound(step);
    if (it != steps->second.end()) found.emplace(it->first, it->second);
  }
  if (!found) return loaded_all_steps_ ? StepState::kNoMoreData : StepState::kNotYetAvailable;
  const auto [known_step, global] = *found;
  if (known_step == step) {
    return IsStepComplete(global) ? StepState::kAvailable : StepState::kNotYetAvailable;
  }
  return last_complete_step_ >= global ? StepState::kUnavailable : StepState::kNotYetAvailable;
}

std::vector<std::string> TrialCatalog::TensorNames() const { return Keys(tensors_); }

std::vector<std::string> TrialCatalog::TensorNamesAtStep(int64_t global_step) const {
  const std::vector<std::string_view> views = TensorNameViewsAtStep(global_step);
  return std::vector<std::string>(views.begin(), views.end());
}

std::vector<std::string_view> TrialCatalog::TensorNameViewsAtStep(int64_t global_step,
                                                                  const std::vector<std::string_view>* among) const {
  // Found in each tensor's step map rather than kept per step (that list cost 16 bytes per
  // entry of the catalog, for a query that is rarely made): one lookup per tensor, in name order.
  std::vector<std::string_view> names;
  const KnownStep known = global_to_mode_.find(global_step);
  if (known == global_to_mode_.end()) return names;
  if (among != nullptr) {
    for (const std::string_view name : *among) {
      const TensorRecord* record = FindTensor(name);
      if (record != nullptr && !EntriesAt(*record, known).empty()) names.push_back(record->name);
    }
    return names;
  }
  for (const auto& [name, record] : tensors_) {
    if (!EntriesAt(record, known).empty()) names.push_back(name);
  }
  return names;
}

std::vector<std::string> TrialCatalog::TensorNamesForMode(Mode mode) const {
  if (mode == Mode::kGlobal) return TensorNames();
  const auto it = tensors_for_mode_.find(mode);
  if (it == tensors_for_mode_.end()) return {};
  return SetToVector(it->second);
}

std::vector<std::string_view> TrialCatalog::TensorNameViewsForMode(Mode mode) const {
  std::vector<std::string_view> names;
  if (mode == Mode::kGlobal) {
    names.reserve(tensors_.size());
    for (const auto& [name, unused] : tensors_) names.push_back(name);
    return names;
  }
  const auto it = tensors_for_mode_.find(mode);
  if (it != tensors_for_mode_.end()) names.assign(it->second.begin(), it->second.end());
  return names;
}

const TensorRecord* TrialCatalog::FindTensor(std::string_view name) const {
  if (const auto own = by_address_.find(name.data());
      own != by_address_.end() && own->second->name.size() == name.size()) {
    return own->second;
  }
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<int64_t> TrialCatalog::TensorSteps(const std::string& name, bool include_incomplete) const {
  std::vector<int64_t> out;
  const TensorRecord* tensor = FindTensor(name);
  if (tensor == nullptr) return out;
  ForEachStep(*tensor, [&](int64_t global, StepEntryList) {
    if (include_incomplete || loaded_all_steps_ || global <= last_complete_step_) out.push_back(global);
  });
  return out;
}

std::vector<int64_t> TrialCatalog::TensorModeSteps(const std::string& name, Mode mode,
                                                   bool include_incomplete) const {
  if (mode == Mode::kGlobal) return TensorSteps(name, include_incomplete);
  std::vector<int64_t> out;
  const TensorRecord* tensor = FindTensor(name);
  if (tensor == nullptr) return out;
  const auto counts = [&](int64_t mode_step) {
    return include_incomplete || loaded_all_steps_ || mode_step <= last_complete_step_;
  };
  if (mode_steps_derived_) {
    // The mode steps of the tensor's entries in `mode`: the keys its map would hold.
    if (!tensor->HasEntriesIn(mode)) return out;
    // (Every entry, in step order.)
    ForEachStep(*tensor, [&](int64_t, StepEntryList by_worker) {
      for (size_t i = 0; i < by_worker.size(); ++i) {
        const IndexFileInfo& file = files_.of(by_worker[i]);
        if (file.mode == mode && counts(file.mode_step)) out.push_back(file.mode_step);
      }
    });
    // (Already in order unless mode steps go down as global steps go up.)
    if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  for (auto it = tensor->mode_steps.lower_bound({mode, INT64_MIN});
       it != tensor->mode_steps.end() && it->first.first == mode; ++it) {
    if (counts(it->first.second)) out.push_back(it->first.second);
  }
  return out;
}

StepEntryList TrialCatalog::EntriesAt(const TensorRecord& tensor, KnownStep known) const {
  if (tensor.dense) {
    const auto position = static_cast<size_t>(known - global_to_mode_.begin());
    if (position < tensor.dense_first || position - tensor.dense_first >= tensor.entries.size()) return {};
    return StepEntryList(&tensor.entries[position - tensor.dense_first]);
  }
  const auto it = tensor.steps.find(known->first);
  return it == tensor.steps.end() ? StepEntryList() : it->second.view();
}

std::optional<size_t> TrialCatalog::StepPosition(const TensorRecord& tensor, int64_t global_step) const {
  if (!tensor.dense) {
    const auto it = tensor.steps.find(global_step);
    if (it == tensor.steps.end()) return std::nullopt;
    return static_cast<size_t>(it - tensor.steps.begin());
  }
  const KnownStep known = global_to_mode_.find(global_step);
  if (known == global_to_mode_.end()) return std::nullopt;
  const auto at = static_cast<size_t>(known - global_to_mode_.begin());
  if (at < tensor.dense_first || at - tensor.dense_first >= tensor.entries.size()) return std::nullopt;
  return at - tensor.dense_first;
}

StepEntryList TrialCatalog::StepEntries(const TensorRecord& tensor, int64_t global_step) const {
  const KnownStep known = global_to_mode_.find(global_step);
  return known == global_to_mode_.end() ? StepEntryList() : EntriesAt(tensor, known);
}

std::optional<TrialCatalog::ResolvedStep> TrialCatalog::ResolveTensorStep(const TensorRecord& tensor,
                                                                          int64_t step, Mode mode) const {
  const bool global_mode_entry = tensor.HasEntriesIn(Mode::kGlobal);
  if (mode == Mode::kGlobal && tensor.mode_steps_unique) {
    // The usual case without the mode-step maps: the tensor was saved at global step `step` with
    // the (mode, mode step) of that step. As no two of its global steps share a (mode, mode
    // step), mode_steps maps that pair to `step` itself. (An unknown step may still be the mode
    // step of a GLOBAL-mode entry: the general path below decides.)
    const KnownStep known = global_to_mode_.find(step);
    if (const StepEntryList entries = known == global_to_mode_.end() ? StepEntryList() : EntriesAt(tensor, known);
        !entries.empty()) {
      const IndexFileInfo& file = files_.of(entries.front());
      const bool own_global = file.mode == Mode::kGlobal && file.mode_step == step;
      if (own_global || (!global_mode_entry && std::pair(file.mode, file.mode_step) == known->second)) {
        return ResolvedStep{step, entries};
      }
    }
  }
  // A GLOBAL-mode entry of mode step `step` first, then the (mode, mode step) of global step `step`.
  std::optional<int64_t> global;
  if (mode == Mode::kGlobal && global_mode_entry) global = TensorGlobalStep(tensor, Mode::kGlobal, step);
  if (!global && mode == Mode::kGlobal) {
    const std::optional<std::pair<Mode, int64_t>> converted = ModeOfGlobalStep(step);
    if (!converted) return std::nullopt;
    global = TensorGlobalStep(tensor, converted->first, converted->second);
  } else if (!global) {
    global = TensorGlobalStep(tensor, mode, step);
  }
  if (!global) return std::nullopt;
  return ResolvedStep{*global, StepEntries(tensor, *global)};
}

}  // namespace litmus::internal
