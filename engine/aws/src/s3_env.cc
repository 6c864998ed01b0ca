// S3Env (s3_env.h): listing snapshots of one trial prefix, direct requests elsewhere, ranged
// reads.
#include "litmus/aws/s3_env.h"

#include <algorithm>
#include <cinttypes>
#include <iterator>
#include <cstdio>

#include "litmus/format/trial_layout.h"

namespace litmus::aws {
namespace {

constexpr std::string_view kIndexPrefix = "index/";
constexpr std::string_view kCollectionsPrefix = "collections/";

class S3File final : public RandomAccessFile {
 public:
  S3File(S3Client* client, S3Location location, uint64_t size)
      : client_(client), location_(std::move(location)), size_(size) {}

  StatusOr<size_t> Read(uint64_t offset, std::span<std::byte> out) const override {
    if (offset >= size_) return size_t{0};
    const uint64_t n = std::min<uint64_t>(out.size(), size_ - offset);
    return client_->GetRange(location_.bucket, location_.key, offset, out.first(static_cast<size_t>(n)));
  }
  StatusOr<uint64_t> Size() const override { return size_; }
  // One request per run of records: a ranged GET costs a round trip and the server serves large
  // ranges faster than many small ones. 16 MiB per request still leaves several requests per
  // step file to run in parallel.
  Coalescing coalescing() const override {
    return {.max_record_bytes = UINT64_MAX, .max_gap_bytes = 1 << 20, .max_read_bytes = 16 << 20};
  }

 private:
  S3Client* const client_;
  const S3Location location_;
  const uint64_t size_;  // published files never change, so the size from a listing or HEAD holds
};

Status ReadOnly(std::string_view what, const std::string& path) {
  return UnimplementedError(std::string(what) + " " + path + ": litmus reads trials in S3 but does not write them");
}

// "index/000000000/000000000007": sorts before every index file of that step.
std::string IndexStepPrefix(int64_t step) {
  char digits[16];
  std::snprintf(digits, sizeof(digits), "%012" PRId64, step);
  return layout::IndexFolder(step) + "/" + digits;
}

}  // namespace

S3Env::S3Env(S3Client* client, std::string root, S3EnvOptions options)
    : client_(client), root_(std::move(root)), options_(options) {
  StatusOr<S3Location> location = ParseS3Uri(root_);
  if (location.ok()) root_location_ = *location;
  while (!root_location_.key.empty() && root_location_.key.back() == '/') root_location_.key.pop_back();
  root_prefix_ = root_location_.key.empty() ? "" : root_location_.key + "/";
}

uint64_t S3Env::snapshots() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshots_;
}

std::optional<std::string> S3Env::RelativeToRoot(const S3Location& location) const {
  if (location.bucket != root_location_.bucket) return std::nullopt;
  if (location.key == root_location_.key) return std::string();
  if (!location.key.starts_with(root_prefix_)) return std::nullopt;
  return location.key.substr(root_prefix_.size());
}

std::string S3Env::WindowStartLocked() const {
  // Walk index/ backwards (newest step first: names are zero-padded) until the window's oldest
  // step is found; O(window) per poll however long the trial.
  const size_t window = static_cast<size_t>(std::max(1, options_.straggler_window_steps));
  std::set<int64_t> steps;
  const auto index_end = known_.lower_bound("index0");  // '0' follows '/': just past "index/..."
  for (auto it = std::make_reverse_iterator(index_end); it != known_.rend() && it->first.starts_with(kIndexPrefix);
       ++it) {
    if (std::optional<layout::IndexFileName> name = layout::ParseIndexFilePath(it->first)) {
      steps.insert(name->step);
      if (steps.size() == window) return IndexStepPrefix(*steps.begin());
    }
  }
  return steps.empty() ? "" : "index";  // no index file yet: everything; fewer steps: all of index/
}

Status S3Env::TakeSnapshotLocked() {
  const std::string after = WindowStartLocked();
  std::vector<S3Object> listed;
  LITMUS_RETURN_IF_ERROR(client_->ListAll(root_location_.bucket, root_prefix_,
                                          after.empty() ? "" : root_prefix_ + after, &listed));
  bool new_index_files = false;
  std::map<std::string, uint64_t> fresh;
  for (S3Object& object : listed) {
    if (!object.key.starts_with(root_prefix_)) continue;
    std::string relative = object.key.substr(root_prefix_.size());
    if (relative.starts_with(kIndexPrefix) && !known_.contains(relative)) new_index_files = true;
    fresh.emplace(std::move(relative), object.size);
  }
  // The listing is the complete truth for keys > after.
  known_.erase(after.empty() ? known_.begin() : known_.upper_bound(after), known_.end());
  known_.merge(fresh);
  if (after.empty()) {
    collections_listed_ = true;
  } else if (new_index_files || !collections_listed_) {
    const std::string collections = root_prefix_ + std::string(kCollectionsPrefix);
    std::vector<S3Object> files;
    LITMUS_RETURN_IF_ERROR(client_->ListAll(root_location_.bucket, collections, "", &files));
    std::erase_if(known_, [](const auto& entry) { return entry.first.starts_with(kCollectionsPrefix); });
    for (S3Object& object : files) known_.emplace(object.key.substr(root_prefix_.size()), object.size);
    collections_listed_ = true;
  }
  listed_after_ = after;
  have_snapshot_ = true;
  asked_.clear();
  ++snapshots_;
  return OkStatus();
}

bool S3Env::CoveredLocked(const std::string& relative) const {
  if (relative > listed_after_) return true;
  return collections_listed_ && relative.starts_with(kCollectionsPrefix);
}

Status S3Env::ListDirect(const S3Location& dir, std::string_view start_after, std::vector<FileEntry>* out) {
  const std::string prefix = dir.key.empty() ? "" : dir.key + "/";
  std::vector<S3Object> listed;
  LITMUS_RETURN_IF_ERROR(client_->ListAll(dir.bucket, prefix,
                                          start_after.empty() ? "" : prefix + std::string(start_after), &listed));
  if (listed.empty() && start_after.empty()) return NotFoundError(S3Uri(dir.bucket, prefix) + ": no such folder");
  for (S3Object& object : listed) out->push_back({object.key.substr(prefix.size()), object.size});
  return OkStatus();
}

Status S3Env::ListFiles(const std::string& dir, std::string_view start_after, std::vector<FileEntry>* out) {
  LITMUS_ASSIGN_OR_RETURN(S3Location location, ParseS3Uri(dir));
  while (!location.key.empty() && location.key.back() == '/') location.key.pop_back();
  const std::optional<std::string> relative = RelativeToRoot(location);
  const bool snapshot_folder = relative && (*relative == "collections" || relative->starts_with(kCollectionsPrefix) ||
                                            *relative == "index" || relative->starts_with(kIndexPrefix));
  if (!snapshot_folder) return ListDirect(location, start_after, out);

  std::lock_guard<std::mutex> lock(mu_);
  std::string question = *relative;
  question += '\0';
  question += start_after;
  if (!have_snapshot_ || asked_.contains(question)) LITMUS_RETURN_IF_ERROR(TakeSnapshotLocked());
  asked_.insert(std::move(question));
  const std::string prefix = *relative + "/";
  auto it = known_.lower_bound(prefix);
  const bool any = it != known_.end() && it->first.starts_with(prefix);
  // Seek past start_after rather than step over the keys before it: an idle poll of a long trial
  // costs O(log keys), not O(keys).
  if (!start_after.empty()) it = known_.upper_bound(prefix + std::string(start_after));
  for (; it != known_.end() && it->first.starts_with(prefix); ++it) {
    out->push_back({it->first.substr(prefix.size()), it->second});
  }
  if (!any && start_after.empty()) return NotFoundError(dir + ": no such folder");
  return OkStatus();
}

StatusOr<bool> S3Env::FileExists(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(S3Location location, ParseS3Uri(path));
  if (const std::optional<std::string> relative = RelativeToRoot(location); relative && !relative->empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!have_snapshot_) LITMUS_RETURN_IF_ERROR(TakeSnapshotLocked());
    if (known_.contains(*relative)) return true;
    if (CoveredLocked(*relative)) return false;
  }
  LITMUS_ASSIGN_OR_RETURN(std::optional<uint64_t> size, client_->Head(location.bucket, location.key));
  return size.has_value();
}

StatusOr<bool> S3Env::IsDirectory(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(S3Location location, ParseS3Uri(path));
  while (!location.key.empty() && location.key.back() == '/') location.key.pop_back();
  if (location.key.empty()) {  // the bucket itself: it must exist
    LITMUS_RETURN_IF_ERROR(client_->ListPage(location.bucket, "", "", "", 1).status());
    return true;
  }
  const std::optional<std::string> relative = RelativeToRoot(location);
  if (relative && relative->empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!have_snapshot_) LITMUS_RETURN_IF_ERROR(TakeSnapshotLocked());
    if (!known_.empty()) return true;
  } else {
    LITMUS_ASSIGN_OR_RETURN(S3ListPage page, client_->ListPage(location.bucket, location.key + "/", "", "", 1));
    if (!page.objects.empty()) return true;
  }
  // Nothing below it: a folder unless an object has exactly this key.
  LITMUS_ASSIGN_OR_RETURN(std::optional<uint64_t> size, client_->Head(location.bucket, location.key));
  return !size.has_value();
}

StatusOr<std::unique_ptr<RandomAccessFile>> S3Env::NewRandomAccessFile(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(S3Location location, ParseS3Uri(path));
  if (const std::optional<std::string> relative = RelativeToRoot(location); relative && !relative->empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (const auto it = known_.find(*relative); it != known_.end()) {
      return std::unique_ptr<RandomAccessFile>(std::make_unique<S3File>(client_, std::move(location), it->second));
    }
  }
  LITMUS_ASSIGN_OR_RETURN(std::optional<uint64_t> size, client_->Head(location.bucket, location.key));
  if (!size) return NotFoundError(path + ": no such object");
  return std::unique_ptr<RandomAccessFile>(std::make_unique<S3File>(client_, std::move(location), *size));
}

StatusOr<std::unique_ptr<WritableFile>> S3Env::NewWritableFile(const std::string& path) {
  return ReadOnly("writing", path);
}
StatusOr<std::unique_ptr<WritableFile>> S3Env::NewExclusiveFile(const std::string& path) {
  return ReadOnly("writing", path);
}
Status S3Env::CreateDirs(const std::string& path) { return ReadOnly("creating", path); }
Status S3Env::RenameFile(const std::string& from, const std::string&) { return ReadOnly("renaming", from); }
Status S3Env::RemoveFile(const std::string& path) { return ReadOnly("removing", path); }

}  // namespace litmus::aws
