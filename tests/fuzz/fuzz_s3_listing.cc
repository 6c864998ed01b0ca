// libFuzzer target for the XML litmus reads from AWS (engine/aws/src/xml.cc over pugixml): every
// input is read as a ListObjectsV2 answer, an error document and each SNS answer the action
// client parses. Invariants checked: nothing crashes or reads out of bounds; an accepted truncated
// page carries a continuation token; an accepted page's keys, written back as S3 writes them under
// encoding-type=url, parse to the same keys (so decoding loses or invents no byte); an accepted
// CreateTopic answer has a TopicArn. pugixml itself is Debian's build (not instrumented), so the
// fuzzer steers by our code's reading of its tree.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "litmus/actions/aws_action_client.h"
#include "litmus/aws/http.h"
#include "litmus/aws/s3_client.h"
#include "litmus/aws/xml.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckKeysSurviveUrlEncoding(const litmus::aws::S3ListPage& page) {
  std::string xml = "<ListBucketResult><EncodingType>url</EncodingType>";
  for (const litmus::aws::S3Object& object : page.objects) {
    xml += "<Contents><Key>" + litmus::aws::UriEncode(object.key, /*keep_slash=*/true) + "</Key><Size>" +
           std::to_string(object.size) + "</Size></Contents>";
  }
  xml += "</ListBucketResult>";
  const litmus::StatusOr<litmus::aws::S3ListPage> again = litmus::aws::ParseListObjectsV2(xml);
  Check(again.ok());
  Check(again->objects.size() == page.objects.size());
  for (size_t i = 0; i < page.objects.size(); ++i) {
    Check(again->objects[i].key == page.objects[i].key);
    Check(again->objects[i].size == page.objects[i].size);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const litmus::StatusOr<litmus::aws::S3ListPage> page = litmus::aws::ParseListObjectsV2(text);
  if (page.ok()) {
    Check(!page->truncated || !page->next_continuation_token.empty());
    CheckKeysSurviveUrlEncoding(*page);
  } else {
    Check(page.status().code() == litmus::StatusCode::kUnavailable);
  }
  (void)litmus::aws::ParseAwsXmlError(text);
  const litmus::StatusOr<std::string> arn = litmus::actions::ParseSnsCreateTopic(text);
  if (arn.ok()) Check(!arn->empty());
  (void)litmus::actions::ParseSnsListSubscriptions(text);
  (void)litmus::actions::ParseSnsPublish(text);
  return 0;
}
