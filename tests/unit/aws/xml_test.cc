// AWS's XML answers through pugixml (xml.h) and the ListObjectsV2 parser: entities, character
// references, CDATA, namespaces as S3 uses them, keys as S3 writes them (entity-escaped, or
// percent-encoded under encoding-type=url), error documents, and malformed input (an error naming
// the fault, never a crash or a made-up or silently dropped key).
#include <gtest/gtest.h>

#include "litmus/aws/s3_client.h"
#include "litmus/aws/xml.h"

namespace litmus::aws {
namespace {

// Keys that an XML reader must decode, not just find: XML's special characters, a key that
// spells an entity, whitespace, URL-special bytes, non-ASCII (UTF-8).
const std::vector<std::string> kTrickyKeys = {
    "a&b", "a<b>c", "quote\"s and 'apostrophes'", "&amp;", "&lt;Key&gt;", "with space", " ", "plus+sign",
    "100%.csv", "%41", "caf\xC3\xA9/\xE6\x97\xA5\xE6\x9C\xAC.txt", "a/./b/../c", "]]>"};

std::string EntityEscape(std::string_view text) {
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

// AWS's encoding-type=url: percent-encoded, '+' for a space.
std::string UrlEncodeLikeAws(std::string_view key) {
  std::string out;
  for (const char& c : key) out += c == ' ' ? std::string("+") : UriEncode({&c, 1}, /*keep_slash=*/true);
  return out;
}

std::string Listing(const std::vector<std::string>& keys, bool url) {
  std::string xml = R"(<?xml version="1.0" encoding="UTF-8"?>)"
                    "\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>b</Name>";
  for (const std::string& key : keys) {
    xml += "<Contents><Key>" + (url ? UrlEncodeLikeAws(key) : EntityEscape(key)) +
           "</Key><ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag><Size>7</Size></Contents>";
  }
  if (url) xml += "<EncodingType>url</EncodingType>";
  return xml + "<IsTruncated>false</IsTruncated></ListBucketResult>";
}

std::vector<std::string> Keys(const S3ListPage& page) {
  std::vector<std::string> keys;
  for (const S3Object& object : page.objects) keys.push_back(object.key);
  return keys;
}

TEST(Xml, DecodesEntitiesReferencesAndCdata) {
  const std::string xml =
      "<?xml version=\"1.0\"?><!-- <Key>no</Key> --><R xmlns=\"urn:x\" a=\"1\"><KeyCount>2</KeyCount>"
      "<Key>a&amp;b&lt;&#x41;&#66;&quot;&apos;&gt;&#x65E5;\xC3\xA9</Key><Empty/><Space> </Space>"
      "<Data><![CDATA[<raw>&amp;]]></Data><Split>a<!-- c -->b</Split><Mixed>a<b/>c</Mixed></R>";
  StatusOr<pugi::xml_document> document = ParseXml(xml, "the answer");
  ASSERT_TRUE(document.ok()) << document.status().ToString();
  const pugi::xml_node root = document->document_element();
  EXPECT_EQ(XmlChildText(root, "Key").value(), "a&b<AB\"'>\xE6\x97\xA5\xC3\xA9");
  EXPECT_EQ(XmlChildText(root, "KeyCount").value(), "2");
  EXPECT_EQ(XmlChildText(root, "Empty").value(), "");
  EXPECT_EQ(XmlChildText(root, "Space").value(), " ");
  EXPECT_EQ(XmlChildText(root, "Data").value(), "<raw>&amp;");
  EXPECT_EQ(XmlChildText(root, "Split").value(), "ab");
  EXPECT_FALSE(XmlChildText(root, "Mixed").has_value()) << "an element holding elements is not text";
  EXPECT_FALSE(XmlChildText(root, "Missing").has_value());
  EXPECT_FALSE(XmlChildText(root, "Keycount").has_value()) << "names are case-sensitive";
}

TEST(Xml, NamesMatchWithoutTheirNamespacePrefix) {
  StatusOr<pugi::xml_document> document =
      ParseXml("<s3:R xmlns:s3=\"http://s3.amazonaws.com/doc/2006-03-01/\"><s3:Key>k</s3:Key></s3:R>", "x");
  ASSERT_TRUE(document.ok());
  EXPECT_EQ(XmlLocalName(document->document_element()), "R");
  EXPECT_EQ(XmlChildText(document->document_element(), "Key").value(), "k");
}

TEST(Xml, MalformedInputIsAnErrorNamingWhatAndWhere) {
  for (const char* bad : {"<Key>unterminated", "<Key", "<", "</Key>", "<Key attr=\"x\"", "<Key><Key></Key>", "",
                          "not xml at all", "<a><b></a></b>"}) {
    StatusOr<pugi::xml_document> document = ParseXml(bad, "the test answer");
    ASSERT_FALSE(document.ok()) << bad;
    EXPECT_EQ(document.status().code(), StatusCode::kUnavailable) << bad;
    EXPECT_NE(document.status().message().find("the test answer is not well-formed XML ("), std::string::npos)
        << document.status().message();
    EXPECT_NE(document.status().message().find(" at byte "), std::string::npos) << document.status().message();
  }
}

TEST(Xml, AwsErrorDocuments) {
  // S3 (REST): the root is the Error.
  std::optional<AwsXmlError> s3 = ParseAwsXmlError(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code><Message>The key &lt;a&amp;b&gt; "
      "does not exist.</Message><Key>a&amp;b</Key><RequestId>r</RequestId></Error>");
  ASSERT_TRUE(s3.has_value());
  EXPECT_EQ(s3->code, "NoSuchKey");
  EXPECT_EQ(s3->message, "The key <a&b> does not exist.");
  // Query protocol (SNS): nested in ErrorResponse, with a namespace.
  std::optional<AwsXmlError> sns = ParseAwsXmlError(
      "<ErrorResponse xmlns=\"http://sns.amazonaws.com/doc/2010-03-31/\"><Error><Type>Sender</Type>"
      "<Code>AuthorizationError</Code><Message>no</Message></Error><RequestId>r</RequestId></ErrorResponse>");
  ASSERT_TRUE(sns.has_value());
  EXPECT_EQ(sns->code, "AuthorizationError");
  EXPECT_EQ(sns->message, "no");
  std::optional<AwsXmlError> bare = ParseAwsXmlError("<Error/>");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->code, "");
  for (const char* not_error : {"<html>gateway</html>", "", "<Error><Code>Cut", "{\"code\":\"x\"}",
                                "<html><Code>NotInAnError</Code></html>"}) {
    EXPECT_FALSE(ParseAwsXmlError(not_error).has_value()) << not_error;
  }
}

TEST(ListObjectsV2, ParsesTheDocumentedAnswer) {
  const std::string xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name><Prefix/><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
  <Contents><Key>happyface.jpg</Key><LastModified>2014-11-21T19:40:05.000Z</LastModified>
    <ETag>"70ee1738b6b21e2c8a43f3a5ab0eee71"</ETag><Size>11</Size><StorageClass>STANDARD</StorageClass>
    <Owner><ID>75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a</ID></Owner></Contents>
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

TEST(ListObjectsV2, KeysEscapedAsS3WritesThemComeBackExactly) {
  StatusOr<S3ListPage> page = ParseListObjectsV2(Listing(kTrickyKeys, /*url=*/false));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(Keys(*page), kTrickyKeys);
}

TEST(ListObjectsV2, UrlEncodedKeysAreDecoded) {
  std::vector<std::string> keys = kTrickyKeys;
  keys.push_back("control\r\n\x01\x7F");  // XML 1.0 cannot carry these; encoding-type=url can
  StatusOr<S3ListPage> page = ParseListObjectsV2(Listing(keys, /*url=*/true));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(Keys(*page), keys);
  // radosgw writes a space as %20, and lower-case hex is accepted too.
  page = ParseListObjectsV2(
      "<ListBucketResult><EncodingType>url</EncodingType><Contents><Key>a%20b%2bc%c3%a9</Key><Size>1</Size>"
      "</Contents></ListBucketResult>");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(Keys(*page), std::vector<std::string>{"a b+c\xC3\xA9"});
  // Without EncodingType (a store that ignores the parameter) a key is taken as written.
  page = ParseListObjectsV2(
      "<ListBucketResult><Contents><Key>a%20b+c</Key><Size>1</Size></Contents></ListBucketResult>");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(Keys(*page), std::vector<std::string>{"a%20b+c"});
}

TEST(ListObjectsV2, RejectsAnswersItCannotTrust) {
  struct Case {
    std::string xml, message;
  };
  const std::vector<Case> cases = {
      {"<html>proxy error</html>", "not a ListBucketResult document (its root is <html>)"},
      {"proxy error", "not well-formed XML"},
      {"<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>", "Contents entry 1 has no Key"},
      {"<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>", "entry 1 (key 'k') has no valid Size"},
      {"<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>", "no valid Size"},
      {"<ListBucketResult><Contents><Key>k</Key><Size>1 </Size></Contents></ListBucketResult>", "no valid Size"},
      {"<ListBucketResult><Contents><Key>k<b/></Key><Size>1</Size></Contents></ListBucketResult>", "has no Key"},
      {"<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", "no NextContinuationToken"},
      {"<ListBucketResult><IsTruncated>yes</IsTruncated></ListBucketResult>", "IsTruncated is 'yes'"},
      {"<ListBucketResult><EncodingType>base64</EncodingType></ListBucketResult>", "unknown EncodingType 'base64'"},
      {"<ListBucketResult><EncodingType>url</EncodingType><Contents><Key>a%2</Key><Size>1</Size></Contents>"
       "</ListBucketResult>",
       "malformed %-escape"},
      // Cut short or mangled in transit: an error, never a shorter listing.
      {"<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents><Contents><Key>b</Key><Size>2</Size>"
       "</ListBucketResult>",
       "not well-formed XML"},
      {"<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents><Contents><Key>b</Key>", "not well-formed"},
      {"<html><ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents></ListBucketResult></html>",
       "its root is <html>"},
  };
  for (const Case& c : cases) {
    StatusOr<S3ListPage> page = ParseListObjectsV2(c.xml);
    ASSERT_FALSE(page.ok()) << c.xml;
    EXPECT_EQ(page.status().code(), StatusCode::kUnavailable) << c.xml;
    EXPECT_NE(page.status().message().find(c.message), std::string::npos) << page.status().message();
  }
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
