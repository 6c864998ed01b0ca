// Env: the one interface through which litmus touches storage (after LevelDB's Env). Local
// folders use LocalEnv (pread, rename); S3 and fault-injecting Envs implement the same interface
// elsewhere. Paths are '/'-separated strings; for LocalEnv they are filesystem paths.
// Env implementations are thread-safe; file objects are used by one thread at a time unless
// noted (RandomAccessFile::Read is safe to call concurrently).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/status.h"

namespace litmus {

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
  virtual Status RemoveFile(const std::string& path) = 0;

  // Whole file into memory (used for small JSON files).
  StatusOr<std::string> ReadFileToString(const std::string& path);
  // Joins a root and a relative path with exactly one '/'.
  static std::string JoinPath(std::string_view root, std::string_view relative);
};

}  // namespace litmus
