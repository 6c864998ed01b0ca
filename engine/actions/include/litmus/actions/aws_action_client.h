// The real ActionClient: SageMaker over the JSON 1.1 protocol (POST /, X-Amz-Target:
// SageMaker.<Operation>, signing name "sagemaker") and SNS over the query protocol (POST / of a
// form-encoded body with Action and Version=2010-03-31, XML answers, signing name "sns"), both
// through litmus::aws::AwsClient (SigV4, retries). Thread-safety: as ActionClient.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "litmus/actions/action_client.h"
#include "litmus/aws/aws_client.h"
#include "litmus/aws/credentials.h"
#include "litmus/aws/http.h"

namespace litmus::actions {

struct AwsActionClientOptions {
  // Borrowed overrides for tests; nullptr/empty = the real thing: a curl transport with short
  // timeouts (an action must not hold a rule job for minutes), DefaultCredentialsChain(),
  // ResolveRegion() (AWS_REGION, AWS_DEFAULT_REGION, the profile, else us-east-1), and
  // ResolveEndpoint("SAGEMAKER" | "SNS", ...) (AWS_ENDPOINT_URL_SAGEMAKER / AWS_ENDPOINT_URL_SNS,
  // else AWS_ENDPOINT_URL, else the regional AWS host).
  aws::HttpTransport* transport = nullptr;
  aws::CredentialsProvider* credentials = nullptr;
  std::string region;
  std::string sagemaker_endpoint;
  std::string sns_endpoint;
  // Per call; the callers add their own limits (StopTraining gives up after 5 failed pages).
  aws::RetryPolicy retry{.max_attempts = 3,
                         .base_delay = std::chrono::milliseconds(200),
                         .max_delay = std::chrono::milliseconds(2000)};
};

std::unique_ptr<ActionClient> NewAwsActionClient(AwsActionClientOptions options = {});

// The pieces of the protocols, exposed for tests.
// application/x-www-form-urlencoded body of `fields` in order (RFC 3986 percent-encoding).
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields);

// The SNS answers (2xx bodies: <{Action}Response><{Action}Result>...), parsed with pugixml; also
// fuzzed (tests/fuzz/fuzz_s3_listing.cc). Unavailable, naming the action, if the answer is not
// well-formed XML or lacks what the caller needs.
StatusOr<std::string> ParseSnsCreateTopic(std::string_view xml);  // the TopicArn
StatusOr<SnsSubscriptionPage> ParseSnsListSubscriptions(std::string_view xml);
// The MessageId, "" if the answer has none: SNS accepted the message, the id is only reported.
std::string ParseSnsPublish(std::string_view xml);

}  // namespace litmus::actions
