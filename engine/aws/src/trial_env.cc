// TrialEnv (trial_env.h): routes local paths to Env::Default() and s3:// paths to S3Envs.
#include "litmus/aws/trial_env.h"

#include <spdlog/spdlog.h>

#include <cstdlib>

namespace litmus::aws {

std::string NormalizeTrialPath(std::string path) {
  const size_t keep = IsS3Uri(path) ? std::string_view("s3://").size() + 1 : 1;
  while (path.size() > keep && path.back() == '/') path.pop_back();
  return path;
}

TrialEnv::TrialEnv(TrialEnvOptions options) : options_(std::move(options)) {}
TrialEnv::~TrialEnv() = default;

void TrialEnv::EnsureS3Locked() {
  if (s3_) return;
  HttpTransport* transport = options_.transport;
  if (transport == nullptr) {
    owned_transport_ = NewCurlTransport();
    transport = owned_transport_.get();
  }
  CredentialsProvider* credentials = options_.credentials;
  if (credentials == nullptr) {
    owned_credentials_ = DefaultCredentialsChain();
    credentials = owned_credentials_.get();
  }
  const std::string region = options_.region.empty() ? ResolveRegion() : options_.region;
  const bool overridden = !options_.endpoint.empty() || std::getenv("AWS_ENDPOINT_URL_S3") != nullptr ||
                          std::getenv("AWS_ENDPOINT_URL") != nullptr;
  const std::string endpoint =
      options_.endpoint.empty() ? ResolveEndpoint("S3", "s3.{region}.amazonaws.com", region) : options_.endpoint;
  aws_ = std::make_unique<AwsClient>(transport, credentials, region, "s3", endpoint, options_.retry);
  // Path-style for endpoint overrides (S3-compatible stores); virtual-hosted for AWS itself.
  s3_ = std::make_unique<S3Client>(aws_.get(), overridden ? S3Addressing::kPath : S3Addressing::kVirtualHosted);
  shared_ = std::make_unique<S3Env>(s3_.get(), "", options_.s3);
  spdlog::debug("S3: endpoint {}, region {}, {} addressing", endpoint, region, overridden ? "path" : "virtual-hosted");
}

void TrialEnv::AddTrial(const std::string& path) {
  const std::string root = NormalizeTrialPath(path);
  if (!IsS3Uri(root) || !ParseS3Uri(root).ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  EnsureS3Locked();
  if (!trials_.contains(root)) trials_.emplace(root, std::make_unique<S3Env>(s3_.get(), root, options_.s3));
}

StatusOr<Env*> TrialEnv::Route(const std::string& path) {
  if (!IsS3Uri(path)) return Env::Default();
  LITMUS_RETURN_IF_ERROR(ParseS3Uri(path).status());
  std::lock_guard<std::mutex> lock(mu_);
  EnsureS3Locked();
  // The longest declared root that is `path` or a folder above it.
  for (auto it = trials_.rbegin(); it != trials_.rend(); ++it) {
    const std::string& root = it->first;
    if (path.starts_with(root) && (path.size() == root.size() || path[root.size()] == '/')) return it->second.get();
  }
  return shared_.get();
}

uint64_t TrialEnv::s3_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return aws_ ? aws_->attempts() : 0;
}

StatusOr<std::unique_ptr<RandomAccessFile>> TrialEnv::NewRandomAccessFile(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(Env * env, Route(path));
  return env->NewRandomAccessFile(path);
}
StatusOr<std::unique_ptr<WritableFile>> TrialEnv::NewWritableFile(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(Env * env, Route(path));
  return env->NewWritableFile(path);
}
StatusOr<std::unique_ptr<WritableFile>> TrialEnv::NewExclusiveFile(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(Env * env, Route(path));
  return env->NewExclusiveFile(path);
}
Status TrialEnv::ListFiles(const std::string& dir, std::string_view start_after, std::vector<FileEntry>* out) {
  LITMUS_ASSIGN_OR_RETURN(Env * env, Route(dir));
  return env->ListFiles(dir, start_after, out);
}
StatusOr<bool> TrialEnv::FileExists(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(Env * env, Route(path));
  return env->FileExists(path);
}
StatusOr<bool> TrialEnv::IsDirectory(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(Env * env, Route(path));
  return env->IsDirectory(path);
}
Status TrialEnv::CreateDirs(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(Env * env, Route(path));
  return env->CreateDirs(path);
}
Status TrialEnv::RenameFile(const std::string& from, const std::string& to) {
  LITMUS_ASSIGN_OR_RETURN(Env * env, Route(from));
  LITMUS_ASSIGN_OR_RETURN(Env * to_env, Route(to));
  if (env != to_env && (IsS3Uri(from) || IsS3Uri(to))) {
    return UnimplementedError("renaming " + from + " to " + to + ": litmus does not write to S3");
  }
  return env->RenameFile(from, to);
}
Status TrialEnv::RemoveFile(const std::string& path) {
  LITMUS_ASSIGN_OR_RETURN(Env * env, Route(path));
  return env->RemoveFile(path);
}

}  // namespace litmus::aws
