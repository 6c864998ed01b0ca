// SigV4 against AWS's published vectors: the Signature Version 4 test suite (service "service",
// AKIDEXAMPLE, 20150830T123600Z), the signing-key example (IAM, 20120215) and the four examples
// of the S3 header-authentication documentation (examplebucket, AKIAIOSFODNN7EXAMPLE,
// 20130524). Expected values are copied from those documents.
#include <gtest/gtest.h>

#include <chrono>

#include "litmus/aws/sigv4.h"

namespace litmus::aws {
namespace {

constexpr char kSuiteKey[] = "AKIDEXAMPLE";
constexpr char kSuiteSecret[] = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
constexpr char kSuiteDate[] = "20150830T123600Z";

// The suite's Authorization value for `request`, computed from the pieces.
std::string SuiteAuthorization(const HttpRequest& request, std::string* canonical = nullptr,
                               std::string* string_to_sign = nullptr) {
  std::string signed_headers;
  const std::string creq = CanonicalRequest(request, "service", Sha256Hex(request.body), &signed_headers);
  const std::string sts = StringToSign(kSuiteDate, "us-east-1", "service", creq);
  if (canonical != nullptr) *canonical = creq;
  if (string_to_sign != nullptr) *string_to_sign = sts;
  return std::string("AWS4-HMAC-SHA256 Credential=") + kSuiteKey +
         "/20150830/us-east-1/service/aws4_request, SignedHeaders=" + signed_headers +
         ", Signature=" + SignatureHex(SigningKey(kSuiteSecret, "20150830", "us-east-1", "service"), sts);
}

HttpRequest SuiteGet(std::string path_and_query, std::vector<std::pair<std::string, std::string>> extra = {}) {
  HttpRequest request{.method = "GET", .url = "https://example.amazonaws.com" + path_and_query, .headers = {},
                      .body = ""};
  request.headers = {{"Host", "example.amazonaws.com"}};
  for (auto& h : extra) request.headers.push_back(std::move(h));
  request.headers.emplace_back("X-Amz-Date", kSuiteDate);
  return request;
}

std::string SuiteAuthz(std::string_view signed_headers, std::string_view signature) {
  return std::string("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=") +
         std::string(signed_headers) + ", Signature=" + std::string(signature);
}

TEST(SigV4Suite, GetVanilla) {
  EXPECT_EQ(SuiteAuthorization(SuiteGet("/")),
            SuiteAuthz("host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"));
}

TEST(SigV4Suite, GetVanillaQueryOrderKeyShowsEveryPiece) {
  std::string creq, sts;
  const std::string authz = SuiteAuthorization(SuiteGet("/?Param1=value2&Param1=Value1"), &creq, &sts);
  EXPECT_EQ(creq,
            "GET\n/\nParam1=Value1&Param1=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sts,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "704b4cef673542d84cdff252633f065e8daeba5f168b77116f8b1bcaf3d38f89");
  EXPECT_EQ(authz, SuiteAuthz("host;x-amz-date", "eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1"));
}

TEST(SigV4Suite, GetUnreserved) {
  EXPECT_EQ(SuiteAuthorization(SuiteGet("/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")),
            SuiteAuthz("host;x-amz-date", "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"));
}

TEST(SigV4Suite, GetVanillaQueryUnreserved) {
  const std::string unreserved = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  EXPECT_EQ(SuiteAuthorization(SuiteGet("/?" + unreserved + "=" + unreserved)),
            SuiteAuthz("host;x-amz-date", "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"));
}

TEST(SigV4Suite, GetUtf8PathAndQuery) {
  EXPECT_EQ(SuiteAuthorization(SuiteGet("/\xE1\x88\xB4")),
            SuiteAuthz("host;x-amz-date", "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"));
  EXPECT_EQ(SuiteAuthorization(SuiteGet("/?\xE1\x88\xB4=bar")),
            SuiteAuthz("host;x-amz-date", "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"));
}

TEST(SigV4Suite, HeaderValuesAreTrimmedAndRepeatedHeadersJoined) {
  EXPECT_EQ(SuiteAuthorization(SuiteGet("/", {{"My-Header1", " value1"}, {"My-Header2", " \"a   b   c\""}})),
            SuiteAuthz("host;my-header1;my-header2;x-amz-date",
                       "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"));
  EXPECT_EQ(SuiteAuthorization(
                SuiteGet("/", {{"My-Header1", "value2"}, {"My-Header1", "value2"}, {"My-Header1", "value1"}})),
            SuiteAuthz("host;my-header1;x-amz-date", "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"));
}

TEST(SigV4Suite, PathsAreNormalisedForServicesOtherThanS3) {
  EXPECT_EQ(SuiteAuthorization(SuiteGet("//example//")),
            SuiteAuthz("host;x-amz-date", "9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84"));
  EXPECT_EQ(SuiteAuthorization(SuiteGet("/example space/")),
            SuiteAuthz("host;x-amz-date", "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"));
  // get-relative-relative normalises to "/" and so signs like get-vanilla.
  EXPECT_EQ(SuiteAuthorization(SuiteGet("/example1/example2/../..")),
            SuiteAuthz("host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"));
}

TEST(SigV4Suite, PostXWwwFormUrlencoded) {
  HttpRequest request{.method = "POST",
                      .url = "https://example.amazonaws.com/",
                      .headers = {{"Content-Type", "application/x-www-form-urlencoded"},
                                  {"Host", "example.amazonaws.com"},
                                  {"X-Amz-Date", kSuiteDate}},
                      .body = "Param1=value1"};
  std::string creq, sts;
  const std::string authz = SuiteAuthorization(request, &creq, &sts);
  EXPECT_EQ(creq,
            "POST\n/\n\ncontent-type:application/x-www-form-urlencoded\nhost:example.amazonaws.com\n"
            "x-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n"
            "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
  EXPECT_EQ(sts,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281");
  EXPECT_EQ(authz, SuiteAuthz("content-type;host;x-amz-date",
                              "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"));
}

TEST(SigV4Suite, PostStsHeaderBefore) {
  HttpRequest request{.method = "POST", .url = "https://example.amazonaws.com/", .headers = {}, .body = ""};
  request.headers = {
      {"Host", "example.amazonaws.com"},
      {"X-Amz-Date", kSuiteDate},
      {"X-Amz-Security-Token",
       "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwth"
       "Ax7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVX"
       "AkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="}};
  EXPECT_EQ(SuiteAuthorization(request),
            SuiteAuthz("host;x-amz-date;x-amz-security-token",
                       "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"));
}

TEST(SigV4, SigningKeyDerivationExample) {
  const std::string key = SigningKey(kSuiteSecret, "20120215", "us-east-1", "iam");
  std::string hex;
  for (unsigned char c : key) {
    static constexpr char kHex[] = "0123456789abcdef";
    hex += kHex[c >> 4];
    hex += kHex[c & 15];
  }
  EXPECT_EQ(hex, "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

// The S3 documentation's examples, signed end to end by SignRequestV4 (which adds Host,
// x-amz-date and x-amz-content-sha256 itself).
class S3DocumentationExample : public ::testing::Test {
 protected:
  const Credentials credentials_{.access_key_id = "AKIAIOSFODNN7EXAMPLE",
                                 .secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                 .session_token = "",
                                 .expiration = std::nullopt};
  // 2013-05-24T00:00:00Z
  const std::chrono::system_clock::time_point now_ = std::chrono::system_clock::from_time_t(1369353600);

  std::string Sign(HttpRequest request) {
    SignRequestV4(request, credentials_, "us-east-1", "s3", now_);
    for (const auto& [name, value] : request.headers) {
      if (name == "Authorization") return value;
    }
    return "";
  }
  static std::string Authz(std::string_view signed_headers, std::string_view signature) {
    return std::string("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ") +
           "SignedHeaders=" + std::string(signed_headers) + ", Signature=" + std::string(signature);
  }
};

TEST_F(S3DocumentationExample, GetObjectWithRange) {
  HttpRequest request{.method = "GET", .url = "https://examplebucket.s3.amazonaws.com/test.txt",
                      .headers = {{"Range", "bytes=0-9"}}, .body = ""};
  EXPECT_EQ(Sign(request), Authz("host;range;x-amz-content-sha256;x-amz-date",
                                 "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"));
  // And the pieces, as the documentation lists them.
  HttpRequest with_headers = request;
  with_headers.headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                          {"Range", "bytes=0-9"},
                          {"x-amz-content-sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
                          {"x-amz-date", "20130524T000000Z"}};
  const std::string creq = CanonicalRequest(with_headers, "s3", Sha256Hex(""), nullptr);
  EXPECT_EQ(creq,
            "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
            "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
            "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(StringToSign("20130524T000000Z", "us-east-1", "s3", creq),
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
}

TEST_F(S3DocumentationExample, PutObjectWithAnEncodedKey) {
  HttpRequest request{.method = "PUT", .url = "https://examplebucket.s3.amazonaws.com/test%24file.text",
                      .headers = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                                  {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
                      .body = "Welcome to Amazon S3."};
  EXPECT_EQ(Sign(request), Authz("date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
                                 "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"));
}

TEST_F(S3DocumentationExample, GetBucketLifecycle) {
  EXPECT_EQ(Sign({.method = "GET", .url = "https://examplebucket.s3.amazonaws.com/?lifecycle", .headers = {},
                  .body = ""}),
            Authz("host;x-amz-content-sha256;x-amz-date",
                  "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"));
}

TEST_F(S3DocumentationExample, ListObjectsQueryIsSorted) {
  EXPECT_EQ(Sign({.method = "GET", .url = "https://examplebucket.s3.amazonaws.com/?prefix=J&max-keys=2",
                  .headers = {}, .body = ""}),
            Authz("host;x-amz-content-sha256;x-amz-date",
                  "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"));
}

TEST(SigV4, SignRequestAddsEveryRequiredHeader) {
  HttpRequest request{.method = "PUT", .url = "http://127.0.0.1:7480/bucket/a%20b", .headers = {}, .body = "data"};
  const Credentials credentials{.access_key_id = "AKID", .secret_access_key = "SECRET", .session_token = "TOKEN",
                                .expiration = std::nullopt};
  SignRequestV4(request, credentials, "eu-west-1", "s3", std::chrono::system_clock::from_time_t(1369353600));
  auto header = [&](std::string_view name) {
    for (const auto& [k, v] : request.headers) {
      if (k == name) return v;
    }
    return std::string("<absent>");
  };
  EXPECT_EQ(header("Host"), "127.0.0.1:7480");
  EXPECT_EQ(header("x-amz-date"), "20130524T000000Z");
  EXPECT_EQ(header("x-amz-content-sha256"), Sha256Hex("data"));
  EXPECT_EQ(header("x-amz-security-token"), "TOKEN");
  const std::string authorization = header("Authorization");
  EXPECT_TRUE(authorization.starts_with("AWS4-HMAC-SHA256 Credential=AKID/20130524/eu-west-1/s3/aws4_request, "
                                        "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, "
                                        "Signature="))
      << authorization;
  // Signing again replaces the Authorization header instead of adding a second one.
  SignRequestV4(request, credentials, "eu-west-1", "s3", std::chrono::system_clock::from_time_t(1369353601));
  int authorizations = 0;
  for (const auto& [k, v] : request.headers) authorizations += k == "Authorization";
  EXPECT_EQ(authorizations, 1);
}

TEST(SigV4, DefaultPortsAreLeftOutOfTheHost) {
  std::string signed_headers;
  const std::string creq = CanonicalRequest(
      {.method = "GET", .url = "https://Example.com:443/x?b=2&a=1", .headers = {{"Host", "example.com"}}, .body = ""},
      "s3", "UNSIGNED-PAYLOAD", &signed_headers);
  EXPECT_EQ(creq, "GET\n/x\na=1&b=2\nhost:example.com\n\nhost\nUNSIGNED-PAYLOAD");
  HttpRequest request{.method = "GET", .url = "http://example.com:80/", .headers = {}, .body = ""};
  SignRequestV4(request, {.access_key_id = "A", .secret_access_key = "B", .session_token = "", .expiration = {}},
                "us-east-1", "s3", std::chrono::system_clock::now());
  EXPECT_EQ(request.headers.front().second, "example.com");
}

TEST(SigV4, QueryValuesAreReEncodedStrictly) {
  // S3 keys in start-after may hold '/', '+', spaces and '=': all percent-encoded in the
  // canonical query whatever the caller sent.
  const std::string creq = CanonicalRequest({.method = "GET",
                                              .url = "http://h/b/?start-after=a/b+c%20d%3D&list-type=2&prefix=",
                                              .headers = {},
                                              .body = ""},
                                             "s3", "x", nullptr);
  EXPECT_EQ(creq, "GET\n/b/\nlist-type=2&prefix=&start-after=a%2Fb%2Bc%20d%3D\n\n\nx");
}

TEST(SigV4, RedactSecretsHidesEveryKindOfSecret) {
  const std::string text =
      "Authorization: AWS4-HMAC-SHA256 Credential=AKID/20130524/us-east-1/s3/aws4_request, SignedHeaders=host, "
      "Signature=abcdef0123\r\nx-amz-security-token: TOKENVALUE\r\nGET /b?X-Amz-Signature=deadbeef&"
      "X-Amz-Credential=AKID%2F2013&x=1 aws_secret_access_key = SECRETKEY";
  const std::string redacted = RedactSecrets(text);
  for (const char* secret : {"abcdef0123", "TOKENVALUE", "deadbeef", "AKID%2F2013", "SECRETKEY", "SignedHeaders"}) {
    EXPECT_EQ(redacted.find(secret), std::string::npos) << secret << " in " << redacted;
  }
  EXPECT_NE(redacted.find("&x=1"), std::string::npos) << redacted;
  EXPECT_EQ(RedactSecrets("nothing secret here"), "nothing secret here");
}

TEST(SigV4, Sha256AndDate) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(AmzDateTime(std::chrono::system_clock::from_time_t(1440938160)), "20150830T123600Z");
}

TEST(UriEncode, EncodesAllButUnreserved) {
  EXPECT_EQ(UriEncode("a b/c~d$*"), "a%20b%2Fc~d%24%2A");
  EXPECT_EQ(UriEncode("a b/c", /*keep_slash=*/true), "a%20b/c");
  EXPECT_EQ(UriEncode("\xC3\xA9"), "%C3%A9");
}

}  // namespace
}  // namespace litmus::aws
