// S3Env: the litmus::Env of one trial prefix in S3 (read-only). Paths are full URIs
// ("s3://bucket/prefix/index/000000000/000000000007_worker_0.json").
//
// Listings under the trial root are served from a *snapshot* so that following an idle trial
// costs one ListObjectsV2 request per poll:
//  - the first snapshot lists the whole prefix while it has no index file yet; afterwards a
//    snapshot lists only keys after the start of the last `straggler_window_steps` known steps of
//    index/ (so new index files, a worker's late file within that window, and the end marker, which
//    sorts after index/, all come back in one request), and re-lists collections/ only when new
//    index files appeared (a worker writes its collections file before its first index file);
//  - ListFiles questions about the root's collections/ and index/ folders, and FileExists of keys
//    in the listed ranges, are answered from the snapshot; asking the *same* ListFiles question
//    again means the caller polls again, so the snapshot is renewed first;
//  - anything else (other folders, keys outside the listed ranges) is a direct request.
// Reads are ranged GETs of exactly the requested bytes; sizes come from listings or one HEAD.
//
// Thread-safety: all methods may be called concurrently; RandomAccessFile::Read too.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "litmus/aws/s3_client.h"
#include "litmus/format/env.h"

namespace litmus::aws {

struct S3EnvOptions {
  // How many of the latest known steps each snapshot re-lists, to catch index files of slower
  // workers that sort before the newest one.
  int straggler_window_steps = 10;  // >= 1 (smaller values count as 1)
};

class S3Env final : public Env {
 public:
  // `client` is borrowed. `root` is the trial's URI ("s3://bucket/prefix", no trailing '/');
  // an empty root gives an Env without snapshots (every question is a request).
  S3Env(S3Client* client, std::string root, S3EnvOptions options = {});

  StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override;
  Status ListFiles(const std::string& dir, std::string_view start_after, std::vector<FileEntry>* out) override;
  StatusOr<bool> FileExists(const std::string& path) override;
  // True for the root (and any prefix) of an accessible bucket, unless an object has exactly that
  // key: S3 has no folders, and a trial prefix may be empty until training writes its first file.
  StatusOr<bool> IsDirectory(const std::string& path) override;

  // S3Env only reads: these return Unimplemented.
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  StatusOr<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path) override;
  Status CreateDirs(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;

  const std::string& root() const { return root_; }
  // Snapshots taken so far (for tests and the benchmark).
  uint64_t snapshots() const;

 private:
  // Key of `path` relative to the root prefix if it lies under the root; nullopt otherwise.
  std::optional<std::string> RelativeToRoot(const S3Location& location) const;
  // REQUIRES: mu_ held.
  Status TakeSnapshotLocked();
  std::string WindowStartLocked() const;
  bool CoveredLocked(const std::string& relative) const;
  Status ListDirect(const S3Location& dir, std::string_view start_after, std::vector<FileEntry>* out);

  S3Client* const client_;
  const std::string root_;
  S3Location root_location_;
  std::string root_prefix_;  // root key + "/" ("" for a bucket's root)
  const S3EnvOptions options_;

  mutable std::mutex mu_;
  bool have_snapshot_ = false;
  bool collections_listed_ = false;
  std::string listed_after_;  // the current snapshot covers keys > this (relative); "" = all
  std::map<std::string, uint64_t> known_;  // relative key -> size, from listings
  std::set<std::string> asked_;  // ListFiles questions answered from the current snapshot
  uint64_t snapshots_ = 0;
};

}  // namespace litmus::aws
