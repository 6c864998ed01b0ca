// Caching wrapper for credential providers (credentials_cache.h).
#include "credentials_cache.h"

#include <spdlog/spdlog.h>

#include <mutex>
#include <optional>

namespace litmus::aws::internal {
namespace {

class CachingProvider final : public CredentialsProvider {
 public:
  explicit CachingProvider(std::unique_ptr<CredentialsProvider> source) : source_(std::move(source)) {}

  StatusOr<Credentials> Get() override {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::system_clock::now();
    if (cached_ && (!cached_->expiration || now < *cached_->expiration - kRefreshBeforeExpiry)) return *cached_;
    StatusOr<Credentials> fresh = source_->Get();
    if (fresh.ok()) {
      cached_ = *fresh;
      return fresh;
    }
    if (cached_ && cached_->expiration && now < *cached_->expiration) {
      spdlog::warn("refreshing AWS credentials failed ({}); using the current ones until they expire",
                   fresh.status().message());
      return *cached_;
    }
    return fresh.status();
  }

 private:
  std::mutex mu_;
  std::unique_ptr<CredentialsProvider> source_;
  std::optional<Credentials> cached_;
};

}  // namespace

std::unique_ptr<CredentialsProvider> Cached(std::unique_ptr<CredentialsProvider> source) {
  return std::make_unique<CachingProvider>(std::move(source));
}

}  // namespace litmus::aws::internal
