// Caching wrapper for credential providers whose answers are expensive (files, HTTP) or expire
// (container and instance credentials). Internal to litmus_aws.
// Thread-safety: the returned provider's Get is safe to call concurrently (one refresh at a time).
#pragma once

#include <chrono>
#include <memory>

#include "litmus/aws/credentials.h"

namespace litmus::aws::internal {

// How long before expiration cached credentials are refreshed.
inline constexpr std::chrono::minutes kRefreshBeforeExpiry{5};

// Returns the last successful answer of `source` until `kRefreshBeforeExpiry` before its
// expiration (forever if it has none). If a refresh fails while the cached credentials are still
// valid, those are returned (and a warning logged). Failures are never cached.
std::unique_ptr<CredentialsProvider> Cached(std::unique_ptr<CredentialsProvider> source);

}  // namespace litmus::aws::internal
