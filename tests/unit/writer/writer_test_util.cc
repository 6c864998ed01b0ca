// Helpers for the litmus::writer tests; see writer_test_util.h.
#include "writer_test_util.h"

#include <gtest/gtest.h>

#include <cstring>

#include "support/temp_dir.h"

namespace litmus::testing {

class FaultEnv::File : public WritableFile {
 public:
  File(FaultEnv* env, std::unique_ptr<WritableFile> base, std::string path)
      : env_(env), base_(std::move(base)), path_(std::move(path)) {}

  Status Append(std::span<const std::span<const std::byte>> parts) override {
    uint64_t total = 0;
    for (const auto& p : parts) total += p.size();
    uint64_t allowed = total;
    std::optional<Status> error = env_->ReserveAppend(total, &allowed);
    {
      std::lock_guard<std::mutex> lock(env_->mu_);
      ++env_->append_calls_;
      for (const auto& p : parts) env_->part_pointers_.push_back(p.data());
      env_->ops_.push_back("append " + path_ + " " + std::to_string(total));
    }
    if (!error.has_value()) return base_->Append(parts);
    // Write the prefix that fits, then fail.
    std::vector<std::span<const std::byte>> prefix;
    for (const auto& p : parts) {
      if (allowed == 0) break;
      const uint64_t n = std::min<uint64_t>(allowed, p.size());
      prefix.push_back(p.subspan(0, n));
      allowed -= n;
    }
    if (!prefix.empty()) {
      Status s = base_->Append(prefix);
      if (!s.ok()) return s;
    }
    return *error;
  }
  Status Sync() override { return base_->Sync(); }
  Status Close() override { return base_->Close(); }

 private:
  FaultEnv* env_;
  std::unique_ptr<WritableFile> base_;
  std::string path_;
};

void FaultEnv::FailAppendsAfter(uint64_t bytes, Status error) {
  std::lock_guard<std::mutex> lock(mu_);
  append_limit_ = appended_ + bytes;
  append_error_ = std::move(error);
}
void FaultEnv::FailCreateContaining(std::string substring, Status error) {
  std::lock_guard<std::mutex> lock(mu_);
  create_substring_ = std::move(substring);
  create_error_ = std::move(error);
}
void FaultEnv::FailRenameContaining(std::string substring, Status error) {
  std::lock_guard<std::mutex> lock(mu_);
  rename_substring_ = std::move(substring);
  rename_error_ = std::move(error);
}
void FaultEnv::FailCreateDirsContaining(std::string substring, Status error) {
  std::lock_guard<std::mutex> lock(mu_);
  mkdir_substring_ = std::move(substring);
  mkdir_error_ = std::move(error);
}
void FaultEnv::ClearFaults() {
  std::lock_guard<std::mutex> lock(mu_);
  append_limit_.reset();
  create_substring_.clear();
  rename_substring_.clear();
  mkdir_substring_.clear();
}

std::vector<std::string> FaultEnv::ops() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ops_;
}
int FaultEnv::append_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return append_calls_;
}
uint64_t FaultEnv::appended_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return appended_;
}
std::vector<const std::byte*> FaultEnv::append_part_pointers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return part_pointers_;
}

std::optional<Status> FaultEnv::ReserveAppend(uint64_t wanted, uint64_t* allowed) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!append_limit_.has_value() || appended_ + wanted <= *append_limit_) {
    appended_ += wanted;
    *allowed = wanted;
    return std::nullopt;
  }
  *allowed = *append_limit_ > appended_ ? *append_limit_ - appended_ : 0;
  appended_ += *allowed;
  return append_error_;
}

void FaultEnv::Record(std::string op) {
  std::lock_guard<std::mutex> lock(mu_);
  ops_.push_back(std::move(op));
}

StatusOr<std::unique_ptr<RandomAccessFile>> FaultEnv::NewRandomAccessFile(const std::string& path) {
  return base_->NewRandomAccessFile(path);
}

StatusOr<std::unique_ptr<WritableFile>> FaultEnv::NewWritableFile(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!create_substring_.empty() && path.find(create_substring_) != std::string::npos) {
      return create_error_;
    }
  }
  Record("create " + path);
  LITMUS_ASSIGN_OR_RETURN(auto base, base_->NewWritableFile(path));
  return std::unique_ptr<WritableFile>(new File(this, std::move(base), path));
}

StatusOr<std::unique_ptr<WritableFile>> FaultEnv::NewExclusiveFile(const std::string& path) {
  Record("create-exclusive " + path);
  LITMUS_ASSIGN_OR_RETURN(auto base, base_->NewExclusiveFile(path));
  return std::unique_ptr<WritableFile>(new File(this, std::move(base), path));
}

Status FaultEnv::ListFiles(const std::string& dir, std::string_view start_after,
                           std::vector<FileEntry>* out) {
  return base_->ListFiles(dir, start_after, out);
}
StatusOr<bool> FaultEnv::FileExists(const std::string& path) { return base_->FileExists(path); }
StatusOr<bool> FaultEnv::IsDirectory(const std::string& path) { return base_->IsDirectory(path); }

Status FaultEnv::CreateDirs(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!mkdir_substring_.empty() && path.find(mkdir_substring_) != std::string::npos) {
      return mkdir_error_;
    }
  }
  Record("mkdir " + path);
  return base_->CreateDirs(path);
}

Status FaultEnv::RenameFile(const std::string& from, const std::string& to) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!rename_substring_.empty() && from.find(rename_substring_) != std::string::npos) {
      return rename_error_;
    }
  }
  Record("rename " + from + " " + to);
  return base_->RenameFile(from, to);
}

Status FaultEnv::RemoveFile(const std::string& path) {
  Record("remove " + path);
  return base_->RemoveFile(path);
}

std::string Record::framed() const { return file->substr(offset, length); }

const Record* EventFile::Find(std::string_view tag) const {
  for (const Record& r : records) {
    if (r.event.tag == tag) return &r;
  }
  return nullptr;
}

std::unique_ptr<EventFile> ReadEventFile(const std::filesystem::path& path) {
  auto file = std::make_unique<EventFile>();
  file->bytes = ReadWholeFile(path);
  const auto all = std::as_bytes(std::span(file->bytes));
  uint64_t offset = 0;
  while (offset < all.size()) {
    auto rec = tfrecord::ParseRecord(all.subspan(offset), path.string(), offset);
    if (!rec.ok()) {
      ADD_FAILURE() << path << ": " << rec.status().ToString();
      break;
    }
    auto event = DecodeEvent(rec->payload);
    if (!event.ok()) {
      ADD_FAILURE() << path << " at " << offset << ": " << event.status().ToString();
      break;
    }
    Record r;
    r.offset = offset;
    r.length = rec->framed_size;
    r.real_crc = rec->has_payload_crc;
    std::memcpy(&r.footer, file->bytes.data() + offset + rec->framed_size - 4, 4);
    r.event = *event;
    r.file = &file->bytes;
    file->records.push_back(std::move(r));
    offset += rec->framed_size;
  }
  return file;
}

std::set<std::string> ListTree(const std::filesystem::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file()) out.insert(std::filesystem::relative(it->path(), dir).string());
  }
  return out;
}

}  // namespace litmus::testing
