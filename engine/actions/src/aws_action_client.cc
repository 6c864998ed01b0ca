// AwsActionClient: SageMaker (JSON 1.1) and SNS (query protocol) calls of the actions.
#include "litmus/actions/aws_action_client.h"

#include <nlohmann/json.hpp>

namespace litmus::actions {
namespace {

using Json = nlohmann::json;
using Fields = std::vector<std::pair<std::string, std::string>>;

constexpr char kSnsVersion[] = "2010-03-31";

class AwsActionClient final : public ActionClient {
 public:
  explicit AwsActionClient(AwsActionClientOptions options) {
    aws::HttpTransport* transport = options.transport;
    if (!transport) {
      owned_transport_ = aws::NewCurlTransport({.connect_timeout = std::chrono::milliseconds(5000),
                                                .request_timeout = std::chrono::milliseconds(30000),
                                                .low_speed_time = std::chrono::seconds(10)});
      transport = owned_transport_.get();
    }
    aws::CredentialsProvider* credentials = options.credentials;
    if (!credentials) {
      owned_credentials_ = aws::DefaultCredentialsChain();
      credentials = owned_credentials_.get();
    }
    const std::string region = options.region.empty() ? aws::ResolveRegion() : options.region;
    const std::string sagemaker_endpoint =
        options.sagemaker_endpoint.empty()
            ? aws::ResolveEndpoint("SAGEMAKER", "api.sagemaker.{region}.amazonaws.com", region)
            : options.sagemaker_endpoint;
    const std::string sns_endpoint = options.sns_endpoint.empty()
                                         ? aws::ResolveEndpoint("SNS", "sns.{region}.amazonaws.com", region)
                                         : options.sns_endpoint;
    sagemaker_ = std::make_unique<aws::AwsClient>(transport, credentials, region, "sagemaker", sagemaker_endpoint,
                                                  options.retry);
    sns_ = std::make_unique<aws::AwsClient>(transport, credentials, region, "sns", sns_endpoint, options.retry);
  }

  StatusOr<TrainingJobPage> ListInProgressTrainingJobs(const std::string& name_contains,
                                                       const std::string& next_token) override {
    Json request = {{"NameContains", name_contains},
                    {"StatusEquals", "InProgress"},
                    {"SortBy", "CreationTime"},
                    {"SortOrder", "Descending"}};
    if (!next_token.empty()) request["NextToken"] = next_token;
    LITMUS_ASSIGN_OR_RETURN(Json answer, SageMaker("ListTrainingJobs", request));
    TrainingJobPage page;
    try {
      if (answer.contains("TrainingJobSummaries")) {
        for (const Json& job : answer.at("TrainingJobSummaries")) {
          page.jobs.push_back({job.value("TrainingJobName", ""), job.value("TrainingJobStatus", "")});
        }
      }
      page.next_token = answer.value("NextToken", "");
    } catch (const Json::exception& e) {
      return UnavailableError(std::string("sagemaker:ListTrainingJobs: unexpected answer: ") + e.what());
    }
    return page;
  }

  Status StopTrainingJob(const std::string& name) override {
    return SageMaker("StopTrainingJob", {{"TrainingJobName", name}}).status();
  }

  StatusOr<std::string> CreateTopic(const std::string& name) override {
    LITMUS_ASSIGN_OR_RETURN(std::string xml, Sns("CreateTopic", {{"Name", name}}));
    return ParseSnsCreateTopic(xml);
  }

  StatusOr<SnsSubscriptionPage> ListSubscriptions(const std::string& next_token) override {
    Fields fields;
    if (!next_token.empty()) fields.emplace_back("NextToken", next_token);
    LITMUS_ASSIGN_OR_RETURN(std::string xml, Sns("ListSubscriptions", fields));
    return ParseSnsListSubscriptions(xml);
  }

  Status Subscribe(const std::string& topic_arn, const std::string& protocol, const std::string& endpoint,
                   const std::string& filter_policy_json) override {
    return Sns("Subscribe", {{"TopicArn", topic_arn},
                             {"Protocol", protocol},
                             {"Endpoint", endpoint},
                             {"Attributes.entry.1.key", "FilterPolicy"},
                             {"Attributes.entry.1.value", filter_policy_json},
                             {"ReturnSubscriptionArn", "false"}})
        .status();
  }

  StatusOr<std::string> Publish(const std::string& topic_arn, const std::string& subject, const std::string& message,
                                const std::string& attribute_name, const std::string& attribute_value) override {
    LITMUS_ASSIGN_OR_RETURN(std::string xml, Sns("Publish", {{"TopicArn", topic_arn},
                                                             {"Message", message},
                                                             {"Subject", subject},
                                                             {"MessageAttributes.entry.1.Name", attribute_name},
                                                             {"MessageAttributes.entry.1.Value.DataType", "String"},
                                                             {"MessageAttributes.entry.1.Value.StringValue",
                                                              attribute_value}}));
    return ParseSnsPublish(xml);
  }

 private:
  // One JSON 1.1 call; the parsed answer of a 2xx response.
  StatusOr<Json> SageMaker(const std::string& operation, const Json& body) {
    const std::string what = "sagemaker:" + operation;
    auto response = sagemaker_->Send({.method = "POST",
                                      .url = sagemaker_->endpoint() + "/",
                                      .headers = {{"Content-Type", "application/x-amz-json-1.1"},
                                                  {"X-Amz-Target", "SageMaker." + operation}},
                                      .body = body.dump()});
    if (!response.ok()) return response.status().WithContext(what);
    if (response->status < 200 || response->status >= 300) {
      return UnavailableError(what + ": " + aws::DescribeAwsError(*response));
    }
    Json answer = Json::parse(response->body.empty() ? std::string("{}") : response->body, nullptr,
                              /*allow_exceptions=*/false);
    if (answer.is_discarded() || !answer.is_object()) {
      return UnavailableError(what + ": the answer (HTTP " + std::to_string(response->status) +
                              ") is not a JSON object");
    }
    return answer;
  }

  // One query-protocol call; the XML body of a 2xx response.
  StatusOr<std::string> Sns(const std::string& action, const Fields& params) {
    const std::string what = "sns:" + action;
    Fields fields = {{"Action", action}, {"Version", kSnsVersion}};
    fields.insert(fields.end(), params.begin(), params.end());
    auto response = sns_->Send({.method = "POST",
                                .url = sns_->endpoint() + "/",
                                .headers = {{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"}},
                                .body = FormEncode(fields)});
    if (!response.ok()) return response.status().WithContext(what);
    if (response->status < 200 || response->status >= 300) {
      return UnavailableError(what + ": " + aws::DescribeAwsError(*response));
    }
    return std::move(response->body);
  }

  std::unique_ptr<aws::HttpTransport> owned_transport_;
  std::unique_ptr<aws::CredentialsProvider> owned_credentials_;
  std::unique_ptr<aws::AwsClient> sagemaker_;
  std::unique_ptr<aws::AwsClient> sns_;
};

}  // namespace

std::string FormEncode(const Fields& fields) {
  std::string body;
  for (const auto& [name, value] : fields) {
    if (!body.empty()) body.push_back('&');
    body += aws::UriEncode(name) + "=" + aws::UriEncode(value);
  }
  return body;
}

std::unique_ptr<ActionClient> NewAwsActionClient(AwsActionClientOptions options) {
  return std::make_unique<AwsActionClient>(std::move(options));
}

}  // namespace litmus::actions
