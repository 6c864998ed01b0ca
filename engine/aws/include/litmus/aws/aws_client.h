// AwsClient: one AWS service endpoint (S3, SageMaker, SNS...) with credentials, SigV4 signing
// and retries (exponential backoff with full jitter on 5xx, 429, throttling and transport
// errors). Protocol code (S3 REST, JSON 1.1, query) is built on top of Send.
// Thread-safety: Send is safe to call concurrently; the transport and provider must be too.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "litmus/aws/credentials.h"
#include "litmus/aws/http.h"
#include "litmus/status.h"

namespace litmus::aws {

struct RetryPolicy {
  int max_attempts = 8;  // total attempts, the first included; >= 1
  std::chrono::milliseconds base_delay{100};
  std::chrono::milliseconds max_delay{20000};
  // Attempt n (n >= 1 retries) sleeps uniform[0, min(max_delay, base_delay * 2^(n-1))].
};

class AwsClient {
 public:
  // `transport` and `credentials` are borrowed and must outlive the client. `endpoint` is the
  // base URL without a trailing slash ("https://s3.us-east-1.amazonaws.com",
  // "http://127.0.0.1:7480"); request URLs are built by the caller from it (see endpoint()).
  AwsClient(HttpTransport* transport, CredentialsProvider* credentials, std::string region,
            std::string service, std::string endpoint, RetryPolicy retry = {});

  // Signs (a fresh signature per attempt) and sends `request`, retrying retryable failures.
  // Returns the final HTTP response whatever its status, once it is not retryable or attempts are
  // exhausted; Unavailable if the last attempt got no answer; the credentials' error if they
  // cannot be obtained. Never includes secrets in its messages or logs.
  StatusOr<HttpResponse> Send(HttpRequest request);

  const std::string& region() const { return region_; }
  const std::string& service() const { return service_; }
  const std::string& endpoint() const { return endpoint_; }
  const RetryPolicy& retry_policy() const { return retry_; }
  // Requests sent (attempts, retries included) since construction.
  uint64_t attempts() const;

 private:
  HttpTransport* transport_;
  CredentialsProvider* credentials_;
  std::string region_;
  std::string service_;
  std::string endpoint_;
  RetryPolicy retry_;
  std::atomic<uint64_t> attempts_{0};
};

// True when `response` should be retried: 5xx, 429, or an error code in the body such as
// SlowDown, Throttling, ThrottlingException, RequestTimeout, RequestLimitExceeded.
bool IsRetryableResponse(const HttpResponse& response);

// The AWS error code of an error response: <Code> of an XML body (S3, query protocol) or
// "__type" / "code" of a JSON body (JSON 1.0/1.1, text after '#' only), or x-amzn-ErrorType;
// "" when none is found.
std::string AwsErrorCode(const HttpResponse& response);

// One line for error messages: "HTTP 403 SignatureDoesNotMatch: <Message>" (message from the
// body when present, shortened). Never includes request headers, so no secrets.
std::string DescribeAwsError(const HttpResponse& response);

// The endpoint base URL for a service: AWS_ENDPOINT_URL_<service_env_suffix> (e.g.
// AWS_ENDPOINT_URL_S3), else AWS_ENDPOINT_URL, else "https://" + default_host_pattern with
// "{region}" replaced by `region` (e.g. "s3.{region}.amazonaws.com"). Trailing slashes are
// removed.
std::string ResolveEndpoint(std::string_view service_env_suffix, std::string_view default_host_pattern,
                            std::string_view region);

}  // namespace litmus::aws
