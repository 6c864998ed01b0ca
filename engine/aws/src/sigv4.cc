// AWS Signature Version 4 (sigv4.h) on OpenSSL's EVP SHA-256 and HMAC.
#include "litmus/aws/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <strings.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>
#include <map>
#include <vector>

namespace litmus::aws {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";

std::string Hex(const unsigned char* data, size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = kHex[data[i] >> 4];
    out[2 * i + 1] = kHex[data[i] & 15];
  }
  return out;
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), out.data(), &size);
  return std::string(reinterpret_cast<const char*>(out.data()), size);
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding; malformed escapes are kept literally.
std::string UriDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int hi = HexValue(text[i + 1]), lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

struct UrlParts {
  std::string scheme, host, path, query;  // host with ":port" unless it is the scheme's default
};

UrlParts SplitUrl(std::string_view url) {
  UrlParts parts;
  if (const size_t scheme_end = url.find("://"); scheme_end != std::string_view::npos) {
    parts.scheme = Lower(url.substr(0, scheme_end));
    url.remove_prefix(scheme_end + 3);
  }
  const size_t authority_end = url.find_first_of("/?");
  std::string_view authority = url.substr(0, authority_end);
  url.remove_prefix(authority_end == std::string_view::npos ? url.size() : authority_end);
  if ((parts.scheme == "http" && authority.ends_with(":80")) ||
      (parts.scheme == "https" && authority.ends_with(":443"))) {
    authority.remove_suffix(parts.scheme == "http" ? 3 : 4);
  }
  parts.host = Lower(authority);
  const size_t query_start = url.find('?');
  parts.path = std::string(url.substr(0, query_start));
  if (query_start != std::string_view::npos) parts.query = std::string(url.substr(query_start + 1));
  if (parts.path.empty()) parts.path = "/";
  return parts;
}

// RFC 3986 dot-segment removal with empty segments dropped (AWS's normalisation for every
// service but S3); a trailing slash is kept.
std::string NormalizePath(std::string_view path) {
  std::vector<std::string_view> segments;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(start, end - start);
    if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!segment.empty() && segment != ".") {
      segments.push_back(segment);
    }
    start = end + 1;
  }
  std::string out;
  for (std::string_view segment : segments) {
    out += '/';
    out += segment;
  }
  const bool trailing = path.ends_with('/') || path.ends_with("/.") || path.ends_with("/..");
  if (out.empty() || trailing) out += '/';
  return out;
}

std::string CanonicalQuery(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> params;
  size_t start = 0;
  while (start < query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view pair = query.substr(start, end - start);
    if (!pair.empty()) {
      const size_t eq = pair.find('=');
      const std::string_view name = pair.substr(0, eq);
      const std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
      params.emplace_back(UriEncode(UriDecode(name)), UriEncode(UriDecode(value)));
    }
    start = end + 1;
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out += '&';
    out += name;
    out += '=';
    out += value;
  }
  return out;
}

// Trims and collapses runs of spaces, as SigV4 requires for header values.
std::string CanonicalHeaderValue(std::string_view value) {
  std::string out;
  bool space = false;
  for (const char c : value) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// Headers a proxy or curl may change in flight; AWS's own signers leave them out too.
bool IsUnsignedHeader(std::string_view lower_name) {
  return lower_name == "user-agent" || lower_name == "expect" || lower_name == "x-amzn-trace-id" ||
         lower_name == "authorization";
}

bool HasHeader(const HttpRequest& request, std::string_view name) {
  return std::any_of(request.headers.begin(), request.headers.end(), [&](const auto& h) {
    return h.first.size() == name.size() && strncasecmp(h.first.data(), name.data(), name.size()) == 0;
  });
}

void SetHeader(HttpRequest& request, std::string_view name, std::string value) {
  std::erase_if(request.headers, [&](const auto& h) {
    return h.first.size() == name.size() && strncasecmp(h.first.data(), name.data(), name.size()) == 0;
  });
  request.headers.emplace_back(std::string(name), std::move(value));
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest.data(), &size, EVP_sha256(), nullptr);
  return Hex(digest.data(), size);
}

std::string AmzDateTime(std::chrono::system_clock::time_point now) {
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y%m%dT%H%M%SZ", &tm);
  return buffer;
}

std::string CanonicalRequest(const HttpRequest& request, std::string_view service, std::string_view payload_hash,
                             std::string* signed_headers) {
  const UrlParts url = SplitUrl(request.url);
  std::string path = url.path;
  if (service != "s3") path = UriEncode(NormalizePath(path), /*keep_slash=*/true);

  // Header names lower-cased and sorted (stable, so repeated headers keep their order).
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& [name, value] : request.headers) {
    std::string lower = Lower(name);
    if (IsUnsignedHeader(lower)) continue;
    headers.emplace_back(std::move(lower), CanonicalHeaderValue(value));
  }
  std::stable_sort(headers.begin(), headers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string canonical_headers, names;
  for (size_t i = 0; i < headers.size(); ++i) {
    if (i > 0 && headers[i].first == headers[i - 1].first) {
      canonical_headers.back() = ',';  // replaces the '\n' of the previous line
      canonical_headers += headers[i].second + "\n";
      continue;
    }
    canonical_headers += headers[i].first + ":" + headers[i].second + "\n";
    if (!names.empty()) names += ';';
    names += headers[i].first;
  }
  if (signed_headers != nullptr) *signed_headers = names;

  std::string out;
  out.reserve(256 + canonical_headers.size());
  out += request.method;
  out += '\n';
  out += path;
  out += '\n';
  out += CanonicalQuery(url.query);
  out += '\n';
  out += canonical_headers;
  out += '\n';
  out += names;
  out += '\n';
  out += payload_hash;
  return out;
}

std::string StringToSign(std::string_view amz_date, std::string_view region, std::string_view service,
                         std::string_view canonical_request) {
  std::string out(kAlgorithm);
  out += '\n';
  out += amz_date;
  out += '\n';
  out += amz_date.substr(0, 8);
  out += '/';
  out += region;
  out += '/';
  out += service;
  out += "/aws4_request\n";
  out += Sha256Hex(canonical_request);
  return out;
}

std::string SigningKey(std::string_view secret_access_key, std::string_view date, std::string_view region,
                       std::string_view service) {
  std::string key = "AWS4";
  key += secret_access_key;
  const std::string k_date = HmacSha256(key, date);
  const std::string k_region = HmacSha256(k_date, region);
  const std::string k_service = HmacSha256(k_region, service);
  return HmacSha256(k_service, "aws4_request");
}

std::string SignatureHex(std::string_view signing_key, std::string_view string_to_sign) {
  const std::string mac = HmacSha256(signing_key, string_to_sign);
  return Hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
}

void SignRequestV4(HttpRequest& request, const Credentials& credentials, std::string_view region,
                   std::string_view service, std::chrono::system_clock::time_point now) {
  if (!HasHeader(request, "host")) request.headers.emplace_back("Host", SplitUrl(request.url).host);
  const std::string amz_date = AmzDateTime(now);
  SetHeader(request, "x-amz-date", amz_date);
  std::string payload_hash;
  for (const auto& [name, value] : request.headers) {
    if (strcasecmp(name.c_str(), "x-amz-content-sha256") == 0) payload_hash = value;
  }
  if (payload_hash.empty()) {
    payload_hash = Sha256Hex(request.body);
    request.headers.emplace_back("x-amz-content-sha256", payload_hash);
  }
  if (!credentials.session_token.empty()) {
    SetHeader(request, "x-amz-security-token", credentials.session_token);
  }
  std::erase_if(request.headers, [](const auto& h) { return strcasecmp(h.first.c_str(), "authorization") == 0; });

  std::string signed_headers;
  const std::string canonical = CanonicalRequest(request, service, payload_hash, &signed_headers);
  const std::string to_sign = StringToSign(amz_date, region, service, canonical);
  const std::string date = amz_date.substr(0, 8);
  const std::string signature =
      SignatureHex(SigningKey(credentials.secret_access_key, date, region, service), to_sign);
  std::string authorization(kAlgorithm);
  authorization += " Credential=" + credentials.access_key_id + "/" + date + "/" + std::string(region) + "/" +
                   std::string(service) + "/aws4_request, SignedHeaders=" + signed_headers +
                   ", Signature=" + signature;
  request.headers.emplace_back("Authorization", std::move(authorization));
}

std::string RedactSecrets(std::string_view text) {
  // Header lines "Name: value" and query parameters "Name=value" whose values are secrets.
  static constexpr std::array<std::string_view, 5> kSecretNames = {
      "authorization", "x-amz-security-token", "x-amz-signature", "x-amz-credential", "aws_secret_access_key"};
  std::string out(text);
  const std::string lower = Lower(text);
  std::vector<std::pair<size_t, size_t>> spans;  // [value begin, value end)
  for (std::string_view name : kSecretNames) {
    size_t at = 0;
    while ((at = lower.find(name, at)) != std::string::npos) {
      size_t begin = at + name.size();
      at = begin;
      // The name must end here and be followed by ':' or '=' (spaces allowed around).
      while (begin < lower.size() && lower[begin] == ' ') ++begin;
      if (begin >= lower.size() || (lower[begin] != ':' && lower[begin] != '=')) continue;
      ++begin;
      while (begin < lower.size() && lower[begin] == ' ') ++begin;
      size_t end = begin;
      if (name == "authorization") {
        end = lower.find_first_of("\r\n", begin);  // the whole header value
      } else {
        end = lower.find_first_of("&\r\n ,;\"'<", begin);
      }
      if (end == std::string::npos) end = lower.size();
      if (end > begin) spans.emplace_back(begin, end);
    }
  }
  // Merge overlapping spans, then replace from the end so earlier offsets stay valid.
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<size_t, size_t>> merged;
  for (const auto& span : spans) {
    if (!merged.empty() && span.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, span.second);
    } else {
      merged.push_back(span);
    }
  }
  for (auto it = merged.rbegin(); it != merged.rend(); ++it) {
    out.replace(it->first, it->second - it->first, "<redacted>");
  }
  return out;
}

}  // namespace litmus::aws
