// S3 REST operations (s3_client.h).
#include "litmus/aws/s3_client.h"

#include <charconv>
#include <cstring>

namespace litmus::aws {
namespace {

constexpr std::string_view kScheme = "s3://";

bool IsIpv4(std::string_view name) {
  int dots = 0;
  for (char c : name) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots == 3;
}

std::optional<uint64_t> ParseUint(std::string_view text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

bool IsS3Uri(std::string_view path) { return path.starts_with(kScheme); }

Status ValidateBucketName(std::string_view bucket) {
  const std::string quoted = "invalid S3 bucket name '" + std::string(bucket) + "': ";
  if (bucket.size() < 3 || bucket.size() > 63) return InvalidArgumentError(quoted + "must be 3 to 63 characters");
  for (char c : bucket) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) {
      return InvalidArgumentError(quoted + "only lowercase letters, digits, '.' and '-' are allowed");
    }
  }
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(bucket.front()) || !alnum(bucket.back())) {
    return InvalidArgumentError(quoted + "must start and end with a letter or digit");
  }
  if (bucket.find("..") != std::string_view::npos) return InvalidArgumentError(quoted + "must not contain '..'");
  if (IsIpv4(bucket)) return InvalidArgumentError(quoted + "must not be an IP address");
  return OkStatus();
}

StatusOr<S3Location> ParseS3Uri(std::string_view uri) {
  if (!IsS3Uri(uri)) return InvalidArgumentError("not an s3:// URI: " + std::string(uri));
  std::string_view rest = uri.substr(kScheme.size());
  const size_t slash = rest.find('/');
  S3Location location;
  location.bucket = std::string(rest.substr(0, slash));
  if (location.bucket.empty()) return InvalidArgumentError(std::string(uri) + ": no bucket name after s3://");
  if (Status s = ValidateBucketName(location.bucket); !s.ok()) return s.WithContext(std::string(uri));
  if (slash != std::string_view::npos) location.key = std::string(rest.substr(slash + 1));
  return location;
}

std::string S3Uri(std::string_view bucket, std::string_view key) {
  std::string out(kScheme);
  out += bucket;
  if (!key.empty()) {
    out += '/';
    out += key;
  }
  return out;
}

S3Client::S3Client(AwsClient* client, S3Addressing addressing) : client_(client), addressing_(addressing) {}

std::string S3Client::Url(const std::string& bucket, const std::string& key) const {
  const std::string& endpoint = client_->endpoint();
  std::string url;
  if (addressing_ == S3Addressing::kVirtualHosted && bucket.find('.') == std::string::npos) {
    const size_t scheme_end = endpoint.find("://");
    const size_t host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
    url = endpoint.substr(0, host_start) + bucket + "." + endpoint.substr(host_start) + "/";
  } else {
    url = endpoint + "/" + bucket + "/";
  }
  url += UriEncode(key, /*keep_slash=*/true);
  return url;
}

Status S3Client::ErrorStatus(const HttpResponse& response, std::string_view operation, const std::string& bucket,
                             const std::string& key) const {
  const std::string what = std::string(operation) + " " + S3Uri(bucket, key);
  const std::string code = AwsErrorCode(response);
  const std::string detail = DescribeAwsError(response);
  if (code == "NoSuchBucket") {
    return NotFoundError("bucket '" + bucket + "' does not exist (" + detail + "; " + what + ")");
  }
  if (response.status == 404) return NotFoundError(what + ": no such object (" + detail + ")");
  if (response.status == 403) {
    std::string hint;
    if (code == "SignatureDoesNotMatch" || code == "InvalidAccessKeyId") {
      hint = "; check the AWS credentials (secret key, access key id)";
    } else if (code == "AccessDenied") {
      hint = "; check that the credentials may read bucket '" + bucket + "'";
    }
    return FailedPreconditionError(what + ": access denied (" + detail + ")" + hint);
  }
  if (response.status == 301 || code == "PermanentRedirect" || code == "AuthorizationHeaderMalformed") {
    const std::string_view region = response.Header("x-amz-bucket-region");
    return FailedPreconditionError(what + ": bucket '" + bucket + "' is in another region" +
                                   (region.empty() ? "" : " (" + std::string(region) + ")") +
                                   "; set AWS_REGION (" + detail + ")");
  }
  if (response.status >= 500 || IsRetryableResponse(response)) {
    return UnavailableError(what + ": " + detail + " (after " + std::to_string(client_->retry_policy().max_attempts) +
                            " attempts)");
  }
  return InvalidArgumentError(what + ": " + detail);
}

StatusOr<S3ListPage> S3Client::ListPage(const std::string& bucket, const std::string& prefix,
                                        const std::string& start_after, const std::string& continuation_token,
                                        int max_keys) {
  // encoding-type=url: keys come back percent-encoded, so every byte a key may hold (control
  // characters included, which XML 1.0 cannot carry) survives; ParseListObjectsV2 decodes them.
  std::string url = Url(bucket, "") + "?list-type=2&encoding-type=url&max-keys=" + std::to_string(max_keys);
  if (!prefix.empty()) url += "&prefix=" + UriEncode(prefix);
  if (!start_after.empty()) url += "&start-after=" + UriEncode(start_after);
  if (!continuation_token.empty()) url += "&continuation-token=" + UriEncode(continuation_token);
  LITMUS_ASSIGN_OR_RETURN(HttpResponse response,
                          client_->Send({.method = "GET", .url = std::move(url), .headers = {}, .body = ""}));
  if (response.status != 200) return ErrorStatus(response, "listing", bucket, prefix);
  StatusOr<S3ListPage> page = ParseListObjectsV2(response.body);
  if (!page.ok()) return page.status().WithContext("listing " + S3Uri(bucket, prefix));
  return page;
}

Status S3Client::ListAll(const std::string& bucket, const std::string& prefix, const std::string& start_after,
                         std::vector<S3Object>* out) {
  std::string token;
  while (true) {
    LITMUS_ASSIGN_OR_RETURN(S3ListPage page, ListPage(bucket, prefix, token.empty() ? start_after : "", token));
    for (S3Object& object : page.objects) out->push_back(std::move(object));
    if (!page.truncated) return OkStatus();
    if (page.next_continuation_token == token) {
      return UnavailableError("listing " + S3Uri(bucket, prefix) + ": the server repeated its continuation token");
    }
    token = std::move(page.next_continuation_token);
  }
}

StatusOr<std::optional<uint64_t>> S3Client::Head(const std::string& bucket, const std::string& key) {
  LITMUS_ASSIGN_OR_RETURN(HttpResponse response,
                          client_->Send({.method = "HEAD", .url = Url(bucket, key), .headers = {}, .body = ""}));
  if (response.status == 404) return std::optional<uint64_t>();
  if (response.status != 200) return ErrorStatus(response, "HEAD", bucket, key);
  const std::optional<uint64_t> size = ParseUint(response.Header("content-length"));
  if (!size) return UnavailableError("HEAD " + S3Uri(bucket, key) + ": answer without a valid Content-Length");
  return std::optional<uint64_t>(*size);
}

StatusOr<size_t> S3Client::GetRange(const std::string& bucket, const std::string& key, uint64_t offset,
                                    std::span<std::byte> out) {
  if (out.empty()) return size_t{0};
  const std::string range = "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + out.size() - 1);
  LITMUS_ASSIGN_OR_RETURN(HttpResponse response,
                          client_->Send({.method = "GET", .url = Url(bucket, key), .headers = {{"Range", range}},
                                         .body = "", .response_buffer = out}));
  std::string_view bytes;
  if (response.status == 206) {
    const std::string expected_start = "bytes " + std::to_string(offset) + "-";
    if (!response.Header("content-range").starts_with(expected_start) || response.body.size() > out.size()) {
      return UnavailableError("GET " + S3Uri(bucket, key) + " " + range + ": the answer is not that range");
    }
    if (response.buffered_bytes) return *response.buffered_bytes;  // already in `out`
    bytes = response.body;
  } else if (response.status == 200) {
    // The server ignored the range (allowed by RFC 9110): take our slice of the whole object.
    bytes = offset >= response.body.size() ? std::string_view()
                                           : std::string_view(response.body).substr(offset, out.size());
  } else if (response.status == 416) {
    return size_t{0};  // the range starts at or past the end of the object
  } else {
    return ErrorStatus(response, "GET", bucket, key);
  }
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return bytes.size();
}

StatusOr<std::string> S3Client::GetObject(const std::string& bucket, const std::string& key) {
  LITMUS_ASSIGN_OR_RETURN(HttpResponse response,
                          client_->Send({.method = "GET", .url = Url(bucket, key), .headers = {}, .body = ""}));
  if (response.status != 200) return ErrorStatus(response, "GET", bucket, key);
  return std::move(response.body);
}

Status S3Client::Put(const std::string& bucket, const std::string& key, std::string_view body) {
  LITMUS_ASSIGN_OR_RETURN(HttpResponse response, client_->Send({.method = "PUT", .url = Url(bucket, key),
                                                                .headers = {}, .body = std::string(body)}));
  if (response.status != 200) return ErrorStatus(response, "PUT", bucket, key);
  return OkStatus();
}

Status S3Client::Delete(const std::string& bucket, const std::string& key) {
  LITMUS_ASSIGN_OR_RETURN(HttpResponse response,
                          client_->Send({.method = "DELETE", .url = Url(bucket, key), .headers = {}, .body = ""}));
  if (response.status != 204 && response.status != 200 && response.status != 404) {
    return ErrorStatus(response, "DELETE", bucket, key);
  }
  return OkStatus();
}

Status S3Client::CreateBucket(const std::string& bucket) {
  LITMUS_ASSIGN_OR_RETURN(HttpResponse response,
                          client_->Send({.method = "PUT", .url = Url(bucket, ""), .headers = {}, .body = ""}));
  if (response.status == 200 || AwsErrorCode(response) == "BucketAlreadyOwnedByYou") return OkStatus();
  return ErrorStatus(response, "creating bucket", bucket, "");
}

}  // namespace litmus::aws
