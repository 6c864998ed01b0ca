// AwsClient (aws_client.h): signing, retries with full-jitter exponential backoff, error codes
// and endpoint resolution.
#include "litmus/aws/aws_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "litmus/aws/sigv4.h"
#include "litmus/aws/xml.h"

namespace litmus::aws {
namespace {

constexpr size_t kMaxMessageChars = 200;

std::chrono::milliseconds BackoffDelay(const RetryPolicy& policy, int retry) {
  // Full jitter: uniform over [0, min(cap, base * 2^(retry-1))].
  const int shift = std::min(retry - 1, 30);
  const int64_t ceiling =
      std::min<int64_t>(policy.max_delay.count(), policy.base_delay.count() * (int64_t{1} << shift));
  if (ceiling <= 0) return std::chrono::milliseconds(0);
  thread_local std::mt19937_64 rng(std::random_device{}());
  return std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(0, ceiling)(rng));
}

std::string OneLine(std::string text) {
  std::replace_if(text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  if (text.size() > kMaxMessageChars) text = text.substr(0, kMaxMessageChars) + "...";
  return text;
}

}  // namespace

AwsClient::AwsClient(HttpTransport* transport, CredentialsProvider* credentials, std::string region,
                     std::string service, std::string endpoint, RetryPolicy retry)
    : transport_(transport),
      credentials_(credentials),
      region_(std::move(region)),
      service_(std::move(service)),
      endpoint_(std::move(endpoint)),
      retry_(retry) {
  while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();
  retry_.max_attempts = std::max(1, retry_.max_attempts);
}

uint64_t AwsClient::attempts() const { return attempts_.load(std::memory_order_relaxed); }

StatusOr<HttpResponse> AwsClient::Send(HttpRequest request) {
  Status last_error;
  for (int attempt = 1;; ++attempt) {
    LITMUS_ASSIGN_OR_RETURN(Credentials credentials, credentials_->Get());
    HttpRequest signed_request = request;
    SignRequestV4(signed_request, credentials, region_, service_, std::chrono::system_clock::now());
    attempts_.fetch_add(1, std::memory_order_relaxed);
    StatusOr<HttpResponse> response = transport_->Send(signed_request);
    std::string why;
    if (!response.ok()) {
      if (response.status().code() != StatusCode::kUnavailable) return response.status();
      why = response.status().message();
    } else if (IsRetryableResponse(*response)) {
      why = DescribeAwsError(*response);
    } else {
      return response;
    }
    if (attempt >= retry_.max_attempts) {
      if (!response.ok()) {
        return UnavailableError(RedactSecrets(why) + " (after " + std::to_string(attempt) + " attempts)");
      }
      return response;
    }
    const std::chrono::milliseconds delay = BackoffDelay(retry_, attempt);
    spdlog::debug("{} {} {}: {}; retry {}/{} in {} ms", service_, request.method, RedactSecrets(request.url),
                  RedactSecrets(why), attempt, retry_.max_attempts - 1, delay.count());
    std::this_thread::sleep_for(delay);
  }
}

bool IsRetryableResponse(const HttpResponse& response) {
  if (response.status >= 500 || response.status == 429) return true;
  if (response.status < 400) return false;
  const std::string code = AwsErrorCode(response);
  return code == "SlowDown" || code == "Throttling" || code == "ThrottlingException" ||
         code == "ThrottledException" || code == "RequestThrottledException" ||
         code == "TooManyRequestsException" || code == "ProvisionedThroughputExceededException" ||
         code == "RequestLimitExceeded" || code == "RequestThrottled" || code == "RequestTimeout" ||
         code == "RequestTimeoutException" || code == "PriorRequestNotComplete" ||
         code == "TransactionInProgressException" || code == "EC2ThrottledException";
}

std::string AwsErrorCode(const HttpResponse& response) {
  const std::string_view body = response.body;
  const size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && body[first] == '{') {
    const nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (json.is_object()) {
      for (const char* key : {"__type", "code", "Code"}) {
        const auto it = json.find(key);
        if (it != json.end() && it->is_string()) {
          std::string code = it->get<std::string>();
          if (const size_t hash = code.rfind('#'); hash != std::string::npos) code = code.substr(hash + 1);
          if (const size_t colon = code.find(':'); colon != std::string::npos) code = code.substr(0, colon);
          return code;
        }
      }
    }
  } else if (std::optional<AwsXmlError> error = ParseAwsXmlError(body); error && !error->code.empty()) {
    return error->code;
  }
  std::string header(response.Header("x-amzn-errortype"));
  if (const size_t colon = header.find(':'); colon != std::string::npos) header = header.substr(0, colon);
  return header;
}

std::string DescribeAwsError(const HttpResponse& response) {
  std::string out = "HTTP " + std::to_string(response.status);
  const std::string code = AwsErrorCode(response);
  if (!code.empty()) out += " " + code;
  std::string message;
  const std::string_view body = response.body;
  const size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && body[first] == '{') {
    const nlohmann::json json = nlohmann::json::parse(body, nullptr, false);
    if (json.is_object()) {
      for (const char* key : {"message", "Message"}) {
        const auto it = json.find(key);
        if (it != json.end() && it->is_string()) message = it->get<std::string>();
      }
    }
  } else if (std::optional<AwsXmlError> error = ParseAwsXmlError(body)) {
    message = std::move(error->message);
  }
  if (!message.empty()) out += ": " + OneLine(message);
  return RedactSecrets(out);
}

std::string ResolveEndpoint(std::string_view service_env_suffix, std::string_view default_host_pattern,
                            std::string_view region) {
  std::string endpoint;
  const std::string specific = "AWS_ENDPOINT_URL_" + std::string(service_env_suffix);
  if (const char* value = std::getenv(specific.c_str()); value != nullptr && *value != '\0') {
    endpoint = value;
  } else if (const char* general = std::getenv("AWS_ENDPOINT_URL"); general != nullptr && *general != '\0') {
    endpoint = general;
  } else {
    std::string host(default_host_pattern);
    for (size_t at = host.find("{region}"); at != std::string::npos; at = host.find("{region}")) {
      host.replace(at, 8, region);
    }
    endpoint = "https://" + host;
  }
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  return endpoint;
}

}  // namespace litmus::aws
