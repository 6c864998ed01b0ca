// AWS's XML answers (S3 listings and errors, query-protocol answers such as SNS) read with
// pugixml, a real parser: entities, character references and CDATA are decoded, and a document
// that is not well-formed is refused rather than guessed at. Elements are found by local name (a
// namespace prefix is ignored; S3 and SNS put a default xmlns on the root). Thread-safety: pure
// functions; a parsed document is read by one thread at a time.
#pragma once

#include <optional>
#include <pugixml.hpp>
#include <string>
#include <string_view>

#include "litmus/status.h"

namespace litmus::aws {

// Parses `text` (UTF-8) as one XML document. Whitespace-only text is kept (an S3 key may be " ");
// no DTD is read and no entity but the five predefined ones and character references exists, so
// nothing is fetched or expanded. Unavailable if it is not well-formed, naming `what` (e.g. "the
// ListObjectsV2 answer"), the fault and its byte offset: an answer cut short or a proxy's page may
// be worth retrying.
StatusOr<pugi::xml_document> ParseXml(std::string_view text, std::string_view what);

// The element's name without its namespace prefix ("s3:Key" -> "Key").
std::string_view XmlLocalName(pugi::xml_node node);

// The first child element of `parent` whose local name is `name`; an empty node if none.
pugi::xml_node XmlChild(pugi::xml_node parent, std::string_view name);

// The text of that child (its text and CDATA, decoded and concatenated); nullopt if there is no
// such child or it holds elements rather than text.
std::optional<std::string> XmlChildText(pugi::xml_node parent, std::string_view name);

// Code and Message of an AWS error document: the first <Error> element, the root itself (S3) or
// nested (query protocol: <ErrorResponse><Error>...). nullopt if `text` is not well-formed XML or
// has no Error element; a missing Code or Message is "".
struct AwsXmlError {
  std::string code;
  std::string message;
};
std::optional<AwsXmlError> ParseAwsXmlError(std::string_view text);

}  // namespace litmus::aws
