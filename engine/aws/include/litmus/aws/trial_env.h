// TrialEnv: the Env through which the CLI opens trials, so `s3://bucket/prefix` works wherever a
// trial path does. Local paths go to Env::Default(); s3:// paths to an S3Env per declared trial
// (AddTrial), or to a shared S3Env without snapshots for other s3:// paths. The S3 machinery
// (credential chain, region, endpoint, curl transport) is created on the first s3:// path.
// Thread-safety: AddTrial must not run concurrently with anything else; once trials are added,
// every Env method may be called concurrently.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "litmus/aws/aws_client.h"
#include "litmus/aws/credentials.h"
#include "litmus/aws/http.h"
#include "litmus/aws/s3_client.h"
#include "litmus/aws/s3_env.h"
#include "litmus/format/env.h"

namespace litmus::aws {

struct TrialEnvOptions {
  // Borrowed overrides for tests; nullptr/empty = the real thing: NewCurlTransport(),
  // DefaultCredentialsChain(), ResolveRegion(), ResolveEndpoint("S3", ...).
  HttpTransport* transport = nullptr;
  CredentialsProvider* credentials = nullptr;
  std::string region;
  std::string endpoint;
  RetryPolicy retry;
  S3EnvOptions s3;
};

class TrialEnv final : public Env {
 public:
  explicit TrialEnv(TrialEnvOptions options = {});
  ~TrialEnv() override;

  // Declares a trial path (as given to --trial, --other-trial, S3_PATH, YAML), so an s3:// trial
  // gets its own S3Env with listing snapshots. Local paths need nothing. A malformed s3:// URI is
  // ignored here: opening it fails with InvalidArgument naming the URI and bucket, which the
  // runner reports like any bad trial path. Idempotent.
  void AddTrial(const std::string& path);

  StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) override;
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  StatusOr<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path) override;
  Status ListFiles(const std::string& dir, std::string_view start_after, std::vector<FileEntry>* out) override;
  StatusOr<bool> FileExists(const std::string& path) override;
  StatusOr<bool> IsDirectory(const std::string& path) override;
  Status CreateDirs(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;

  // S3 requests sent so far (every attempt, retries included); 0 before the first s3:// path.
  uint64_t s3_requests() const;

 private:
  // The Env for `path`: Env::Default() for local paths; for s3:// the S3Env of the declared trial
  // whose root contains it, else the shared one. InvalidArgument for a malformed s3:// URI.
  StatusOr<Env*> Route(const std::string& path);
  void EnsureS3Locked();  // REQUIRES: mu_ held

  TrialEnvOptions options_;
  mutable std::mutex mu_;
  std::unique_ptr<HttpTransport> owned_transport_;
  std::unique_ptr<CredentialsProvider> owned_credentials_;
  std::unique_ptr<AwsClient> aws_;
  std::unique_ptr<S3Client> s3_;
  std::map<std::string, std::unique_ptr<S3Env>> trials_;  // root URI -> its Env
  std::unique_ptr<S3Env> shared_;                          // s3:// paths outside declared trials
};

// Strips trailing '/' from an s3:// URI or local path ("s3://b/p/" -> "s3://b/p").
std::string NormalizeTrialPath(std::string path);

}  // namespace litmus::aws
