// AWS credentials and region from the standard chain (environment, shared files, container
// credentials endpoint, EC2 IMDSv2), as the AWS SDKs and CLI resolve them.
// Thread-safety: every CredentialsProvider::Get is safe to call concurrently; providers cache
// expiring credentials and refresh them shortly before they expire.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "litmus/status.h"

namespace litmus::aws {

class HttpTransport;

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty for long-term keys
  // When temporary credentials stop being valid; nullopt for long-term keys.
  std::optional<std::chrono::system_clock::time_point> expiration;
};

class CredentialsProvider {
 public:
  virtual ~CredentialsProvider();
  // Current credentials. Errors: NotFound when this source has no credentials at all (the chain
  // then tries the next one), Unavailable for a transient failure, InvalidArgument for a
  // malformed source (e.g. a profile with a key but no secret). Messages never contain secrets.
  virtual StatusOr<Credentials> Get() = 0;
};

// Fixed credentials (tests, tools).
std::unique_ptr<CredentialsProvider> StaticCredentials(Credentials credentials);

// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (read at each Get).
std::unique_ptr<CredentialsProvider> EnvironmentCredentials();

// Profile AWS_PROFILE (else "default") of AWS_SHARED_CREDENTIALS_FILE (else ~/.aws/credentials),
// then of AWS_CONFIG_FILE (else ~/.aws/config, section "[profile NAME]" or "[default]").
std::unique_ptr<CredentialsProvider> SharedFileCredentials();

// Container credentials (ECS, SageMaker): AWS_CONTAINER_CREDENTIALS_RELATIVE_URI against
// http://169.254.170.2, or AWS_CONTAINER_CREDENTIALS_FULL_URI with the optional
// AWS_CONTAINER_AUTHORIZATION_TOKEN header. NotFound when neither variable is set.
// `transport` must outlive the provider; nullptr uses an internal curl transport.
std::unique_ptr<CredentialsProvider> ContainerCredentials(HttpTransport* transport = nullptr);

// EC2 instance metadata, IMDSv2: PUT /latest/api/token, then GET the role and its credentials,
// with short timeouts. Endpoint from AWS_EC2_METADATA_SERVICE_ENDPOINT (default
// http://169.254.169.254); AWS_EC2_METADATA_DISABLED=true turns it off (NotFound).
std::unique_ptr<CredentialsProvider> InstanceMetadataCredentials(HttpTransport* transport = nullptr);

// The chain in the order above (environment, shared files, container, IMDS): the first source that
// has credentials wins and is remembered. Errors other than NotFound stop the chain.
std::unique_ptr<CredentialsProvider> DefaultCredentialsChain();

// AWS_REGION, else AWS_DEFAULT_REGION, else the profile's `region` in the config file, else
// "us-east-1".
std::string ResolveRegion();

}  // namespace litmus::aws
