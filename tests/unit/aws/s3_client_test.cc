// S3Client over an in-memory S3 (FakeS3) with keys that stress every layer between a PUT and a
// listing: the URL path encoding, the XML of the listing (entity-escaped, or percent-encoded
// under encoding-type=url) and its parser. Listing returns exactly the keys that were PUT, and a
// GET of each listed key returns its object.
#include <gtest/gtest.h>

#include <algorithm>

#include "litmus/aws/s3_client.h"
#include "support/temp_dir.h"
#include "unit/aws/fake_s3.h"

namespace litmus::aws {
namespace {

using testing::FakeS3;

// XML's special characters, a key that spells an entity, whitespace, URL-special bytes,
// dot segments, non-ASCII (UTF-8); in key order, as a listing returns them.
std::vector<std::string> TrickyKeys() {
  std::vector<std::string> keys = {
      "t/ ", "t/%41", "t/&amp;", "t/&lt;Key&gt;", "t/100%.csv", "t/a&b", "t/a/./b/../c", "t/a<b>c", "t/a?b#c;d=e",
      "t/plus+sign", "t/quote\"s and 'apostrophes'", "t/with space", "t/]]>",
      "t/caf\xC3\xA9/\xE6\x97\xA5\xE6\x9C\xAC.txt"};
  std::sort(keys.begin(), keys.end());
  return keys;
}

class S3ClientTest : public ::testing::Test {
 protected:
  S3ClientTest()
      : credentials_(StaticCredentials(
            {.access_key_id = "AKIDFAKE", .secret_access_key = "S3CRET", .session_token = "", .expiration = {}})),
        client_(&fake_, credentials_.get(), "us-east-1", "s3", "http://fake.invalid",
                {.max_attempts = 1, .base_delay = {}, .max_delay = {}}),
        s3_(&client_, S3Addressing::kPath) {
    fake_.CreateBucket("bucket");
  }

  // Puts every key (content: the key itself), then lists and reads them back.
  void ExpectRoundTrip(const std::vector<std::string>& keys) {
    for (const std::string& key : keys) LITMUS_ASSERT_OK(s3_.Put("bucket", key, key));
    std::vector<S3Object> listed;
    LITMUS_ASSERT_OK(s3_.ListAll("bucket", "t/", "", &listed));
    std::vector<std::string> names;
    for (const S3Object& object : listed) names.push_back(object.key);
    EXPECT_EQ(names, keys);
    for (const S3Object& object : listed) {
      EXPECT_EQ(object.size, object.key.size()) << object.key;
      LITMUS_ASSERT_OK_AND_ASSIGN(std::string content, s3_.GetObject("bucket", object.key));
      EXPECT_EQ(content, object.key);
    }
    // Pages of two keys: continuation tokens and start-after with the same keys.
    std::vector<std::string> paged;
    std::string token;
    do {
      LITMUS_ASSERT_OK_AND_ASSIGN(S3ListPage page, s3_.ListPage("bucket", "t/", "", token, 2));
      for (const S3Object& object : page.objects) paged.push_back(object.key);
      token = page.next_continuation_token;
    } while (!token.empty());
    EXPECT_EQ(paged, keys);
    LITMUS_ASSERT_OK_AND_ASSIGN(S3ListPage after, s3_.ListPage("bucket", "t/", keys[2], "", 1000));
    ASSERT_FALSE(after.objects.empty());
    EXPECT_EQ(after.objects.front().key, keys[3]);
  }

  FakeS3 fake_;
  std::unique_ptr<CredentialsProvider> credentials_;
  AwsClient client_;
  S3Client s3_;
};

TEST_F(S3ClientTest, TrickyKeysRoundTripWithUrlEncodedListings) {
  std::vector<std::string> keys = TrickyKeys();
  keys.push_back("t/~control\r\n\t\x01");  // survives only because the listing is url-encoded
  ExpectRoundTrip(keys);
}

TEST_F(S3ClientTest, TrickyKeysRoundTripWithAStoreThatIgnoresEncodingType) {
  fake_.set_url_encoding_supported(false);  // keys come back entity-escaped in the XML
  ExpectRoundTrip(TrickyKeys());
}

TEST_F(S3ClientTest, ListingAsksForUrlEncodedKeys) {
  class Recording final : public HttpTransport {
   public:
    explicit Recording(HttpTransport* inner) : inner_(inner) {}
    StatusOr<HttpResponse> Send(const HttpRequest& request) override {
      urls.push_back(request.url);
      return inner_->Send(request);
    }
    std::vector<std::string> urls;

   private:
    HttpTransport* inner_;
  } recording(&fake_);
  AwsClient client(&recording, credentials_.get(), "us-east-1", "s3", "http://fake.invalid",
                   {.max_attempts = 1, .base_delay = {}, .max_delay = {}});
  S3Client s3(&client, S3Addressing::kPath);
  LITMUS_ASSERT_OK(s3.Put("bucket", "t/a b+c&\xC3\xA9", "x"));
  LITMUS_ASSERT_OK(s3.ListPage("bucket", "t/a b", "", "", 1000).status());
  ASSERT_EQ(recording.urls.size(), 2u);
  // Every byte of a key but the unreserved ones and '/' is percent-encoded in the path.
  EXPECT_EQ(recording.urls[0], "http://fake.invalid/bucket/t/a%20b%2Bc%26%C3%A9");
  EXPECT_EQ(recording.urls[1],
            "http://fake.invalid/bucket/?list-type=2&encoding-type=url&max-keys=1000&prefix=t%2Fa%20b");
}

}  // namespace
}  // namespace litmus::aws
