// Env: the one interface through which litmus touches storage (after LevelDB's Env). Local
// folders use LocalEnv (pread or mmap, rename); S3 and fault-injecting Envs implement the same
// interface elsewhere. Paths are '/'-separated strings; for LocalEnv they are filesystem paths.
// Env implementations are thread-safe; file objects are used by one thread at a time unless
// noted (RandomAccessFile::Read is safe to call concurrently).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/status.h"

namespace litmus {

// A read-only view of a file's first bytes.size() bytes, valid while `owner` (or a copy of it)
// lives, also after the file object that made it is gone.
struct FileMapping {
  std::span<const std::byte> bytes;
  std::shared_ptr<const void> owner;
};

class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads up to out.size() bytes at `offset`; returns how many were read (fewer only at end of
  // file). Thread-safe.
  virtual StatusOr<size_t> Read(uint64_t offset, std::span<std::byte> out) const = 0;
  virtual StatusOr<uint64_t> Size() const = 0;
  // How a reader that needs several records of this file should batch them into reads (the
  // trial reader's Prefetch): records of at most max_record_bytes whose gaps are at most
  // max_gap_bytes are read together, at most max_read_bytes per read. The default suits a local
  // page cache, where a read call costs about as much as copying 16 KiB, and large records are
  // best read alone; reads of at most 256 KiB split a step's file into a few reads that several
  // threads read and decode at once. Remote stores, where every request costs a round trip,
  // batch much more.
  struct Coalescing {
    uint64_t max_record_bytes = 64 << 10;
    uint64_t max_gap_bytes = 4 << 10;
    uint64_t max_read_bytes = 256 << 10;
  };
  virtual Coalescing coalescing() const { return {}; }

  // Optional capability: the file's bytes mapped into memory, so that a reader decodes records
  // where they are instead of copying them out with Read(). nullopt when the file cannot be
  // mapped (the default: S3, fault-injecting Envs; LocalEnv for an empty file, a failed mmap or
  // LITMUS_READ_MMAP=0). The view covers the file's size when the call is made; a file that has
  // grown since an earlier call is mapped again (earlier views stay valid). Bytes past the
  // view are never mapped: read them with Read(). The bytes must not be read after the file is
  // truncated below them (SIGBUS); trial files are published whole and never truncated in
  // place (docs/trial-format.md), which is what makes mapping them safe. Thread-safe.
  virtual std::optional<FileMapping> Mapped() const { return std::nullopt; }
};

class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Appends all bytes of every span, in order (a gather write).
  virtual Status Append(std::span<const std::span<const std::byte>> parts) = 0;
  Status Append(std::span<const std::byte> data) { return Append(std::span(&data, 1)); }
  virtual Status Sync() = 0;
  virtual Status Close() = 0;  // idempotent
};

struct FileEntry {
  std::string path;  // relative to the listed directory, '/'-separated
  uint64_t size = 0;
};

class Env {
 public:
  virtual ~Env() = default;

  // The process-wide local filesystem Env. Never destroyed.
  static Env* Default();

  virtual StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) = 0;
  // Creates or truncates `path`. Parent directories must exist (see CreateDirs).
  virtual StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) = 0;
  // Creates `path` only if it does not exist (O_EXCL); AlreadyExists otherwise.
  virtual StatusOr<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path) = 0;

  // Every regular file under `dir` (recursively), as paths relative to `dir`, in byte-wise
  // lexicographic order of those paths, restricted to paths > start_after (all if empty).
  // Implementations must not descend into subdirectories whose whole subtree sorts <=
  // start_after, so listing only new index files stays cheap. NotFound if `dir` does not exist.
  virtual Status ListFiles(const std::string& dir, std::string_view start_after,
                           std::vector<FileEntry>* out) = 0;
  virtual StatusOr<bool> FileExists(const std::string& path) = 0;
  virtual StatusOr<bool> IsDirectory(const std::string& path) = 0;
  virtual Status CreateDirs(const std::string& path) = 0;  // mkdir -p
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;  // atomic replace
  // RenameFile for a file that is rewritten often and never synced (a job's HTML report, its
  // series files): as atomic for readers, but the file system is not asked to write `from`'s data
  // out first. (ext4 does that on a rename over an existing file unless mounted noauto_da_alloc:
  // 6-10 ms for a 17 MB file, at the end of every job.) A crash of the machine soon after may leave
  // `to` empty, as it may any file written without a sync. Default: RenameFile.
  virtual Status ReplaceUnsyncedFile(const std::string& from, const std::string& to) { return RenameFile(from, to); }
  virtual Status RemoveFile(const std::string& path) = 0;

  // Whole file into memory (used for small JSON files).
  StatusOr<std::string> ReadFileToString(const std::string& path);
  // Joins a root and a relative path with exactly one '/'.
  static std::string JoinPath(std::string_view root, std::string_view relative);
};

}  // namespace litmus
