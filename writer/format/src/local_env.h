// LocalEnv: the POSIX implementation of Env (pread, writev, fsync, rename(2)). Internal; obtain
// it through Env::Default(). Thread-safe; file objects are single-threaded except Read.
#pragma once

#include "litmus/format/env.h"

namespace litmus::internal {

class LocalEnv final : public Env {
 public:
  StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override;
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  StatusOr<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path) override;
  Status ListFiles(const std::string& dir, std::string_view start_after,
                   std::vector<FileEntry>* out) override;
  StatusOr<bool> FileExists(const std::string& path) override;
  StatusOr<bool> IsDirectory(const std::string& path) override;
  Status CreateDirs(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status ReplaceUnsyncedFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;
};

}  // namespace litmus::internal
