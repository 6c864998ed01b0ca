// The SNS query-protocol answers the AWS action client reads (aws_action_client.h), parsed with
// pugixml through litmus::aws's XML helpers. Kept apart from the client so the fuzzer can build it
// alone. Pure functions; thread-safe.
#include "litmus/actions/aws_action_client.h"
#include "litmus/aws/xml.h"

namespace litmus::actions {
namespace {

// The <{action}Result> element under the <{action}Response> root; empty if either is missing.
pugi::xml_node ResultOf(const pugi::xml_document& document, const std::string& action) {
  const pugi::xml_node root = document.document_element();
  if (aws::XmlLocalName(root) != action + "Response") return {};
  return aws::XmlChild(root, action + "Result");
}

}  // namespace

StatusOr<std::string> ParseSnsCreateTopic(std::string_view xml) {
  LITMUS_ASSIGN_OR_RETURN(const pugi::xml_document document, aws::ParseXml(xml, "sns:CreateTopic: the answer"));
  std::optional<std::string> arn = aws::XmlChildText(ResultOf(document, "CreateTopic"), "TopicArn");
  if (!arn || arn->empty()) return UnavailableError("sns:CreateTopic: the answer has no TopicArn");
  return std::move(*arn);
}

StatusOr<SnsSubscriptionPage> ParseSnsListSubscriptions(std::string_view xml) {
  LITMUS_ASSIGN_OR_RETURN(const pugi::xml_document document,
                          aws::ParseXml(xml, "sns:ListSubscriptions: the answer"));
  const pugi::xml_node result = ResultOf(document, "ListSubscriptions");
  if (!result) return UnavailableError("sns:ListSubscriptions: the answer has no ListSubscriptionsResult");
  SnsSubscriptionPage page;
  for (pugi::xml_node member : aws::XmlChild(result, "Subscriptions").children()) {
    if (member.type() != pugi::node_element || aws::XmlLocalName(member) != "member") continue;
    page.subscriptions.push_back({aws::XmlChildText(member, "Protocol").value_or(""),
                                  aws::XmlChildText(member, "Endpoint").value_or(""),
                                  aws::XmlChildText(member, "TopicArn").value_or("")});
  }
  page.next_token = aws::XmlChildText(result, "NextToken").value_or("");
  return page;
}

std::string ParseSnsPublish(std::string_view xml) {
  StatusOr<pugi::xml_document> document = aws::ParseXml(xml, "sns:Publish: the answer");
  if (!document.ok()) return "";
  return aws::XmlChildText(ResultOf(*document, "Publish"), "MessageId").value_or("");
}

}  // namespace litmus::actions
