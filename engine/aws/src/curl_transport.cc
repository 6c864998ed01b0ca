// NewCurlTransport (http.h): libcurl easy handles kept in a pool, so connections (keep-alive,
// TLS sessions) are reused across requests and threads never share a handle.
// libcurl itself is loaded by the first transport (curl_library.h).
// Thread-safety: Send may be called from any number of threads; each call borrows its own handle.
#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cstring>
#include <span>
#include <mutex>
#include <strings.h>
#include <string>
#include <vector>

#include "curl_library.h"
#include "litmus/aws/http.h"
#include "litmus/aws/sigv4.h"

namespace litmus::aws {
namespace {

// Larger reserves are left to the string's own growth (a wrong Content-Length must not make us
// allocate gigabytes up front).
constexpr uint64_t kMaxReserve = 256ull << 20;

// Where the body of one transfer goes: HttpResponse::body, or the caller's buffer for a 206.
struct Transfer {
  HttpResponse* response;
  std::span<std::byte> buffer;
  long status = 0;  // from the latest status line
  size_t buffered = 0;
  bool overflow = false;
};

size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (!transfer->buffer.empty() && transfer->status == 206) {
    if (n > transfer->buffer.size() - transfer->buffered) {
      transfer->overflow = true;
      return 0;  // aborts the transfer
    }
    std::memcpy(transfer->buffer.data() + transfer->buffered, data, n);
    transfer->buffered += n;
    return n;
  }
  transfer->response->body.append(data, n);
  return n;
}

// Collects "Name: value" lines; a new status line (after 100 Continue or a redirect) starts over.
size_t AppendHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  HttpResponse* response = transfer->response;
  std::string_view line(data, size * count);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.starts_with("HTTP/")) {
    response->headers.clear();
    const size_t space = line.find(' ');
    transfer->status = 0;
    if (space != std::string_view::npos) {
      std::from_chars(line.data() + space + 1, line.data() + line.size(), transfer->status);
    }
    return size * count;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * count;
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  // Size the body once, so large answers are not copied again and again as they grow.
  const bool to_buffer = !transfer->buffer.empty() && transfer->status == 206;
  if (name == "content-length" && !to_buffer) {
    uint64_t length = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
    if (ec == std::errc() && length <= kMaxReserve) response->body.reserve(static_cast<size_t>(length));
  }
  response->headers.emplace_back(std::move(name), std::string(value));
  return size * count;
}

class CurlTransport final : public HttpTransport {
 public:
  explicit CurlTransport(CurlTransportOptions options) : options_(options), library_(LoadCurlLibrary()) {}
  ~CurlTransport() override {
    for (CURL* handle : idle_) curl().easy_cleanup(handle);
  }

  StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    if (!library_.ok()) return library_.status();
    CURL* handle = Acquire();
    if (handle == nullptr) return InternalError("curl_easy_init failed");
    HttpResponse response;
    Transfer transfer{.response = &response, .buffer = request.response_buffer};
    const CURLcode code = Perform(handle, request, &transfer);
    Release(handle);
    if (transfer.overflow) {
      return UnavailableError(request.method + " " + RedactSecrets(request.url) +
                              ": the answer is longer than the requested range");
    }
    if (code != CURLE_OK) {
      return UnavailableError(request.method + " " + RedactSecrets(request.url) + ": " + curl().easy_strerror(code));
    }
    if (!request.response_buffer.empty() && transfer.status == 206) response.buffered_bytes = transfer.buffered;
    return response;
  }

 private:
  CURL* Acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        CURL* handle = idle_.back();
        idle_.pop_back();
        return handle;
      }
    }
    return curl().easy_init();
  }

  void Release(CURL* handle) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(handle);
  }

  // REQUIRES: library_.ok() (idle_ holds handles only then).
  const CurlLibrary& curl() const { return **library_; }

  CURLcode Perform(CURL* handle, const HttpRequest& request, Transfer* transfer) {
    const CurlLibrary& curl = this->curl();
    HttpResponse* response = transfer->response;
    // Reset clears the options but keeps the handle's connection cache and TLS sessions.
    curl.easy_reset(handle);
    curl.easy_setopt(handle, CURLOPT_URL, request.url.c_str());
    // Send the path as signed: curl would otherwise squash "/./" and "/../", which are legal in an
    // S3 key ("a/./b"), and the server would see another key under a signature that no longer fits.
    curl.easy_setopt(handle, CURLOPT_PATH_AS_IS, 1L);
    curl.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl.easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
    curl.easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
    curl.easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, 1024L);
    curl.easy_setopt(handle, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options_.low_speed_time.count()));
    curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, AppendBody);
    curl.easy_setopt(handle, CURLOPT_WRITEDATA, transfer);
    curl.easy_setopt(handle, CURLOPT_HEADERFUNCTION, AppendHeader);
    curl.easy_setopt(handle, CURLOPT_HEADERDATA, transfer);
    // Fewer, larger reads from the socket for megabyte-sized answers (curl's default is 16 KiB).
    curl.easy_setopt(handle, CURLOPT_BUFFERSIZE, 512L * 1024);
    // Header values are signed; curl must not add an Expect or change the content type.
    curl_slist* headers = curl.slist_append(nullptr, "Expect:");
    bool has_content_type = false;
    for (const auto& [name, value] : request.headers) {
      if (name.size() == 12 && strncasecmp(name.c_str(), "content-type", 12) == 0) has_content_type = true;
      // "Name;" is curl's spelling of a header with an empty value ("Name:" would remove it).
      const std::string line = value.empty() ? name + ";" : name + ": " + value;
      headers = curl.slist_append(headers, line.c_str());
    }
    if (!has_content_type) headers = curl.slist_append(headers, "Content-Type:");
    curl.easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
    if (request.method == "GET") {
      curl.easy_setopt(handle, CURLOPT_HTTPGET, 1L);
    } else if (request.method == "HEAD") {
      curl.easy_setopt(handle, CURLOPT_NOBODY, 1L);
    } else {
      curl.easy_setopt(handle, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      if (!request.body.empty() || request.method == "PUT" || request.method == "POST") {
        curl.easy_setopt(handle, CURLOPT_POSTFIELDS, request.body.data());
        curl.easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      }
    }
    const CURLcode code = curl.easy_perform(handle);
    curl.slist_free_all(headers);
    if (code == CURLE_OK) curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &response->status);
    return code;
  }

  const CurlTransportOptions options_;
  const StatusOr<const CurlLibrary*> library_;
  std::mutex mu_;
  std::vector<CURL*> idle_;  // handles not in use; each keeps its own connection cache
};

}  // namespace

std::unique_ptr<HttpTransport> NewCurlTransport(CurlTransportOptions options) {
  return std::make_unique<CurlTransport>(options);
}

}  // namespace litmus::aws
