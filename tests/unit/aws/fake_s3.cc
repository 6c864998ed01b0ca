// FakeS3 (fake_s3.h).
#include "unit/aws/fake_s3.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "litmus/aws/sigv4.h"

namespace litmus::testing {
namespace {

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && Hex(text[i + 1]) >= 0 && Hex(text[i + 2]) >= 0) {
      out += static_cast<char>(Hex(text[i + 1]) * 16 + Hex(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// As S3 escapes text in its XML: the five predefined entities; other bytes (UTF-8) as they are.
std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// A key as AWS S3 writes it under encoding-type=url: percent-encoded but for unreserved bytes and
// '/', with a space as '+' (measured on AWS; radosgw writes %20, which decodes the same).
std::string UrlEncodeKey(std::string_view key) {
  std::string out;
  for (const char& c : key) out += c == ' ' ? std::string("+") : aws::UriEncode({&c, 1}, /*keep_slash=*/true);
  return out;
}

aws::HttpResponse Error(long status, const std::string& code, const std::string& message) {
  return {.status = status,
          .headers = {{"content-type", "application/xml"}},
          .body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + code + "</Code><Message>" + message +
                  "</Message></Error>"};
}

std::string HeaderOf(const aws::HttpRequest& request, std::string_view name) {
  for (const auto& [key, value] : request.headers) {
    if (key.size() == name.size() && std::equal(key.begin(), key.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        })) {
      return value;
    }
  }
  return "";
}

}  // namespace

void FakeS3::CreateBucket(const std::string& bucket) {
  std::lock_guard<std::mutex> lock(mu_);
  buckets_[bucket];
}

void FakeS3::set_url_encoding_supported(bool supported) {
  std::lock_guard<std::mutex> lock(mu_);
  url_encoding_supported_ = supported;
}

void FakeS3::PutObject(const std::string& bucket, const std::string& key, std::string content) {
  std::lock_guard<std::mutex> lock(mu_);
  buckets_[bucket][key] = std::move(content);
}

void FakeS3::PutTree(const std::string& bucket, const std::string& prefix, const std::string& folder) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    const std::string relative = std::filesystem::relative(entry.path(), folder).generic_string();
    PutObject(bucket, prefix.empty() ? relative : prefix + "/" + relative, content.str());
  }
}

int FakeS3::count(const std::string& kind) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = counts_.find(kind);
  return it == counts_.end() ? 0 : it->second;
}

int FakeS3::total() const {
  std::lock_guard<std::mutex> lock(mu_);
  int sum = 0;
  for (const auto& [kind, n] : counts_) sum += n;
  return sum;
}

void FakeS3::ResetCounts() {
  std::lock_guard<std::mutex> lock(mu_);
  counts_.clear();
}

StatusOr<aws::HttpResponse> FakeS3::Send(const aws::HttpRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  return Handle(request);
}

aws::HttpResponse FakeS3::Handle(const aws::HttpRequest& request) {
  // URL: http://host[:port]/bucket[/key][?query]
  std::string_view url = request.url;
  url.remove_prefix(url.find("://") + 3);
  url.remove_prefix(std::min(url.size(), url.find('/')));
  std::string_view path = url.substr(0, url.find('?'));
  const std::string_view query = url.size() > path.size() ? url.substr(path.size() + 1) : std::string_view();
  path.remove_prefix(1);
  const std::string bucket(path.substr(0, path.find('/')));
  const std::string key = path.find('/') == std::string_view::npos ? "" : Decode(path.substr(path.find('/') + 1));
  std::map<std::string, std::string> params;
  for (size_t start = 0; start < query.size();) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view pair = query.substr(start, end - start);
    const size_t eq = pair.find('=');
    params[Decode(pair.substr(0, eq))] = eq == std::string_view::npos ? "" : Decode(pair.substr(eq + 1));
    start = end + 1;
  }

  const bool list = request.method == "GET" && key.empty() && params.contains("list-type");
  std::string kind = list ? "list"
                     : request.method == "GET"    ? "get"
                     : request.method == "HEAD"   ? "head"
                     : request.method == "PUT"    ? "put"
                     : request.method == "DELETE" ? "delete"
                                                  : "other";
  ++counts_[kind];

  const std::string authorization = HeaderOf(request, "authorization");
  if (!authorization.starts_with("AWS4-HMAC-SHA256 Credential=" + access_key_id_ + "/")) {
    return Error(403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.");
  }
  if (HeaderOf(request, "x-amz-content-sha256") != aws::Sha256Hex(request.body)) {
    return Error(400, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match");
  }
  if (request.method == "PUT" && key.empty()) {
    buckets_[bucket];
    return {.status = 200, .headers = {}, .body = ""};
  }
  const auto b = buckets_.find(bucket);
  if (b == buckets_.end()) return Error(404, "NoSuchBucket", "The specified bucket does not exist");
  std::map<std::string, std::string>& objects = b->second;

  if (list) {
    const std::string prefix = params["prefix"];
    std::string after = params["start-after"];
    if (params.contains("continuation-token")) after = params["continuation-token"];
    const int max_keys = params.contains("max-keys") ? std::stoi(params["max-keys"]) : 1000;
    const bool url_encoded = url_encoding_supported_ && params["encoding-type"] == "url";
    auto key_text = [&](const std::string& k) { return url_encoded ? UrlEncodeKey(k) : XmlEscape(k); };
    std::string contents;
    int n = 0;
    bool truncated = false;
    std::string last;
    for (auto it = objects.upper_bound(after); it != objects.end(); ++it) {
      if (!it->first.starts_with(prefix)) {
        if (it->first > prefix) break;
        continue;
      }
      if (n == max_keys) {
        truncated = true;
        break;
      }
      contents += "<Contents><Key>" + key_text(it->first) + "</Key><Size>" + std::to_string(it->second.size()) +
                  "</Size><StorageClass>STANDARD</StorageClass></Contents>";
      last = it->first;
      ++n;
    }
    std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                       "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>" + bucket +
                       "</Name><Prefix>" + key_text(prefix) + "</Prefix><KeyCount>" + std::to_string(n) +
                       "</KeyCount><MaxKeys>" + std::to_string(max_keys) + "</MaxKeys><IsTruncated>" +
                       (truncated ? "true" : "false") + "</IsTruncated>" + contents;
    if (truncated) body += "<NextContinuationToken>" + XmlEscape(last) + "</NextContinuationToken>";
    if (url_encoded) body += "<EncodingType>url</EncodingType>";
    body += "</ListBucketResult>";
    return {.status = 200, .headers = {{"content-type", "application/xml"}}, .body = body};
  }
  if (request.method == "PUT") {
    objects[key] = request.body;
    return {.status = 200, .headers = {}, .body = ""};
  }
  if (request.method == "DELETE") {
    objects.erase(key);
    return {.status = 204, .headers = {}, .body = ""};
  }
  const auto object = objects.find(key);
  if (object == objects.end()) {
    if (request.method == "HEAD") return {.status = 404, .headers = {}, .body = ""};
    return Error(404, "NoSuchKey", "The specified key does not exist.");
  }
  const std::string& content = object->second;
  if (request.method == "HEAD") {
    return {.status = 200, .headers = {{"content-length", std::to_string(content.size())}}, .body = ""};
  }
  const std::string range = HeaderOf(request, "range");
  if (range.empty()) return {.status = 200, .headers = {}, .body = content};
  // "bytes=A-B"
  const size_t dash = range.find('-');
  const uint64_t first = std::stoull(range.substr(6, dash - 6));
  const uint64_t last = std::stoull(range.substr(dash + 1));
  if (first >= content.size()) return Error(416, "InvalidRange", "The requested range is not satisfiable");
  const uint64_t end = std::min<uint64_t>(last, content.size() - 1);
  return {.status = 206,
          .headers = {{"content-range", "bytes " + std::to_string(first) + "-" + std::to_string(end) + "/" +
                                            std::to_string(content.size())}},
          .body = content.substr(first, end - first + 1)};
}

}  // namespace litmus::testing
