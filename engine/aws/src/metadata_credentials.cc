// Container (ECS/SageMaker) and EC2 IMDSv2 credential providers (credentials.h). Both answer
// with the same JSON document (AccessKeyId, SecretAccessKey, Token, Expiration).
#include <cctype>
#include <ctime>
#include <iomanip>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "credentials_cache.h"
#include "litmus/aws/credentials.h"
#include "litmus/aws/http.h"

namespace litmus::aws {
namespace {

constexpr std::string_view kContainerHost = "http://169.254.170.2";
constexpr std::string_view kImdsDefaultEndpoint = "http://169.254.169.254";

std::string Getenv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// "2019-05-29T00:21:43Z" (optionally with fractional seconds) -> time point.
std::optional<std::chrono::system_clock::time_point> ParseIso8601(const std::string& text) {
  std::tm tm{};
  std::istringstream in(text);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

// Parses the credentials document; `source` names it in errors (never the secrets).
StatusOr<Credentials> ParseCredentialsDocument(const std::string& body, const std::string& source) {
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return UnavailableError(source + ": the credentials answer is not a JSON object");
  auto text = [&](const char* key) -> std::string {
    const auto it = json.find(key);
    return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (const std::string code = text("Code"); !code.empty() && code != "Success") {
    return UnavailableError(source + ": credentials answer has Code " + code);
  }
  Credentials c;
  c.access_key_id = text("AccessKeyId");
  c.secret_access_key = text("SecretAccessKey");
  c.session_token = text("Token");
  if (c.access_key_id.empty() || c.secret_access_key.empty()) {
    return UnavailableError(source + ": the credentials answer lacks AccessKeyId or SecretAccessKey");
  }
  if (const std::string expiration = text("Expiration"); !expiration.empty()) {
    c.expiration = ParseIso8601(expiration);
    if (!c.expiration) return UnavailableError(source + ": cannot parse Expiration '" + expiration + "'");
  }
  return c;
}

// Owns a short-timeout curl transport unless the caller injected one.
class TransportHolder {
 public:
  TransportHolder(HttpTransport* injected, CurlTransportOptions options)
      : owned_(injected == nullptr ? NewCurlTransport(options) : nullptr),
        transport_(injected == nullptr ? owned_.get() : injected) {}
  HttpTransport* get() const { return transport_; }

 private:
  std::unique_ptr<HttpTransport> owned_;
  HttpTransport* transport_;
};

// Hosts a FULL_URI may use over plain http (the token travels with the request).
bool IsAllowedHttpHost(std::string_view url) {
  url.remove_prefix(std::string_view("http://").size());
  const std::string_view host = url.substr(0, url.find_first_of(":/"));
  return host == "localhost" || host.starts_with("127.") || host == "[::1]" || host == "169.254.170.2" ||
         host == "169.254.170.23" || url.starts_with("[fd00:ec2::23]");
}

class ContainerProvider final : public CredentialsProvider {
 public:
  explicit ContainerProvider(HttpTransport* transport)
      : transport_(transport, {.connect_timeout = std::chrono::milliseconds(2000),
                               .request_timeout = std::chrono::milliseconds(5000),
                               .low_speed_time = std::chrono::seconds(5)}) {}

  StatusOr<Credentials> Get() override {
    const std::string relative = Getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    const std::string full = Getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    HttpRequest request{.method = "GET", .url = "", .headers = {}, .body = ""};
    if (!relative.empty()) {
      request.url = std::string(kContainerHost) + (relative.starts_with('/') ? "" : "/") + relative;
    } else if (!full.empty()) {
      if (!full.starts_with("https://") && !(full.starts_with("http://") && IsAllowedHttpHost(full))) {
        return InvalidArgumentError(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI must be https or a loopback/ECS address over http");
      }
      request.url = full;
      std::string token = Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
      if (const std::string file = Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); !file.empty()) {
        std::ifstream in(file, std::ios::binary);
        if (!in) return InvalidArgumentError("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE " + file + ": cannot read");
        std::stringstream buffer;
        buffer << in.rdbuf();
        token = buffer.str();
        while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
      }
      if (token.find_first_of("\r\n") != std::string::npos) {
        return InvalidArgumentError("the container authorization token contains a line break");
      }
      if (!token.empty()) request.headers.emplace_back("Authorization", token);
    } else {
      return NotFoundError("container: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and _FULL_URI are not set");
    }
    const std::string source = "container credentials endpoint";
    StatusOr<HttpResponse> response = transport_.get()->Send(request);
    if (!response.ok()) return UnavailableError(source + ": " + response.status().message());
    if (response->status != 200) {
      return UnavailableError(source + " answered HTTP " + std::to_string(response->status));
    }
    return ParseCredentialsDocument(response->body, source);
  }

 private:
  TransportHolder transport_;
};

class InstanceMetadataProvider final : public CredentialsProvider {
 public:
  explicit InstanceMetadataProvider(HttpTransport* transport)
      : transport_(transport, {.connect_timeout = std::chrono::milliseconds(1000),
                               .request_timeout = std::chrono::milliseconds(2000),
                               .low_speed_time = std::chrono::seconds(2)}) {}

  StatusOr<Credentials> Get() override {
    std::string disabled = Getenv("AWS_EC2_METADATA_DISABLED");
    for (char& c : disabled) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (disabled == "true") return NotFoundError("instance metadata: disabled by AWS_EC2_METADATA_DISABLED");
    std::string endpoint = Getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    if (endpoint.empty()) endpoint = kImdsDefaultEndpoint;
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();

    // IMDSv2: a session token first; no answer at all means "not on EC2".
    StatusOr<HttpResponse> token = transport_.get()->Send(
        {.method = "PUT",
         .url = endpoint + "/latest/api/token",
         .headers = {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}},
         .body = ""});
    if (!token.ok()) return NotFoundError("instance metadata: no answer from " + endpoint);
    if (token->status != 200) {
      return NotFoundError("instance metadata: token request answered HTTP " + std::to_string(token->status));
    }
    const std::vector<std::pair<std::string, std::string>> auth = {{"X-aws-ec2-metadata-token", token->body}};
    const std::string base = endpoint + "/latest/meta-data/iam/security-credentials/";
    StatusOr<HttpResponse> roles = transport_.get()->Send({.method = "GET", .url = base, .headers = auth, .body = ""});
    if (!roles.ok()) return UnavailableError("instance metadata: " + roles.status().message());
    if (roles->status == 404) return NotFoundError("instance metadata: the instance has no IAM role");
    if (roles->status != 200) {
      return UnavailableError("instance metadata: role lookup answered HTTP " + std::to_string(roles->status));
    }
    std::string role = roles->body.substr(0, roles->body.find_first_of("\r\n"));
    if (role.empty()) return NotFoundError("instance metadata: the instance has no IAM role");
    StatusOr<HttpResponse> document =
        transport_.get()->Send({.method = "GET", .url = base + UriEncode(role), .headers = auth, .body = ""});
    if (!document.ok()) return UnavailableError("instance metadata: " + document.status().message());
    if (document->status != 200) {
      return UnavailableError("instance metadata: credentials of role " + role + " answered HTTP " +
                              std::to_string(document->status));
    }
    return ParseCredentialsDocument(document->body, "instance metadata (role " + role + ")");
  }

 private:
  TransportHolder transport_;
};

}  // namespace

std::unique_ptr<CredentialsProvider> ContainerCredentials(HttpTransport* transport) {
  return internal::Cached(std::make_unique<ContainerProvider>(transport));
}

std::unique_ptr<CredentialsProvider> InstanceMetadataCredentials(HttpTransport* transport) {
  return internal::Cached(std::make_unique<InstanceMetadataProvider>(transport));
}

}  // namespace litmus::aws
