// ForEachIndexFolder and CheckRecordsByFolder (trial_folders.h): a Trial per index folder, seen
// through FolderEnv, an Env that shows the Trial only that folder of the index.
#include "litmus/engine/trial_folders.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "litmus/format/forwarding_env.h"
#include "litmus/format/trial_layout.h"

namespace litmus {
namespace {

// `base` with the index folder (root/index) reduced to its subfolder `folder` (e.g. "000000003"):
// ListFiles of root/index lists only root/index/<folder>, its paths prefixed "<folder>/" as a
// listing of the whole index would give them. Everything else goes to `base` unchanged.
class FolderEnv : public ForwardingEnv {
 public:
  FolderEnv(Env* base, std::string index_dir, std::string folder)
      : ForwardingEnv(base), index_dir_(std::move(index_dir)), folder_(std::move(folder)) {}

  Status ListFiles(const std::string& dir, std::string_view start_after, std::vector<FileEntry>* out) override {
    if (dir != index_dir_) return base()->ListFiles(dir, start_after, out);
    const std::string prefix = folder_ + "/";
    std::string_view after;  // within the folder
    if (start_after.starts_with(prefix)) {
      after = start_after.substr(prefix.size());
    } else if (!start_after.empty() && start_after > std::string_view(prefix)) {
      return OkStatus();  // the cursor is past the whole folder
    }
    const size_t first = out->size();
    LITMUS_RETURN_IF_ERROR(base()->ListFiles(Env::JoinPath(index_dir_, folder_), after, out));
    for (size_t i = first; i < out->size(); ++i) (*out)[i].path.insert(0, prefix);
    return OkStatus();
  }

 private:
  std::string index_dir_;
  std::string folder_;
};

// As trial_document.cc: what a read may fail with that is damage, not an expected outcome.
bool IsDamage(const Status& status) {
  return status.code() == StatusCode::kDataLoss || status.code() == StatusCode::kUnimplemented;
}

}  // namespace

Status ForEachIndexFolder(Env* env, const std::string& root, const TrialOptions& options,
                          std::span<const int64_t> steps,
                          const std::function<Status(const Trial&, std::span<const int64_t>)>& f) {
  const std::string index_dir = Env::JoinPath(root, layout::kIndexDir);
  const std::string index_prefix = std::string(layout::kIndexDir) + "/";
  const int64_t per_folder = layout::kIndexFilesPerFolder;
  for (size_t first = 0; first < steps.size();) {
    const int64_t folder = steps[first] / per_folder;
    size_t end = first;
    while (end < steps.size() && steps[end] / per_folder == folder) ++end;
    FolderEnv folder_env(env, index_dir, layout::IndexFolder(folder * per_folder).substr(index_prefix.size()));
    TrialOptions folder_options = options;
    folder_options.range_begin = std::max(options.range_begin, folder * per_folder);
    folder_options.range_end = std::min(options.range_end, (folder + 1) * per_folder);
    LITMUS_ASSIGN_OR_RETURN(std::unique_ptr<Trial> trial, Trial::Open(&folder_env, root, folder_options));
    LITMUS_RETURN_IF_ERROR(f(*trial, steps.subspan(first, end - first)));
    first = end;
  }
  return OkStatus();
}

StatusOr<RecordCheck> CheckRecordsByFolder(Env* env, const SelectedOutline& selected, const TrialOptions& options,
                                           size_t max_listed, bool check_records) {
  const TrialOutline& outline = selected.trial();
  const std::vector<std::string>& names = selected.tensor_names();
  // Per selected tensor: its number of selected steps and the last of them (from the outline).
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> expected(names.size(), 0), seen(names.size(), 0), last(names.size(), kNone);
  for (size_t i = 0; i < names.size(); ++i) {
    outline.ForEachTensorStep(names[i], [&](int64_t g) {
      if (!selected.IncludesStep(g)) return;
      ++expected[i];
      last[i] = g;
    });
  }
  std::vector<int64_t> steps;
  if (check_records) {
    steps = selected.steps();
  } else {
    for (int64_t g : last) {
      if (g != kNone) steps.push_back(g);
    }
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  }

  RecordCheck out;
  // Damage in the order FindDamagedRecords meets it: (tensor, step, worker, item), item 0 the raw
  // value and 1.. the stored reductions; the folders come step by step, so the first
  // `max_listed` are kept sorted as they arrive.
  using Key = std::tuple<size_t, int64_t, size_t, size_t>;
  std::vector<std::pair<Key, Status>> listed;
  const auto damaged = [&](Key key, const Status& status) {
    ++out.damage.count;
    if (listed.size() >= max_listed && !(key < listed.back().first)) return;
    const auto at = std::upper_bound(listed.begin(), listed.end(), key,
                                     [](const Key& k, const std::pair<Key, Status>& item) { return k < item.first; });
    listed.insert(at, {key, status});
    if (listed.size() > max_listed) listed.pop_back();
  };

  // Records of a few steps are read together (Trial::Prefetch: one read for the records of an
  // event file that lie together, the files in parallel), up to this many bytes at a time.
  constexpr uint64_t kBatchBytes = 16 << 20;
  constexpr size_t kBatchSteps = 16;
  struct Present {
    size_t tensor;
    int64_t step;
    std::vector<TensorEntry> entries;
  };
  const Status read = ForEachIndexFolder(
      env, outline.root(), options, steps, [&](const Trial& trial, std::span<const int64_t> folder_steps) -> Status {
        for (size_t first = 0; first < folder_steps.size();) {
          std::vector<Present> present;
          std::vector<Trial::StepTensor> keys;
          uint64_t bytes = 0;
          size_t next = first;
          for (; next < folder_steps.size() && next - first < kBatchSteps && bytes < kBatchBytes; ++next) {
            const int64_t g = folder_steps[next];
            for (size_t i = 0; i < names.size(); ++i) {
              if (!check_records && last[i] != g) continue;
              std::vector<TensorEntry> entries = trial.Entries(names[i], g);
              if (entries.empty()) continue;
              for (const TensorEntry& e : entries) bytes += e.location ? e.location->length : 0;
              keys.emplace_back(names[i], g);
              present.push_back({i, g, std::move(entries)});
            }
          }
          first = next;
          if (check_records) trial.Prefetch(keys);
          for (const Present& p : present) {
            const std::string& name = names[p.tensor];
            ++seen[p.tensor];
            if (p.step == last[p.tensor]) out.looks[name] = LookAtTensor(trial, name, p.step);
            if (!check_records) continue;
            for (size_t w = 0; w < p.entries.size(); ++w) {
              const TensorEntry& entry = p.entries[w];
              if (entry.location) {
                auto value = trial.Value(name, p.step, Mode::kGlobal, entry.worker);
                if (!value.ok() && IsDamage(value.status())) damaged({p.tensor, p.step, w, 0}, value.status());
              }
              size_t item = 1;
              for (const auto& [key, location] : entry.stored_reductions) {
                auto r = trial.Reduction(name, p.step, key.first, key.second, Mode::kGlobal, entry.worker);
                if (!r.ok() && IsDamage(r.status())) damaged({p.tensor, p.step, w, item}, r.status());
                ++item;
              }
            }
          }
          trial.Release(keys);
        }
        return OkStatus();
      });
  LITMUS_RETURN_IF_ERROR(read);
  for (size_t i = 0; i < names.size(); ++i) {
    const int64_t want = check_records ? expected[i] : (last[i] == kNone ? 0 : 1);
    if (seen[i] != want) {
      return UnimplementedError("tensor '" + names[i] + "': the index folders hold " + std::to_string(seen[i]) +
                                " of its " + std::to_string(want) + " selected records (an index file outside its step's folder)");
    }
  }
  for (auto& [key, status] : listed) out.damage.listed.push_back(std::move(status));
  return out;
}

}  // namespace litmus
