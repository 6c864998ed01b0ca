// ForwardingEnv: an Env that hands every call to another Env. Wrappers that watch or change a
// few calls (counting Envs of tests and benches, trial_wait's pending folders) derive from it and
// override only those, instead of repeating every forwarding method.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/format/env.h"

namespace litmus {

class ForwardingEnv : public Env {
 public:
  // `base` must outlive this Env.
  explicit ForwardingEnv(Env* base) : base_(base) {}

  StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override {
    return base_->NewRandomAccessFile(path);
  }
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    return base_->NewWritableFile(path);
  }
  StatusOr<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path) override {
    return base_->NewExclusiveFile(path);
  }
  Status ListFiles(const std::string& dir, std::string_view start_after, std::vector<FileEntry>* out) override {
    return base_->ListFiles(dir, start_after, out);
  }
  StatusOr<bool> FileExists(const std::string& path) override { return base_->FileExists(path); }
  StatusOr<bool> IsDirectory(const std::string& path) override { return base_->IsDirectory(path); }
  Status CreateDirs(const std::string& path) override { return base_->CreateDirs(path); }
  Status RenameFile(const std::string& from, const std::string& to) override { return base_->RenameFile(from, to); }
  Status RemoveFile(const std::string& path) override { return base_->RemoveFile(path); }

 protected:
  Env* base() const { return base_; }

 private:
  Env* const base_;
};

}  // namespace litmus
