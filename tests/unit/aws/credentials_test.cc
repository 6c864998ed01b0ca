// The credential chain: environment, shared files with profiles, the container endpoint and EC2
// IMDSv2 (both served by a LocalHttpServer on 127.0.0.1), caching and refresh of expiring
// credentials, the chain's order, region resolution; and no secret in any error message.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <ctime>

#include "litmus/aws/credentials.h"
#include "support/temp_dir.h"
#include "unit/aws/local_http_server.h"

namespace litmus::aws {
namespace {

using testing::LocalHttpServer;
using testing::ServedRequest;
using testing::ServedResponse;

// Every variable the chain reads, cleared for each test; HOME points at an empty folder.
class CredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name :
         {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE",
          "AWS_DEFAULT_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_REGION", "AWS_DEFAULT_REGION",
          "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
          "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
          "AWS_EC2_METADATA_SERVICE_ENDPOINT"}) {
      unsetenv(name);
    }
    setenv("HOME", home_.str().c_str(), 1);
    // Never probe a real 169.254.169.254 from a test.
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  }

  static std::string Iso8601(std::time_t t) {
    char buffer[32];
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buffer;
  }

  testing::TempDir home_;
};

TEST_F(CredentialsTest, Environment) {
  auto provider = EnvironmentCredentials();
  EXPECT_EQ(provider->Get().status().code(), StatusCode::kNotFound);
  setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
  StatusOr<Credentials> partial = provider->Get();
  EXPECT_EQ(partial.status().code(), StatusCode::kInvalidArgument);
  setenv("AWS_SECRET_ACCESS_KEY", "secret-env", 1);
  setenv("AWS_SESSION_TOKEN", "token-env", 1);
  StatusOr<Credentials> got = provider->Get();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->access_key_id, "AKIDENV");
  EXPECT_EQ(got->secret_access_key, "secret-env");
  EXPECT_EQ(got->session_token, "token-env");
  EXPECT_FALSE(got->expiration.has_value());
}

TEST_F(CredentialsTest, SharedFilesWithProfiles) {
  home_.WriteFile(".aws/credentials",
                  "# comment\n[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = secret#default\n\n"
                  "[prod]\naws_access_key_id=AKIDPROD\naws_secret_access_key=secretprod\naws_session_token=tok\n"
                  "[broken]\naws_access_key_id=AKIDBROKEN\n");
  home_.WriteFile(".aws/config",
                  "[default]\nregion = eu-central-1\n[profile dev]\naws_access_key_id = AKIDDEV\n"
                  "aws_secret_access_key = secretdev\nregion = ap-south-1\ns3 =\n  addressing_style = path\n"
                  "[profile prod]\naws_access_key_id = AKIDIGNORED\naws_secret_access_key = ignored\n"
                  "[profile assume]\nrole_arn = arn:aws:iam::123456789012:role/x\n");
  StatusOr<Credentials> got = SharedFileCredentials()->Get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->access_key_id, "AKIDDEFAULT");
  EXPECT_EQ(got->secret_access_key, "secret#default");  // no inline comments, as in botocore
  EXPECT_EQ(ResolveRegion(), "eu-central-1");

  setenv("AWS_PROFILE", "prod", 1);  // the credentials file wins over the config file
  got = SharedFileCredentials()->Get();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->access_key_id, "AKIDPROD");
  EXPECT_EQ(got->session_token, "tok");

  setenv("AWS_PROFILE", "dev", 1);  // only in the config file, as [profile dev]
  got = SharedFileCredentials()->Get();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->access_key_id, "AKIDDEV");
  EXPECT_EQ(ResolveRegion(), "ap-south-1");
  setenv("AWS_DEFAULT_REGION", "us-west-2", 1);
  EXPECT_EQ(ResolveRegion(), "us-west-2");
  setenv("AWS_REGION", "sa-east-1", 1);
  EXPECT_EQ(ResolveRegion(), "sa-east-1");

  setenv("AWS_PROFILE", "broken", 1);
  StatusOr<Credentials> broken = SharedFileCredentials()->Get();
  EXPECT_EQ(broken.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(broken.status().message().find("'broken'"), std::string::npos);

  setenv("AWS_PROFILE", "assume", 1);  // a profile without keys: the chain goes on
  EXPECT_EQ(SharedFileCredentials()->Get().status().code(), StatusCode::kNotFound);

  setenv("AWS_PROFILE", "missing", 1);  // named explicitly but absent: an error
  StatusOr<Credentials> missing = SharedFileCredentials()->Get();
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("'missing'"), std::string::npos);
  for (const StatusOr<Credentials>* failed : {&broken, &missing}) {
    for (const char* secret : {"secret#default", "secretprod", "secretdev", "AKIDBROKEN"}) {
      EXPECT_EQ(failed->status().message().find(secret), std::string::npos) << failed->status().message();
    }
  }
}

TEST_F(CredentialsTest, FilesNamedByEnvironment) {
  testing::TempDir elsewhere;
  elsewhere.WriteFile("creds", "[default]\naws_access_key_id=AKIDFILE\naws_secret_access_key=s\n");
  elsewhere.WriteFile("conf", "[default]\nregion=eu-north-1\n");
  setenv("AWS_SHARED_CREDENTIALS_FILE", (elsewhere.path() / "creds").c_str(), 1);
  setenv("AWS_CONFIG_FILE", (elsewhere.path() / "conf").c_str(), 1);
  EXPECT_EQ(SharedFileCredentials()->Get()->access_key_id, "AKIDFILE");
  EXPECT_EQ(ResolveRegion(), "eu-north-1");
  unsetenv("AWS_CONFIG_FILE");
  EXPECT_EQ(ResolveRegion(), "us-east-1");  // the default
}

TEST_F(CredentialsTest, ContainerFullUriWithAuthorizationToken) {
  std::atomic<int> calls{0};
  std::string seen_authorization;
  LocalHttpServer server([&](const ServedRequest& request) {
    ++calls;
    seen_authorization = request.Header("authorization");
    if (request.target != "/creds") return ServedResponse{.status = 404, .headers = {}, .body = "", .delay = {}, .drop_connection = false};
    return ServedResponse{.status = 200, .headers = {},
                          .body = R"({"AccessKeyId":"ASIACONTAINER","SecretAccessKey":"secret-container",)"
                                  R"("Token":"token-container","Expiration":")" + Iso8601(std::time(nullptr) + 3600) + "\"}",
                          .delay = {}, .drop_connection = false};
  });
  auto provider = ContainerCredentials();
  EXPECT_EQ(provider->Get().status().code(), StatusCode::kNotFound);  // no variable set

  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", (server.url() + "/creds").c_str(), 1);
  setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "auth-token-1", 1);
  StatusOr<Credentials> got = provider->Get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->access_key_id, "ASIACONTAINER");
  EXPECT_EQ(got->session_token, "token-container");
  ASSERT_TRUE(got->expiration.has_value());
  EXPECT_EQ(seen_authorization, "auth-token-1");
  // Cached until shortly before expiry: no second request.
  ASSERT_TRUE(provider->Get().ok());
  EXPECT_EQ(calls.load(), 1);

  // The token may come from a file (EKS Pod Identity); it wins over the variable.
  testing::TempDir dir;
  dir.WriteFile("token", "auth-token-file\n");
  setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", (dir.path() / "token").c_str(), 1);
  ASSERT_TRUE(ContainerCredentials()->Get().ok());
  EXPECT_EQ(seen_authorization, "auth-token-file");

  // Plain http only to loopback or the ECS/EKS addresses: the token must not leak elsewhere.
  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://example.com/creds", 1);
  EXPECT_EQ(ContainerCredentials()->Get().status().code(), StatusCode::kInvalidArgument);
}

TEST_F(CredentialsTest, InstanceMetadataV2) {
  std::atomic<int> token_requests{0}, credential_requests{0};
  std::atomic<int> lifetime_s{3600};
  LocalHttpServer imds([&](const ServedRequest& request) {
    ServedResponse response{.status = 200, .headers = {}, .body = "", .delay = {}, .drop_connection = false};
    if (request.method == "PUT" && request.target == "/latest/api/token") {
      ++token_requests;
      response.body = request.Header("x-aws-ec2-metadata-token-ttl-seconds").empty() ? "" : "imds-session";
      if (response.body.empty()) response.status = 400;
      return response;
    }
    if (request.Header("x-aws-ec2-metadata-token") != "imds-session") return response.status = 401, response;
    if (request.target == "/latest/meta-data/iam/security-credentials/") {
      response.body = "my-role\n";
    } else if (request.target == "/latest/meta-data/iam/security-credentials/my-role") {
      ++credential_requests;
      response.body = R"({"Code":"Success","AccessKeyId":"ASIAIMDS","SecretAccessKey":"secret-imds",)"
                      R"("Token":"token-imds","Expiration":")" + Iso8601(std::time(nullptr) + lifetime_s.load()) + "\"}";
    } else {
      response.status = 404;
    }
    return response;
  });
  setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", (imds.url() + "/").c_str(), 1);
  auto provider = InstanceMetadataCredentials();
  // Disabled: no request at all.
  EXPECT_EQ(provider->Get().status().code(), StatusCode::kNotFound);
  EXPECT_EQ(imds.requests_served(), 0);

  unsetenv("AWS_EC2_METADATA_DISABLED");
  StatusOr<Credentials> got = provider->Get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->access_key_id, "ASIAIMDS");
  EXPECT_EQ(got->secret_access_key, "secret-imds");
  EXPECT_EQ(got->session_token, "token-imds");
  EXPECT_EQ(token_requests.load(), 1);
  ASSERT_TRUE(provider->Get().ok());
  EXPECT_EQ(credential_requests.load(), 1) << "cached while far from expiry";

  // Credentials that expire within the refresh margin are fetched again on every Get.
  lifetime_s = 120;
  auto short_lived = InstanceMetadataCredentials();
  ASSERT_TRUE(short_lived->Get().ok());
  ASSERT_TRUE(short_lived->Get().ok());
  EXPECT_EQ(credential_requests.load(), 3);
}

TEST_F(CredentialsTest, InstanceMetadataUnreachableIsNotFound) {
  unsetenv("AWS_EC2_METADATA_DISABLED");
  // A port nobody listens on: the chain must move on quickly, not fail.
  int port = 0;
  {
    LocalHttpServer closed([](const ServedRequest&) { return ServedResponse{}; });
    port = closed.port();
  }
  setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", ("http://127.0.0.1:" + std::to_string(port)).c_str(), 1);
  EXPECT_EQ(InstanceMetadataCredentials()->Get().status().code(), StatusCode::kNotFound);
}

TEST_F(CredentialsTest, ChainOrderAndMemory) {
  LocalHttpServer imds([](const ServedRequest& request) {
    if (request.method == "PUT") return ServedResponse{.status = 200, .headers = {}, .body = "t", .delay = {}, .drop_connection = false};
    if (request.target.ends_with("/security-credentials/")) {
      return ServedResponse{.status = 200, .headers = {}, .body = "role", .delay = {}, .drop_connection = false};
    }
    return ServedResponse{.status = 200, .headers = {},
                          .body = R"({"AccessKeyId":"ASIAIMDS","SecretAccessKey":"s","Token":"t"})",
                          .delay = {}, .drop_connection = false};
  });
  // Nothing anywhere: NotFound naming every source, and no secret.
  auto empty = DefaultCredentialsChain();
  StatusOr<Credentials> none = empty->Get();
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  for (const char* source : {"environment", "shared files", "container", "instance metadata"}) {
    EXPECT_NE(none.status().message().find(source), std::string::npos) << none.status().message();
  }

  // Instance metadata last...
  unsetenv("AWS_EC2_METADATA_DISABLED");
  setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url().c_str(), 1);
  home_.WriteFile(".aws/credentials", "[default]\naws_access_key_id=AKIDFILE\naws_secret_access_key=s\n");
  auto chain = DefaultCredentialsChain();
  EXPECT_EQ(chain->Get()->access_key_id, "AKIDFILE");  // ...shared files before it...
  setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "s", 1);
  EXPECT_EQ(chain->Get()->access_key_id, "AKIDFILE") << "the chain remembers the source that answered";
  EXPECT_EQ(DefaultCredentialsChain()->Get()->access_key_id, "AKIDENV");  // ...and the environment first
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  std::filesystem::remove(home_.path() / ".aws/credentials");
  EXPECT_EQ(DefaultCredentialsChain()->Get()->access_key_id, "ASIAIMDS");
}

}  // namespace
}  // namespace litmus::aws
