// AWS XML answers through pugixml (xml.h).
#include "litmus/aws/xml.h"

namespace litmus::aws {
namespace {

// pugixml's defaults (CDATA, escapes, end-of-line normalisation as XML requires) plus
// whitespace-only text nodes, which the defaults drop: <Key> </Key> names the key " ".
constexpr unsigned int kParseOptions = pugi::parse_default | pugi::parse_ws_pcdata;

}  // namespace

StatusOr<pugi::xml_document> ParseXml(std::string_view text, std::string_view what) {
  pugi::xml_document document;
  const pugi::xml_parse_result result =
      document.load_buffer(text.data(), text.size(), kParseOptions, pugi::encoding_utf8);
  if (!result) {
    return UnavailableError(std::string(what) + " is not well-formed XML (" + result.description() + " at byte " +
                            std::to_string(result.offset) + " of " + std::to_string(text.size()) + ")");
  }
  return document;
}

std::string_view XmlLocalName(pugi::xml_node node) {
  const std::string_view name = node.name();
  const size_t colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

pugi::xml_node XmlChild(pugi::xml_node parent, std::string_view name) {
  for (pugi::xml_node child : parent.children()) {
    if (child.type() == pugi::node_element && XmlLocalName(child) == name) return child;
  }
  return {};
}

std::optional<std::string> XmlChildText(pugi::xml_node parent, std::string_view name) {
  const pugi::xml_node child = XmlChild(parent, name);
  if (!child) return std::nullopt;
  std::string text;
  for (pugi::xml_node part : child.children()) {
    if (part.type() == pugi::node_element) return std::nullopt;
    if (part.type() == pugi::node_pcdata || part.type() == pugi::node_cdata) text += part.value();
  }
  return text;
}

std::optional<AwsXmlError> ParseAwsXmlError(std::string_view text) {
  StatusOr<pugi::xml_document> document = ParseXml(text, "the error answer");
  if (!document.ok()) return std::nullopt;
  const pugi::xml_node error = document->find_node(
      [](pugi::xml_node node) { return node.type() == pugi::node_element && XmlLocalName(node) == "Error"; });
  if (!error) return std::nullopt;
  return AwsXmlError{.code = XmlChildText(error, "Code").value_or(""),
                     .message = XmlChildText(error, "Message").value_or("")};
}

}  // namespace litmus::aws
