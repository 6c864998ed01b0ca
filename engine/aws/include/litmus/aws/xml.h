// Minimal reader for the flat XML documents AWS services answer with (S3 listings and errors,
// query-protocol responses such as SNS): finds elements by name and unescapes their text. No
// DTDs, namespaces are ignored, nesting is found by matching tags; malformed input never reads
// out of bounds (it yields "not found"). Pure functions; thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace litmus::aws {

// The raw content between <name ...> and the matching </name> of the first such element at or
// after `from`, or nullopt. `*end` (if given) receives the offset just past the closing tag.
// A self-closing <name/> gives "".
std::optional<std::string_view> XmlElement(std::string_view xml, std::string_view name, size_t from = 0,
                                           size_t* end = nullptr);

// XmlElement's content with entities (&lt; &gt; &amp; &quot; &apos; &#N; &#xN;) and CDATA
// decoded; nullopt if absent.
std::optional<std::string> XmlText(std::string_view xml, std::string_view name);

// Calls `visit` with the content of every <name> element, in document order, not descending into
// a match (so nested elements of the same name are part of their parent's content).
void XmlForEach(std::string_view xml, std::string_view name, const std::function<void(std::string_view)>& visit);

// Decodes entities and CDATA sections of element content.
std::string XmlUnescape(std::string_view content);

}  // namespace litmus::aws
