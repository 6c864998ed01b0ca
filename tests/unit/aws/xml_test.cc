// The minimal XML reader and the ListObjectsV2 parser: AWS's documented answers, entities,
// nesting, tags that are prefixes of others, and malformed input (never a crash, never a
// made-up key).
#include <gtest/gtest.h>

#include "litmus/aws/s3_client.h"
#include "litmus/aws/xml.h"

namespace litmus::aws {
namespace {

TEST(Xml, ElementsTextAndEntities) {
  const std::string xml =
      "<?xml version=\"1.0\"?><!-- <Key>no</Key> --><R a=\"1\"><KeyCount>2</KeyCount><Key>a&amp;b&lt;&#x41;&#66;"
      "</Key><Empty/><Data><![CDATA[<raw>&amp;]]></Data></R>";
  EXPECT_EQ(XmlText(xml, "Key").value(), "a&b<AB");
  EXPECT_EQ(XmlText(xml, "KeyCount").value(), "2");
  EXPECT_EQ(XmlText(xml, "Empty").value(), "");
  EXPECT_EQ(XmlText(xml, "Data").value(), "<raw>&amp;");
  EXPECT_FALSE(XmlText(xml, "Missing").has_value());
  EXPECT_EQ(XmlUnescape("&#x10FFFF;&#x110000;&bogus;&"), "\xF4\x8F\xBF\xBF&#x110000;&bogus;&");
}

TEST(Xml, NestedElementsOfTheSameName) {
  const std::string xml = "<a><b><b>inner</b></b><b>second</b></a>";
  std::vector<std::string> seen;
  XmlForEach(xml, "b", [&](std::string_view content) { seen.emplace_back(content); });
  EXPECT_EQ(seen, (std::vector<std::string>{"<b>inner</b>", "second"}));
}

TEST(Xml, MalformedInputYieldsNothing) {
  for (const char* bad : {"<Key>unterminated", "<Key", "<", "</Key>", "<Key attr=\"x\"", "<Key><Key></Key>", ""}) {
    EXPECT_FALSE(XmlElement(bad, "Key").has_value()) << bad;
  }
}

TEST(ListObjectsV2, ParsesTheDocumentedAnswer) {
  const std::string xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name><Prefix/><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
  <Contents><Key>happyface.jpg</Key><LastModified>2014-11-21T19:40:05.000Z</LastModified>
    <ETag>"70ee1738b6b21e2c8a43f3a5ab0eee71"</ETag><Size>11</Size><StorageClass>STANDARD</StorageClass></Contents>
  <Contents><Key>index/000000000/000000000001_worker_0.json</Key><Size>1234567890123</Size></Contents>
</ListBucketResult>)";
  StatusOr<S3ListPage> page = ParseListObjectsV2(xml);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "happyface.jpg");
  EXPECT_EQ(page->objects[0].size, 11u);
  EXPECT_EQ(page->objects[1].key, "index/000000000/000000000001_worker_0.json");
  EXPECT_EQ(page->objects[1].size, 1234567890123u);
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
}

TEST(ListObjectsV2, RejectsAnswersItCannotTrust) {
  EXPECT_FALSE(ParseListObjectsV2("<html>proxy error</html>").ok());
  EXPECT_FALSE(ParseListObjectsV2("<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>").ok());
  EXPECT_FALSE(
      ParseListObjectsV2("<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>").ok());
  EXPECT_FALSE(ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>").ok());
  StatusOr<S3ListPage> empty = ParseListObjectsV2("<ListBucketResult><KeyCount>0</KeyCount></ListBucketResult>");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->objects.empty());
  EXPECT_FALSE(empty->truncated);
}

TEST(S3Uri, ParsesAndValidates) {
  StatusOr<S3Location> location = ParseS3Uri("s3://my-bucket.data/a/b/");
  ASSERT_TRUE(location.ok());
  EXPECT_EQ(location->bucket, "my-bucket.data");
  EXPECT_EQ(location->key, "a/b/");
  EXPECT_EQ(ParseS3Uri("s3://bucket")->key, "");
  for (const char* bad : {"s3://", "s3:///key", "s3://Bad_Bucket/x", "s3://ab/x", "s3://-bucket/x",
                          "s3://a..b/x", "s3://192.168.1.1/x", "/local/path"}) {
    StatusOr<S3Location> parsed = ParseS3Uri(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
  EXPECT_NE(ParseS3Uri("s3://Bad_Bucket/x").status().message().find("'Bad_Bucket'"), std::string::npos);
}

}  // namespace
}  // namespace litmus::aws
