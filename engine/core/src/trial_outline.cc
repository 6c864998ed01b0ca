// TrialOutline (trial_outline.h): the catalog rules of TrialCatalog (first-seen-wins modes,
// completeness across workers, the incomplete-step window, the end marker) over run-length
// encoded steps, for one pass of index files in path order (global steps never go down then).
#include "litmus/engine/trial_outline.h"

#include <algorithm>

#include <tbb/parallel_for.h>

#include "collections_parser.h"
#include "index_parser.h"
#include "litmus/format/trial_layout.h"
#include "python_regex.h"
#include "trial_root.h"

namespace litmus {
namespace {

uint32_t ModeBit(Mode mode) { return uint32_t{1} << static_cast<uint32_t>(mode); }

}  // namespace

void StepRuns::Append(int64_t value) {
  ++size_;
  if (!runs_.empty()) {
    Run& r = runs_.back();
    if (r.count == 1) {
      r.stride = value - r.first;
      r.count = 2;
      return;
    }
    if (value == r.first + r.stride * r.count) {
      ++r.count;
      return;
    }
  }
  runs_.push_back({value, 1, 1});
}

bool StepRuns::Contains(int64_t value) const {
  auto it = std::upper_bound(runs_.begin(), runs_.end(), value,
                             [](int64_t v, const Run& r) { return v < r.first; });
  if (it == runs_.begin()) return false;
  --it;
  const int64_t offset = value - it->first;
  return offset % it->stride == 0 && offset / it->stride < it->count;
}

// Adds index files in path order: the files of one global step come one after the other, and
// the step is entered in the outline once its last file has been added (its workers known).
class TrialOutline::Builder {
 public:
  explicit Builder(TrialOutline& outline) : o_(outline) {}

  Status Add(int64_t global_step, const std::string& worker, const IndexFile& index) {
    // As TrialCatalog::AddIndexFile: a file without any entry adds nothing.
    if (index.tensor_payload.empty() && index.shape_payload.empty()) return OkStatus();
    if (has_current_ && global_step != current_) {
      if (global_step < current_) {
        return UnimplementedError("index file of step " + std::to_string(global_step) + " listed after step " +
                                  std::to_string(current_) + ": not in step order");
      }
      FinishStep();
      has_current_ = false;
    }
    if (!has_current_) {
      has_current_ = true;
      current_ = global_step;
      own_ = {index.mode, index.mode_step};
      current_workers_.clear();
    }
    const std::string* w = &*o_.worker_names_.insert(worker).first;
    const auto at = std::lower_bound(current_workers_.begin(), current_workers_.end(), w,
                                     [](const std::string* a, const std::string* b) { return *a < *b; });
    if (at == current_workers_.end() || *at != w) current_workers_.insert(at, w);
    // Every file's (mode, mode step) may own a mode step (first seen wins), not only the step's own.
    if (std::pair(index.mode, index.mode_step) != own_) {
      o_.extra_owners_.push_back({global_step, index.mode, index.mode_step});
    }
    for (const IndexEntry& item : index.tensor_payload) {
      if (item.tensor_name.find("smdebug/reductions/") != std::string::npos) {
        if (std::optional<layout::ParsedReductionName> reduction = layout::ParseReductionTensorName(item.tensor_name)) {
          Touch(reduction->tensor, w, index.mode, index.mode_step);
          continue;
        }
      }
      Touch(item.tensor_name, w, index.mode, index.mode_step);
    }
    for (const ShapeEntry& shape : index.shape_payload) Touch(shape.tensor_name, w, index.mode, index.mode_step);
    return OkStatus();
  }

  void Finish() {
    if (has_current_) FinishStep();
    has_current_ = false;
  }

 private:
  // The entry of `name` at the current step by worker `w` (file mode and mode step given).
  void Touch(const std::string& name, const std::string* w, Mode mode, int64_t mode_step) {
    Tensor& t = o_.tensors_[name];
    t.modes_seen |= ModeBit(mode);
    o_.modes_with_entries_ |= ModeBit(mode);
    if (!t.steps.empty() && t.steps.back() == current_) {
      if (!(*w < *t.last_worker)) return;  // not the default worker's entry
    } else {
      t.steps.Append(current_);
    }
    t.last_worker = w;
    if (std::pair(mode, mode_step) != own_) {
      t.other_modes[current_] = {mode, mode_step};
    } else {
      t.other_modes.erase(current_);
    }
  }

  void FinishStep() {
    auto [it, added] = set_ids_.try_emplace(current_workers_, static_cast<uint32_t>(o_.worker_sets_.size()));
    if (added) o_.worker_sets_.push_back(current_workers_);
    const uint32_t workers = it->second;
    // _populate_workers_for_global_step: complete when exactly num_workers wrote it (the count
    // passes through every value up to its final one, as TrialCatalog::NoteStep sees it).
    if (o_.num_workers_ >= 1 && static_cast<int64_t>(current_workers_.size()) >= o_.num_workers_ &&
        current_ > o_.last_complete_step_) {
      o_.last_complete_step_ = current_;
    }
    ++o_.known_steps_;
    std::vector<KnownRun>& runs = o_.steps_;
    if (!runs.empty()) {
      KnownRun& r = runs.back();
      if (r.mode == own_.first && r.workers == workers) {
        if (r.count == 1) {
          r.stride = current_ - r.first;
          r.mode_stride = own_.second - r.mode_first;
          r.count = 2;
          return;
        }
        if (current_ == r.first + r.stride * r.count && own_.second == r.mode_first + r.mode_stride * r.count) {
          ++r.count;
          return;
        }
      }
    }
    runs.push_back({current_, 1, own_.second, 0, 1, own_.first, workers});
  }

  TrialOutline& o_;
  bool has_current_ = false;
  int64_t current_ = 0;
  std::pair<Mode, int64_t> own_;  // the step's (mode, mode step): its first file's
  std::vector<const std::string*> current_workers_;
  std::map<std::vector<const std::string*>, uint32_t> set_ids_;
};

StatusOr<std::unique_ptr<TrialOutline>> TrialOutline::Open(Env* env, std::string root, const TrialOptions& options) {
  LITMUS_ASSIGN_OR_RETURN(root, internal::CheckedTrialRoot(env, std::move(root)));
  std::unique_ptr<TrialOutline> outline(new TrialOutline(root));
  TrialOutline& o = *outline;
  // The marker is checked before listing (Trial::Refresh), so every file final before it is seen.
  LITMUS_ASSIGN_OR_RETURN(bool ended, env->FileExists(Env::JoinPath(root, layout::kEndOfJobFile)));

  // Collections (Trial::Impl::RefreshCollections): the first file defines them and num_workers.
  const std::string collections_dir = Env::JoinPath(root, layout::kCollectionsDir);
  std::vector<FileEntry> listed;
  const Status listed_status = env->ListFiles(collections_dir, "", &listed);
  if (!listed_status.ok() && listed_status.code() != StatusCode::kNotFound) return listed_status;
  for (const FileEntry& file : listed) {
    const std::string relative = std::string(layout::kCollectionsDir) + "/" + file.path;
    const std::optional<std::string> worker = layout::ParseCollectionsFilePath(relative);
    if (!worker) continue;
    const std::string path = Env::JoinPath(root, relative);
    LITMUS_ASSIGN_OR_RETURN(std::string content, env->ReadFileToString(path));
    LITMUS_ASSIGN_OR_RETURN(CollectionsFile parsed, ParseCollectionsJson(content, path));
    if (!o.collections_ready_) {
      o.collections_ready_ = true;
      o.num_workers_ = parsed.num_workers;
      for (const CollectionJson& json : parsed.collections) {
        Status regex_status;
        Collection collection = MakeCollection(json, &regex_status);
        if (!regex_status.ok()) o.collection_regex_errors_[json.name] = regex_status;
        o.collections_[json.name] = std::move(collection);
      }
    }
    o.workers_.insert(*worker);
  }

  if (o.collections_ready_) {
    // Index files in path order, a folder (index/<P9>, 1000 steps) at a time while the folders
    // follow each other; after a gap, everything after the last file seen in one listing.
    const std::string index_dir = Env::JoinPath(root, layout::kIndexDir);
    const std::string index_prefix = std::string(layout::kIndexDir) + "/";
    Builder builder(o);
    bool parsed_any = false;
    std::string last;  // the last path processed, relative to index/
    int64_t folder = 0;
    bool paging = true;
    while (true) {
      std::vector<FileEntry> files;
      std::string prefix;
      if (paging) {
        const std::string name = layout::IndexFolder(folder * layout::kIndexFilesPerFolder).substr(index_prefix.size());
        LITMUS_ASSIGN_OR_RETURN(bool folder_exists, env->IsDirectory(Env::JoinPath(index_dir, name)));
        if (folder_exists) {
          const Status s = env->ListFiles(Env::JoinPath(index_dir, name), "", &files);
          if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
        }
        // An empty folder ends the paging like a missing one (an object store answers "is a
        // directory" for any prefix: paging on would list empty folders without end).
        if (!files.empty()) {
          prefix = name + "/";
          ++folder;
        } else {
          paging = false;
          const Status s = env->ListFiles(index_dir, last, &files);
          if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
        }
      }
      // Read and parsed in parallel a chunk at a time, added in order (as Trial::Impl::RefreshIndex).
      constexpr size_t kChunk = 256;
      for (size_t first = 0; first < files.size(); first += kChunk) {
        const size_t count = std::min(kChunk, files.size() - first);
        std::vector<std::optional<layout::IndexFileName>> names(count);
        std::vector<std::optional<StatusOr<IndexFile>>> parsed(count);
        tbb::parallel_for(size_t{0}, count, [&](size_t i) {
          const std::string relative = prefix + files[first + i].path;
          names[i] = layout::ParseIndexFilePath(index_prefix + relative);
          if (!names[i] || names[i]->step < options.range_begin || names[i]->step >= options.range_end) return;
          const std::string path = Env::JoinPath(index_dir, relative);
          StatusOr<std::string> content = env->ReadFileToString(path);
          parsed[i] = content.ok() ? ParseIndexJson(*content, path) : StatusOr<IndexFile>(content.status());
        });
        for (size_t i = 0; i < count; ++i) {
          if (parsed[i]) {
            if (!parsed[i]->ok()) return parsed[i]->status();
            LITMUS_RETURN_IF_ERROR(builder.Add(names[i]->step, names[i]->worker, **parsed[i]));
            parsed_any = true;
          }
        }
      }
      if (!files.empty()) last = prefix + files.back().path;
      if (!paging) break;
    }
    builder.Finish();
    // TrialCatalog::ApplyWaitWindow, after the refresh that found new index files.
    const int64_t window = options.incomplete_step_wait_window;
    if (parsed_any && static_cast<int64_t>(o.known_steps_) - (o.last_complete_step_ + 1) > window) {
      o.last_complete_step_ += window / 2;
    }
  }
  if (ended) {
    // (No end-of-training delay: what can still arrive is not waited for.)
    o.end_marker_seen_ = true;
    o.loaded_all_steps_ = true;
    if (!o.steps_.empty()) o.last_complete_step_ = o.steps_.back().first + o.steps_.back().stride * (o.steps_.back().count - 1);
  }
  return outline;
}

std::optional<TrialOutline::Known> TrialOutline::FindKnown(int64_t global_step) const {
  auto it = std::upper_bound(steps_.begin(), steps_.end(), global_step,
                             [](int64_t v, const KnownRun& r) { return v < r.first; });
  if (it == steps_.begin()) return std::nullopt;
  --it;
  const int64_t offset = global_step - it->first;
  if (offset % it->stride != 0 || offset / it->stride >= it->count) return std::nullopt;
  return Known{it->mode, it->mode_first + it->mode_stride * (offset / it->stride), it->workers};
}

bool TrialOutline::Complete(int64_t global_step, uint32_t workers) const {
  return static_cast<int64_t>(worker_sets_[workers].size()) == num_workers_ || loaded_all_steps_ ||
         global_step <= last_complete_step_;
}

bool TrialOutline::IsStepComplete(int64_t global_step) const {
  const std::optional<Known> known = FindKnown(global_step);
  return known && Complete(global_step, known->workers);
}

bool TrialOutline::ModeStepsInOrder(Mode mode) const {
  for (const ExtraOwner& extra : extra_owners_) {
    if (extra.mode == mode) return false;
  }
  std::optional<int64_t> last;
  for (const KnownRun& r : steps_) {
    if (r.mode != mode) continue;
    if ((last && r.mode_first <= *last) || (r.count > 1 && r.mode_stride <= 0)) return false;
    last = r.mode_first + r.mode_stride * (r.count - 1);
  }
  return true;
}

std::vector<std::pair<int64_t, int64_t>> TrialOutline::ModeStepOwners(Mode mode) const {
  std::vector<std::pair<int64_t, int64_t>> out;
  if (mode == Mode::kGlobal) {
    ForEachKnown([&](int64_t g, Mode, int64_t, uint32_t) { out.emplace_back(g, g); });
    return out;
  }
  // In the order the files were added: each step's own (mode, mode step), then its other files'.
  size_t extra = 0;
  ForEachKnown([&](int64_t g, Mode m, int64_t mode_step, uint32_t) {
    if (m == mode) out.emplace_back(mode_step, g);
    for (; extra < extra_owners_.size() && extra_owners_[extra].global_step == g; ++extra) {
      if (extra_owners_[extra].mode == mode) out.emplace_back(extra_owners_[extra].mode_step, g);
    }
  });
  const bool increasing = std::adjacent_find(out.begin(), out.end(), [](const auto& a, const auto& b) {
                            return a.first >= b.first;
                          }) == out.end();
  if (increasing) return out;
  // Mode steps that repeat or go down (rare): first seen wins, then sorted.
  std::map<int64_t, int64_t> owners;
  for (const auto& [mode_step, g] : out) owners.try_emplace(mode_step, g);
  return {owners.begin(), owners.end()};
}

std::vector<int64_t> TrialOutline::Steps(Mode mode, bool include_incomplete) const {
  std::vector<int64_t> out;
  if (mode == Mode::kGlobal) {
    ForEachKnown([&](int64_t g, Mode, int64_t, uint32_t workers) {
      if (include_incomplete || Complete(g, workers)) out.push_back(g);
    });
    return out;
  }
  for (const auto& [mode_step, g] : ModeStepOwners(mode)) {
    if (include_incomplete || IsStepComplete(g)) out.push_back(mode_step);
  }
  return out;
}

bool TrialOutline::HasMode(Mode mode) const {
  return mode == Mode::kGlobal || (modes_with_entries_ & ModeBit(mode)) != 0;
}

std::optional<int64_t> TrialOutline::GlobalStep(Mode mode, int64_t mode_step) const {
  if (mode == Mode::kGlobal) return mode_step;
  // (O(steps): callers that map every mode step use ModeStepOwners.)
  const std::vector<std::pair<int64_t, int64_t>> owners = ModeStepOwners(mode);
  const auto it = std::lower_bound(owners.begin(), owners.end(), std::pair(mode_step, INT64_MIN));
  if (it == owners.end() || it->first != mode_step) return std::nullopt;
  return it->second;
}

std::optional<std::pair<Mode, int64_t>> TrialOutline::ModeOfGlobalStep(int64_t global_step) const {
  const std::optional<Known> known = FindKnown(global_step);
  if (!known) return std::nullopt;
  return std::pair(known->mode, known->mode_step);
}

std::vector<std::string> TrialOutline::WorkersForStep(int64_t global_step) const {
  std::vector<std::string> out;
  const std::optional<Known> known = FindKnown(global_step);
  if (!known) return out;
  for (const std::string* w : worker_sets_[known->workers]) out.push_back(*w);
  return out;
}

std::vector<std::string> TrialOutline::TensorNames() const {
  std::vector<std::string> out;
  out.reserve(tensors_.size());
  for (const auto& [name, unused] : tensors_) out.push_back(name);
  return out;
}

std::vector<std::string> TrialOutline::TensorNamesAtStep(int64_t global_step) const {
  std::vector<std::string> out;
  for (const auto& [name, t] : tensors_) {
    if (t.steps.Contains(global_step)) out.push_back(name);
  }
  return out;
}

std::vector<std::string> TrialOutline::TensorNamesForMode(Mode mode) const {
  if (mode == Mode::kGlobal) return TensorNames();
  std::vector<std::string> out;
  for (const auto& [name, t] : tensors_) {
    if ((t.modes_seen & ModeBit(mode)) != 0) out.push_back(name);
  }
  return out;
}

StatusOr<std::vector<std::string>> TrialOutline::TensorNamesInCollection(const std::string& collection) const {
  // (Trial::TensorNameViewsInCollection's rules and messages.)
  const auto it = collections_.find(collection);
  if (it == collections_.end()) return NotFoundError("no collection '" + collection + "' in trial " + root_);
  if (const auto error = collection_regex_errors_.find(collection); error != collection_regex_errors_.end()) {
    return error->second;
  }
  const Collection& c = it->second;
  const std::set<std::string> listed(c.tensor_names.begin(), c.tensor_names.end());
  std::vector<std::string> out;
  for (const auto& [name, unused] : tensors_) {
    bool member = listed.contains(name);
    for (size_t i = 0; !member && i < c.compiled_regex.size(); ++i) member = c.compiled_regex[i]->Search(name);
    if (member) out.push_back(name);
  }
  return out;
}

StatusOr<std::vector<std::string>> TrialOutline::TensorNamesMatching(const std::string& pattern) const {
  LITMUS_ASSIGN_OR_RETURN(std::shared_ptr<const Regex> regex, Regex::Compile(pattern));
  std::vector<std::string> out;
  for (const auto& [name, unused] : tensors_) {
    if (regex->Search(name)) out.push_back(name);
  }
  return out;
}

std::vector<int64_t> TrialOutline::TensorSteps(const std::string& name, bool include_incomplete) const {
  std::vector<int64_t> out;
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) return out;
  out.reserve(it->second.steps.size());
  it->second.steps.ForEach([&](int64_t g) {
    if (include_incomplete || loaded_all_steps_ || g <= last_complete_step_) out.push_back(g);
  });
  return out;
}

std::optional<std::pair<Mode, int64_t>> TrialOutline::TensorModeAt(const std::string& name, int64_t global_step) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end() || !it->second.steps.Contains(global_step)) return std::nullopt;
  if (const auto other = it->second.other_modes.find(global_step); other != it->second.other_modes.end()) {
    return other->second;
  }
  return ModeOfGlobalStep(global_step);
}

const StepRuns* TrialOutline::TensorStepRuns(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second.steps;
}

}  // namespace litmus
