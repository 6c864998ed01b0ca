// ParseListObjectsV2 (s3_client.h): the ListBucketResult document of a ListObjectsV2 answer,
// read with the minimal XML reader. Kept apart from the client so the fuzzer can build it alone.
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

}  // namespace

StatusOr<S3ListPage> ParseListObjectsV2(std::string_view xml) {
  const std::optional<std::string_view> result = XmlElement(xml, "ListBucketResult");
  if (!result) return UnavailableError("the ListObjectsV2 answer is not a ListBucketResult document");
  S3ListPage page;
  Status parse_error;
  XmlForEach(*result, "Contents", [&](std::string_view contents) {
    if (!parse_error.ok()) return;
    std::optional<std::string> key = XmlText(contents, "Key");
    std::optional<std::string> size = XmlText(contents, "Size");
    std::optional<uint64_t> bytes = size ? ParseSize(*size) : std::nullopt;
    if (!key || !bytes) {
      parse_error = UnavailableError("the ListObjectsV2 answer has a Contents entry without a valid Key and Size");
      return;
    }
    page.objects.push_back({std::move(*key), *bytes});
  });
  LITMUS_RETURN_IF_ERROR(parse_error);
  page.truncated = XmlText(*result, "IsTruncated").value_or("false") == "true";
  if (page.truncated) {
    page.next_continuation_token = XmlText(*result, "NextContinuationToken").value_or("");
    if (page.next_continuation_token.empty()) {
      return UnavailableError("the ListObjectsV2 answer is truncated but has no NextContinuationToken");
    }
  }
  return page;
}

}  // namespace litmus::aws
