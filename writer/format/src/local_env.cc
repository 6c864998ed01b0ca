// LocalEnv: POSIX files. Reads use pread (safe from many threads) or a read-only shared mmap
// (RandomAccessFile::Mapped), appends use writev with short-write and EINTR loops, publication
// uses rename(2) (renameat2's exchange for ReplaceUnsyncedFile). ListFiles walks directories through
// openat/fdopendir, emits paths in bytewise order by construction and prunes subtrees that sort
// entirely at or before start_after. Thread-safe (no shared mutable state).
#include "local_env.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>

namespace litmus::internal {
namespace {

Status PathError(int err, std::string_view op, const std::string& path) {
  std::string what(op);
  what += ' ';
  what += path;
  return ErrnoToStatus(err, what);
}

// LITMUS_READ_MMAP=0 turns mapping off (every read then uses pread): the escape hatch for files
// that something may truncate in place while litmus reads them (a mapped page past the new end
// of a file raises SIGBUS). Read once.
bool MappingEnabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("LITMUS_READ_MMAP");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

// One mmap of a file's first `size` bytes; unmapped when the last owner drops it.
struct Mapping {
  void* address = nullptr;
  size_t size = 0;
  Mapping(void* a, size_t s) : address(a), size(s) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { ::munmap(address, size); }
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  std::optional<FileMapping> Mapped() const override {
    if (!MappingEnabled()) return std::nullopt;
    struct stat st;
    if (::fstat(fd_, &st) != 0 || st.st_size <= 0) return std::nullopt;
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > std::numeric_limits<size_t>::max()) return std::nullopt;
    std::lock_guard<std::mutex> lock(mapping_mu_);
    // The file as it is now: the last mapping if the file has not grown since (a file that
    // shrank keeps it too; reading the lost bytes is the caller's contract to avoid).
    if (mapping_ != nullptr && mapping_->size >= size) {
      return FileMapping{{static_cast<const std::byte*>(mapping_->address), mapping_->size}, mapping_};
    }
    void* address = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, fd_, 0);
    if (address == MAP_FAILED) return std::nullopt;  // (pread still works)
    // Readers go through a step's file front to back, and usually read all of it; let the
    // kernel start reading what is not cached yet. (Advice only: failures do not matter.)
    ::madvise(address, static_cast<size_t>(size), MADV_WILLNEED);
    mapping_ = std::make_shared<const Mapping>(address, static_cast<size_t>(size));
    return FileMapping{{static_cast<const std::byte*>(address), mapping_->size}, mapping_};
  }

  StatusOr<size_t> Read(uint64_t offset, std::span<std::byte> out) const override {
    size_t total = 0;
    while (total < out.size()) {
      const uint64_t at = offset + total;
      if (at > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) {
        return InvalidArgumentError(path_ + ": read offset " + std::to_string(at) +
                                    " out of range");
      }
      const ssize_t n =
          ::pread(fd_, out.data() + total, out.size() - total, static_cast<off_t>(at));
      if (n < 0) {
        if (errno == EINTR) continue;
        return PathError(errno, "read", path_ + " at offset " + std::to_string(at));
      }
      if (n == 0) break;  // end of file
      total += static_cast<size_t>(n);
    }
    return total;
  }

  StatusOr<uint64_t> Size() const override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return PathError(errno, "stat", path_);
    return static_cast<uint64_t>(st.st_size);
  }

 private:
  const std::string path_;
  const int fd_;
  mutable std::mutex mapping_mu_;
  mutable std::shared_ptr<const Mapping> mapping_;  // the latest (largest) mapping, if any
};

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(std::span<const std::span<const std::byte>> parts) override {
    if (fd_ < 0) return FailedPreconditionError(path_ + ": append after close");
    std::vector<iovec> iov;
    iov.reserve(parts.size());
    for (const auto& part : parts) {
      if (!part.empty()) iov.push_back({const_cast<std::byte*>(part.data()), part.size()});
    }
    size_t next = 0;  // first iovec not fully written
    while (next < iov.size()) {
      const int count = static_cast<int>(std::min<size_t>(iov.size() - next, IOV_MAX));
      const ssize_t n = ::writev(fd_, iov.data() + next, count);
      if (n < 0) {
        if (errno == EINTR) continue;
        return PathError(errno, "write", path_);
      }
      // Advance past what was written; a short write leaves a partial iovec to resume.
      auto written = static_cast<size_t>(n);
      while (next < iov.size() && written >= iov[next].iov_len) {
        written -= iov[next].iov_len;
        ++next;
      }
      if (written > 0) {
        iov[next].iov_base = static_cast<char*>(iov[next].iov_base) + written;
        iov[next].iov_len -= written;
      }
    }
    return OkStatus();
  }

  Status Sync() override {
    if (fd_ < 0) return FailedPreconditionError(path_ + ": sync after close");
    while (::fsync(fd_) != 0) {
      if (errno != EINTR) return PathError(errno, "fsync", path_);
    }
    return OkStatus();
  }

  Status Close() override {
    if (fd_ < 0) return OkStatus();
    const int fd = fd_;
    fd_ = -1;
    // On Linux the descriptor is released even when close() reports EINTR: never retry.
    if (::close(fd) != 0 && errno != EINTR) return PathError(errno, "close", path_);
    return OkStatus();
  }

 private:
  const std::string path_;
  int fd_;
};

StatusOr<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path, int extra_flags) {
  int fd;
  do {
    // 0666 & ~umask, as Python's open() creates smdebug's files.
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | extra_flags, 0666);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return PathError(errno, "create", path);
  return std::unique_ptr<WritableFile>(new PosixWritableFile(path, fd));
}

struct DirEntry {
  std::string key;  // name, plus '/' for directories: sorting keys sorts full paths bytewise
  bool is_dir = false;
};

struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }  // also closes the descriptor
};

// Lists the directory open as `dir_fd` (takes ownership) whose path relative to the listing
// root is `prefix` ("" or ending in '/').
Status Walk(int dir_fd, const std::string& prefix, std::string_view start_after,
            const std::string& root, std::vector<FileEntry>* out) {
  std::unique_ptr<DIR, DirCloser> dir(::fdopendir(dir_fd));
  if (dir == nullptr) {
    const int err = errno;
    ::close(dir_fd);
    return PathError(err, "list", root + "/" + prefix);
  }
  const int fd = ::dirfd(dir.get());
  // In the folder that holds start_after's file, the files up to it are dropped as they are read
  // (no string, no sort): polling a folder of many index files costs only what is new in it.
  const bool filter = !start_after.empty() && start_after.starts_with(prefix);
  const std::string_view rest = filter ? start_after.substr(prefix.size()) : std::string_view();
  std::vector<DirEntry> entries;
  while (true) {
    errno = 0;
    const dirent* de = ::readdir(dir.get());
    if (de == nullptr) {
      if (errno != 0) return PathError(errno, "list", root + "/" + prefix);
      break;
    }
    const std::string_view name(de->d_name);
    if (name == "." || name == "..") continue;
    bool is_dir = de->d_type == DT_DIR;
    bool is_file = de->d_type == DT_REG;
    if (de->d_type == DT_UNKNOWN || de->d_type == DT_LNK) {
      struct stat st;
      if (::fstatat(fd, de->d_name, &st, 0) != 0) continue;  // vanished, or a dangling link
      is_file = S_ISREG(st.st_mode);
      // Directories reached through symlinks are not followed (no cycles, no escaping the tree).
      is_dir = de->d_type == DT_UNKNOWN && S_ISDIR(st.st_mode);
    }
    if (is_dir) {
      entries.push_back({std::string(name) + "/", true});
    } else if (is_file && !(filter && name <= rest)) {
      entries.push_back({std::string(name), false});
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.key < b.key; });

  for (const DirEntry& entry : entries) {
    std::string path = prefix + entry.key;
    const std::string name = entry.is_dir ? entry.key.substr(0, entry.key.size() - 1) : entry.key;
    if (entry.is_dir) {
      // Every path under `path` (which ends in '/') is > start_after if path > start_after; all
      // are < start_after if path < start_after and is not a prefix of it: skip those subtrees.
      if (!start_after.empty() && path < start_after && !start_after.starts_with(path)) continue;
      const int sub = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      if (sub < 0) {
        if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) continue;  // vanished/replaced
        return PathError(errno, "list", root + "/" + path);
      }
      LITMUS_RETURN_IF_ERROR(Walk(sub, path, start_after, root, out));
      continue;
    }
    if (std::string_view(path) <= start_after) continue;
    struct stat st;
    if (::fstatat(fd, name.c_str(), &st, 0) != 0) {
      if (errno == ENOENT) continue;  // removed since readdir
      return PathError(errno, "stat", root + "/" + path);
    }
    out->push_back({std::move(path), static_cast<uint64_t>(st.st_size)});
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<RandomAccessFile>> LocalEnv::NewRandomAccessFile(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return PathError(errno, "open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return PathError(err, "stat", path);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError("open " + path + ": is a directory");
  }
  return std::unique_ptr<RandomAccessFile>(new PosixRandomAccessFile(path, fd));
}

StatusOr<std::unique_ptr<WritableFile>> LocalEnv::NewWritableFile(const std::string& path) {
  return OpenForWrite(path, O_TRUNC);
}

StatusOr<std::unique_ptr<WritableFile>> LocalEnv::NewExclusiveFile(const std::string& path) {
  return OpenForWrite(path, O_EXCL);
}

Status LocalEnv::ListFiles(const std::string& dir, std::string_view start_after,
                           std::vector<FileEntry>* out) {
  out->clear();
  int fd;
  do {
    fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return PathError(errno, "list", dir);
  return Walk(fd, "", start_after, dir, out);
}

StatusOr<bool> LocalEnv::FileExists(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return PathError(errno, "stat", path);
}

StatusOr<bool> LocalEnv::IsDirectory(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return PathError(errno, "stat", path);
}

Status LocalEnv::CreateDirs(const std::string& path) {
  if (path.empty()) return InvalidArgumentError("CreateDirs: empty path");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return OkStatus();
    return AlreadyExistsError("mkdir " + path + ": exists and is not a directory");
  }
  // Create each missing component in turn; concurrent creators are fine (EEXIST + a directory).
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    const std::string part = path.substr(0, pos);
    if (part.empty() || part.back() == '/') continue;  // leading '/' or "a//b"
    if (::mkdir(part.c_str(), 0777) == 0) continue;
    const int err = errno;
    if (err == EEXIST && ::stat(part.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) continue;
      return AlreadyExistsError("mkdir " + part + ": exists and is not a directory");
    }
    return PathError(err, "mkdir", part);
  }
  return OkStatus();
}

Status LocalEnv::RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    return PathError(errno, "rename", from + " -> " + to);
  return OkStatus();
}

Status LocalEnv::ReplaceUnsyncedFile(const std::string& from, const std::string& to) {
  // The two names swapped (renameat2 RENAME_EXCHANGE: ext4 starts no writeback for it), then the
  // old content, now under `from`, removed. No `to` yet (ENOENT), or a file system without the
  // exchange (EINVAL): a plain rename, which has nothing to replace or is what that system does.
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_EXCHANGE) == 0) {
    if (::unlink(from.c_str()) != 0) return PathError(errno, "remove the replaced", from);
    return OkStatus();
  }
  return RenameFile(from, to);
}

Status LocalEnv::RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return PathError(errno, "remove", path);
  return OkStatus();
}

}  // namespace litmus::internal
