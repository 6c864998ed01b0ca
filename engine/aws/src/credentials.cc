// Credential providers (credentials.h): static, environment, shared files, the caching wrapper
// and the default chain; region resolution.
#include "litmus/aws/credentials.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "credentials_cache.h"
#include "shared_config.h"

namespace litmus::aws {
namespace {

std::string Getenv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

class StaticProvider final : public CredentialsProvider {
 public:
  explicit StaticProvider(Credentials credentials) : credentials_(std::move(credentials)) {}
  StatusOr<Credentials> Get() override { return credentials_; }

 private:
  const Credentials credentials_;
};

class EnvironmentProvider final : public CredentialsProvider {
 public:
  StatusOr<Credentials> Get() override {
    Credentials c;
    c.access_key_id = Getenv("AWS_ACCESS_KEY_ID");
    c.secret_access_key = Getenv("AWS_SECRET_ACCESS_KEY");
    c.session_token = Getenv("AWS_SESSION_TOKEN");
    if (c.session_token.empty()) c.session_token = Getenv("AWS_SECURITY_TOKEN");  // legacy name
    if (c.access_key_id.empty() && c.secret_access_key.empty()) {
      return NotFoundError("environment: AWS_ACCESS_KEY_ID is not set");
    }
    if (c.access_key_id.empty() || c.secret_access_key.empty()) {
      return InvalidArgumentError(std::string("environment: ") +
                                  (c.access_key_id.empty() ? "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
                                                           : "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"));
    }
    return c;
  }
};

class SharedFileProvider final : public CredentialsProvider {
 public:
  StatusOr<Credentials> Get() override {
    const std::string name = internal::SelectedProfileName();
    const std::string credentials_path = internal::CredentialsFilePath();
    const std::string config_path = internal::ConfigFilePath();
    bool profile_found = false;
    // The credentials file wins over the config file for the same profile.
    for (const auto& [path, config_style] : {std::pair{credentials_path, false}, std::pair{config_path, true}}) {
      const std::optional<internal::Profile> profile = internal::ReadProfile(path, name, config_style);
      if (!profile) continue;
      profile_found = true;
      const auto key = profile->find("aws_access_key_id");
      const auto secret = profile->find("aws_secret_access_key");
      if (key == profile->end() && secret == profile->end()) continue;
      if (key == profile->end() || secret == profile->end() || key->second.empty() || secret->second.empty()) {
        return InvalidArgumentError("profile '" + name + "' in " + path +
                                    " needs both aws_access_key_id and aws_secret_access_key");
      }
      Credentials c;
      c.access_key_id = key->second;
      c.secret_access_key = secret->second;
      if (const auto token = profile->find("aws_session_token"); token != profile->end()) {
        c.session_token = token->second;
      }
      return c;
    }
    if (!profile_found && internal::ProfileNamedExplicitly()) {
      return InvalidArgumentError("AWS_PROFILE '" + name + "': no such profile in " +
                                  (credentials_path.empty() ? "~/.aws/credentials" : credentials_path) + " or " +
                                  (config_path.empty() ? "~/.aws/config" : config_path));
    }
    if (profile_found) {
      return NotFoundError("shared files: profile '" + name +
                           "' has no aws_access_key_id (role_arn, sso and credential_process profiles are not "
                           "supported)");
    }
    return NotFoundError("shared files: no profile '" + name + "'");
  }
};

// Walks the sources in order; the first that has credentials is remembered.
class ChainProvider final : public CredentialsProvider {
 public:
  explicit ChainProvider(std::vector<std::unique_ptr<CredentialsProvider>> sources) : sources_(std::move(sources)) {}

  StatusOr<Credentials> Get() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (chosen_ != nullptr) return chosen_->Get();
    std::string reasons;
    for (auto& source : sources_) {
      StatusOr<Credentials> got = source->Get();
      if (got.ok()) {
        chosen_ = source.get();
        return got;
      }
      if (got.status().code() != StatusCode::kNotFound) return got.status();
      reasons += "; " + got.status().message();
    }
    return NotFoundError("no AWS credentials found (" + reasons.substr(2) + ")");
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<CredentialsProvider>> sources_;
  CredentialsProvider* chosen_ = nullptr;  // one of sources_, once one has answered
};

}  // namespace

CredentialsProvider::~CredentialsProvider() = default;

std::unique_ptr<CredentialsProvider> StaticCredentials(Credentials credentials) {
  return std::make_unique<StaticProvider>(std::move(credentials));
}

std::unique_ptr<CredentialsProvider> EnvironmentCredentials() { return std::make_unique<EnvironmentProvider>(); }

std::unique_ptr<CredentialsProvider> SharedFileCredentials() {
  // Files are read once; their credentials do not expire.
  return internal::Cached(std::make_unique<SharedFileProvider>());
}

std::unique_ptr<CredentialsProvider> DefaultCredentialsChain() {
  std::vector<std::unique_ptr<CredentialsProvider>> sources;
  sources.push_back(EnvironmentCredentials());
  sources.push_back(SharedFileCredentials());
  sources.push_back(ContainerCredentials());
  sources.push_back(InstanceMetadataCredentials());
  return std::make_unique<ChainProvider>(std::move(sources));
}

std::string ResolveRegion() {
  for (const char* name : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
    if (std::string value = Getenv(name); !value.empty()) return value;
  }
  const std::optional<internal::Profile> profile =
      internal::ReadProfile(internal::ConfigFilePath(), internal::SelectedProfileName(), /*config_style=*/true);
  if (profile) {
    if (const auto it = profile->find("region"); it != profile->end() && !it->second.empty()) return it->second;
  }
  return "us-east-1";
}

}  // namespace litmus::aws
