// Helpers for the litmus::writer tests: a fault-injecting, operation-recording Env wrapper;
// decoding of event files written by the writer or by smdebug (fixtures); listing a folder.
// FaultEnv is thread-safe; the other helpers are plain functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "litmus/format/env.h"
#include "litmus/format/event_codec.h"
#include "litmus/format/tfrecord.h"
#include "litmus/status.h"

namespace litmus::testing {

// Wraps an Env (Env::Default() by default), records mutating operations and injects failures.
class FaultEnv : public Env {
 public:
  explicit FaultEnv(Env* base = Env::Default()) : base_(base) {}

  // Appends fail once this many bytes have been appended in total (across files); the failing
  // Append first writes the bytes that still fit, as a real ENOSPC write does.
  void FailAppendsAfter(uint64_t bytes, Status error);
  // NewWritableFile / RenameFile / CreateDirs fail for paths containing `substring`.
  void FailCreateContaining(std::string substring, Status error);
  void FailRenameContaining(std::string substring, Status error);
  void FailCreateDirsContaining(std::string substring, Status error);
  void ClearFaults();

  // "create <path>", "rename <from> <to>", "remove <path>", "mkdir <path>", "append <path> <n>".
  std::vector<std::string> ops() const;
  int append_calls() const;
  uint64_t appended_bytes() const;
  // Data pointers of every part of every Append (to check zero-copy writes).
  std::vector<const std::byte*> append_part_pointers() const;

  StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override;
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  StatusOr<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path) override;
  Status ListFiles(const std::string& dir, std::string_view start_after,
                   std::vector<FileEntry>* out) override;
  StatusOr<bool> FileExists(const std::string& path) override;
  StatusOr<bool> IsDirectory(const std::string& path) override;
  Status CreateDirs(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;

 private:
  class File;
  friend class File;
  // Returns how many of `wanted` bytes may still be appended, and the error to return after.
  std::optional<Status> ReserveAppend(uint64_t wanted, uint64_t* allowed);
  void Record(std::string op);

  Env* base_;
  mutable std::mutex mu_;
  std::vector<std::string> ops_;
  std::optional<uint64_t> append_limit_;
  Status append_error_;
  std::string create_substring_, rename_substring_, mkdir_substring_;
  Status create_error_, rename_error_, mkdir_error_;
  int append_calls_ = 0;
  uint64_t appended_ = 0;
  std::vector<const std::byte*> part_pointers_;
};

// One framed record of an event file, decoded.
struct Record {
  uint64_t offset = 0;
  uint64_t length = 0;  // framed
  bool real_crc = false;
  uint32_t footer = 0;
  EventView event;      // views into EventFile::bytes
  std::string framed() const;  // the record's bytes (copied)
  const std::string* file = nullptr;
};

// A whole event file and its records. Not copyable or movable (records view into `bytes`).
struct EventFile {
  std::string bytes;
  std::vector<Record> records;
  EventFile() = default;
  EventFile(const EventFile&) = delete;
  EventFile& operator=(const EventFile&) = delete;
  // The record whose tag is `tag`; nullptr if none.
  const Record* Find(std::string_view tag) const;
};

// Reads and decodes every record of `path`; ADD_FAILURE()s (and returns what it decoded) on a
// framing or decoding error or trailing bytes.
std::unique_ptr<EventFile> ReadEventFile(const std::filesystem::path& path);

// Every regular file under `dir`, relative, sorted.
std::set<std::string> ListTree(const std::filesystem::path& dir);

// Bytes of a span/string helper.
inline std::string ToString(std::span<const std::byte> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace litmus::testing
