// ParseListObjectsV2 (s3_client.h): the ListBucketResult document of a ListObjectsV2 answer, read
// with pugixml (xml.h). Kept apart from the client so the fuzzer can build it alone.
#include <charconv>

#include "litmus/aws/s3_client.h"
#include "litmus/aws/xml.h"

namespace litmus::aws {
namespace {

std::optional<uint64_t> ParseSize(std::string_view text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A key as S3 sends it under encoding-type=url: %XX escapes for bytes, '+' for a space (a real
// '+' comes as %2B; botocore decodes the same way). nullopt for a malformed escape.
std::optional<std::string> UrlDecodeKey(std::string_view encoded) {
  std::string out;
  out.reserve(encoded.size());
  for (size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] == '+') {
      out += ' ';
    } else if (encoded[i] != '%') {
      out += encoded[i];
    } else {
      if (i + 2 >= encoded.size()) return std::nullopt;
      const int hi = HexDigit(encoded[i + 1]), lo = HexDigit(encoded[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
  }
  return out;
}

}  // namespace

StatusOr<S3ListPage> ParseListObjectsV2(std::string_view xml) {
  LITMUS_ASSIGN_OR_RETURN(const pugi::xml_document document, ParseXml(xml, "the ListObjectsV2 answer"));
  const pugi::xml_node result = document.document_element();
  if (XmlLocalName(result) != "ListBucketResult") {
    return UnavailableError("the ListObjectsV2 answer is not a ListBucketResult document (its root is <" +
                            std::string(result.name()) + ">)");
  }
  const std::string encoding = XmlChildText(result, "EncodingType").value_or("");
  if (!encoding.empty() && encoding != "url") {
    return UnavailableError("the ListObjectsV2 answer has keys in an unknown EncodingType '" + encoding + "'");
  }
  S3ListPage page;
  size_t entry = 0;
  for (pugi::xml_node contents : result.children()) {
    if (contents.type() != pugi::node_element || XmlLocalName(contents) != "Contents") continue;
    ++entry;
    const std::string where = "the ListObjectsV2 answer's Contents entry " + std::to_string(entry);
    std::optional<std::string> key = XmlChildText(contents, "Key");
    if (!key) return UnavailableError(where + " has no Key");
    if (encoding == "url") {
      key = UrlDecodeKey(*key);
      if (!key) return UnavailableError(where + " has a Key with a malformed %-escape (EncodingType url)");
    }
    const std::optional<std::string> size_text = XmlChildText(contents, "Size");
    const std::optional<uint64_t> size = size_text ? ParseSize(*size_text) : std::nullopt;
    if (!size) return UnavailableError(where + " (key '" + *key + "') has no valid Size");
    page.objects.push_back({std::move(*key), *size});
  }
  const std::string truncated = XmlChildText(result, "IsTruncated").value_or("false");
  if (truncated != "true" && truncated != "false") {
    return UnavailableError("the ListObjectsV2 answer's IsTruncated is '" + truncated + "', not true or false");
  }
  page.truncated = truncated == "true";
  if (page.truncated) {
    page.next_continuation_token = XmlChildText(result, "NextContinuationToken").value_or("");
    if (page.next_continuation_token.empty()) {
      return UnavailableError("the ListObjectsV2 answer is truncated but has no NextContinuationToken");
    }
  }
  return page;
}

}  // namespace litmus::aws
