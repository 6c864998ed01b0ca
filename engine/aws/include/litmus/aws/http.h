// Plain HTTP(S) requests for the AWS clients: request/response values and a transport
// interface, so tests can inject faults or count requests. NewCurlTransport is the real one.
// Thread-safety: HttpTransport::Send is safe to call concurrently.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "litmus/status.h"

namespace litmus::aws {

struct HttpRequest {
  std::string method;  // "GET", "PUT", "POST", "HEAD", "DELETE"
  std::string url;     // absolute, query already encoded ("http://host:port/path?a=b")
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Optional, for ranged GETs: a transport may write the body of a 206 answer straight here
  // instead of into HttpResponse::body (saving a copy of every tensor read). Borrowed for the call.
  std::span<std::byte> response_buffer = {};
};

struct HttpResponse {
  long status = 0;  // HTTP status code
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  // Set when the body went to HttpRequest::response_buffer: how many bytes were written there.
  std::optional<size_t> buffered_bytes = std::nullopt;

  // Value of the first header named `name` (case-insensitive), or "" if absent.
  std::string_view Header(std::string_view name) const;
};

class HttpTransport {
 public:
  virtual ~HttpTransport();
  // Sends one request and returns whatever status the server answered (4xx/5xx included).
  // Unavailable for connection errors, resets and timeouts (no answer at all), and for a 206
  // body larger than HttpRequest::response_buffer.
  virtual StatusOr<HttpResponse> Send(const HttpRequest& request) = 0;
};

struct CurlTransportOptions {
  std::chrono::milliseconds connect_timeout{5000};
  // Whole-request limit; also aborts a transfer slower than 1 KiB/s for low_speed_time.
  std::chrono::milliseconds request_timeout{120000};
  std::chrono::seconds low_speed_time{30};
};

// A libcurl transport that reuses connections: each thread keeps its own easy handle (and so its
// own keep-alive connection cache) for as long as the transport lives.
std::unique_ptr<HttpTransport> NewCurlTransport(CurlTransportOptions options = {});

// RFC 3986 percent-encoding of everything but unreserved characters (A-Z a-z 0-9 - _ . ~);
// with keep_slash, '/' is kept too (for URL paths and S3 keys).
std::string UriEncode(std::string_view text, bool keep_slash = false);

}  // namespace litmus::aws
