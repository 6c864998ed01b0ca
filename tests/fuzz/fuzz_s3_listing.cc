// libFuzzer target for what litmus parses from an S3 server: every input is read as a
// ListObjectsV2 answer (ParseListObjectsV2) and searched with the XML reader for the elements
// litmus looks up in error and query-protocol answers. Invariants checked: nothing crashes or reads
// out of bounds, an accepted truncated page carries a continuation token, and element contents
// found by XmlElement are substrings of the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "litmus/aws/s3_client.h"
#include "litmus/aws/xml.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  litmus::StatusOr<litmus::aws::S3ListPage> page = litmus::aws::ParseListObjectsV2(text);
  if (page.ok()) Check(!page->truncated || !page->next_continuation_token.empty());
  for (std::string_view name : {"Code", "Message", "Key", "Contents", "TopicArn"}) {
    if (std::optional<std::string_view> content = litmus::aws::XmlElement(text, name)) {
      Check(content->data() >= text.data() && content->data() + content->size() <= text.data() + text.size());
    }
    (void)litmus::aws::XmlText(text, name);
  }
  int seen = 0;
  litmus::aws::XmlForEach(text, "Contents", [&](std::string_view) { ++seen; });
  Check(seen <= static_cast<int>(size));
  return 0;
}
