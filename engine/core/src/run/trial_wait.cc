// Trial waiting: the pending-folder Env, nested-trial detection and the words for a wait.
#include "run/trial_wait.h"

#include <algorithm>
#include <filesystem>

#include "litmus/format/trial_layout.h"

namespace litmus {
namespace {

std::string WithoutTrailingSlash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

bool IsS3(const std::string& path) { return path.rfind("s3://", 0) == 0; }

// Whether the local folder `dir` has a trial's top-level entries.
bool LooksLikeTrial(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const std::string_view entry : {std::string_view("index"), std::string_view("collections"),
                                       std::string_view("events"), layout::kEndOfJobFile}) {
    if (std::filesystem::exists(dir / entry, ec)) return true;
  }
  return false;
}

}  // namespace

void PendingFolderEnv::AddPendingFolder(const std::string& path) { pending_.insert(WithoutTrailingSlash(path)); }

StatusOr<bool> PendingFolderEnv::IsDirectory(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(bool is_dir, base()->IsDirectory(path));
  if (is_dir || !pending_.count(WithoutTrailingSlash(path))) return is_dir;
  // Still pending only while nothing exists there (a file in its place stays an error).
  LITMUS_ASSIGN_OR_RETURN(bool exists, base()->FileExists(path));
  return !exists;
}

bool IsMissingLocalFolder(const std::string& path) {
  if (IsS3(path)) return false;
  std::error_code ec;
  return !std::filesystem::exists(path, ec) && !ec;
}

NestedTrials FindNestedTrials(const std::string& root, size_t max) {
  NestedTrials out;
  std::error_code ec;
  if (IsS3(root) || !std::filesystem::is_directory(root, ec) || LooksLikeTrial(root)) return out;
  std::vector<std::string> names;
  for (std::filesystem::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && LooksLikeTrial(it->path())) names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  out.total = names.size();
  if (names.size() > max) names.resize(max);
  out.names = std::move(names);
  return out;
}

std::string NestedTrialsMessage(const std::string& root, const NestedTrials& nested) {
  std::string names;
  for (const auto& name : nested.names) names += (names.empty() ? "" : ", ") + name;
  if (nested.total > nested.names.size()) names += " (and " + std::to_string(nested.total - nested.names.size()) + " more)";
  const std::string first = (std::filesystem::path(WithoutTrailingSlash(root)) / nested.names.front()).string();
  return "trial " + root + " is not a trial but holds trials: " + names + "; use e.g. --trial " + first;
}

std::optional<std::string> TrialWaitState(const Trial& trial) {
  const std::string& root = trial.root();
  if (trial.collections_ready()) {
    const auto have = static_cast<int64_t>(trial.workers().size());
    if (have >= trial.num_workers()) return std::nullopt;
    return "trial " + root + ": waiting for the collections files of all " + std::to_string(trial.num_workers()) +
           " workers (" + std::to_string(have) + " so far)";
  }
  if (IsMissingLocalFolder(root)) {
    return "trial folder " + root + " does not exist yet: waiting for training to create it";
  }
  std::error_code ec;
  if (!IsS3(root) && std::filesystem::is_empty(root, ec) && !ec) {
    return "trial folder " + root + " is empty: waiting for training to save its first step";
  }
  return "trial " + root + " has no collections file yet (" + std::string(layout::kCollectionsDir) +
         "/): waiting for training to save its first step";
}

bool WaitNotice::Due() {
  const auto now = std::chrono::steady_clock::now();
  if (!first_) {
    first_ = last_ = now;
    return true;
  }
  if (now - *last_ < interval_) return false;
  last_ = now;
  return true;
}

int64_t WaitNotice::WaitedSeconds() const {
  if (!first_) return 0;
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - *first_).count();
}

}  // namespace litmus
