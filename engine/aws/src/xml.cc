// Minimal XML element reader (xml.h). Tags are matched textually: "<name" followed by '>', '/'
// or whitespace, so <Key> never matches <KeyCount>.
#include "litmus/aws/xml.h"

#include <cstdint>

namespace litmus::aws {
namespace {

bool IsTagEnd(char c) { return c == '>' || c == '/' || c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Offset of the next "<name" start tag at or after `from`, skipping comments and CDATA.
size_t FindOpenTag(std::string_view xml, std::string_view name, size_t from) {
  while (from < xml.size()) {
    const size_t lt = xml.find('<', from);
    if (lt == std::string_view::npos) return std::string_view::npos;
    if (xml.substr(lt, 4) == "<!--") {
      const size_t close = xml.find("-->", lt + 4);
      if (close == std::string_view::npos) return std::string_view::npos;
      from = close + 3;
      continue;
    }
    if (xml.substr(lt, 9) == "<![CDATA[") {
      const size_t close = xml.find("]]>", lt + 9);
      if (close == std::string_view::npos) return std::string_view::npos;
      from = close + 3;
      continue;
    }
    const size_t after = lt + 1 + name.size();
    if (after < xml.size() && xml.substr(lt + 1, name.size()) == name && IsTagEnd(xml[after])) return lt;
    from = lt + 1;
  }
  return std::string_view::npos;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x110000) {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::optional<std::string_view> XmlElement(std::string_view xml, std::string_view name, size_t from, size_t* end) {
  const size_t open = FindOpenTag(xml, name, from);
  if (open == std::string_view::npos) return std::nullopt;
  const size_t gt = xml.find('>', open);
  if (gt == std::string_view::npos) return std::nullopt;
  if (xml[gt - 1] == '/') {  // <name/>: empty content, located just after the tag
    if (end != nullptr) *end = gt + 1;
    return xml.substr(gt + 1, 0);
  }
  // Match nested elements of the same name by depth.
  size_t depth = 1, cursor = gt + 1;
  const std::string close_tag = "</" + std::string(name) + ">";
  while (true) {
    const size_t next_close = xml.find(close_tag, cursor);
    if (next_close == std::string_view::npos) return std::nullopt;
    const size_t next_open = FindOpenTag(xml, name, cursor);
    if (next_open != std::string_view::npos && next_open < next_close) {
      const size_t nested_gt = xml.find('>', next_open);
      if (nested_gt == std::string_view::npos) return std::nullopt;
      if (xml[nested_gt - 1] != '/') ++depth;
      cursor = nested_gt + 1;
      continue;
    }
    if (--depth == 0) {
      if (end != nullptr) *end = next_close + close_tag.size();
      return xml.substr(gt + 1, next_close - gt - 1);
    }
    cursor = next_close + close_tag.size();
  }
}

std::optional<std::string> XmlText(std::string_view xml, std::string_view name) {
  const std::optional<std::string_view> content = XmlElement(xml, name);
  if (!content) return std::nullopt;
  return XmlUnescape(*content);
}

void XmlForEach(std::string_view xml, std::string_view name, const std::function<void(std::string_view)>& visit) {
  size_t from = 0;
  while (from < xml.size()) {
    size_t end = 0;
    const std::optional<std::string_view> content = XmlElement(xml, name, from, &end);
    if (!content) return;
    visit(*content);
    from = end;
  }
}

std::string XmlUnescape(std::string_view content) {
  std::string out;
  out.reserve(content.size());
  size_t i = 0;
  while (i < content.size()) {
    if (content.substr(i, 9) == "<![CDATA[") {
      const size_t close = content.find("]]>", i + 9);
      const size_t stop = close == std::string_view::npos ? content.size() : close;
      out.append(content.substr(i + 9, stop - i - 9));
      i = close == std::string_view::npos ? content.size() : close + 3;
      continue;
    }
    if (content[i] != '&') {
      out += content[i++];
      continue;
    }
    const size_t semi = content.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
      out += content[i++];
      continue;
    }
    const std::string_view entity = content.substr(i + 1, semi - i - 1);
    if (entity == "lt") {
      out += '<';
    } else if (entity == "gt") {
      out += '>';
    } else if (entity == "amp") {
      out += '&';
    } else if (entity == "quot") {
      out += '"';
    } else if (entity == "apos") {
      out += '\'';
    } else if (entity.size() > 1 && entity[0] == '#') {
      const bool hex = entity[1] == 'x' || entity[1] == 'X';
      uint32_t cp = 0;
      bool valid = entity.size() > (hex ? 2u : 1u);
      for (size_t k = hex ? 2 : 1; k < entity.size() && valid; ++k) {
        const char c = entity[k];
        uint32_t digit = 0;
        if (c >= '0' && c <= '9') {
          digit = static_cast<uint32_t>(c - '0');
        } else if (hex && c >= 'a' && c <= 'f') {
          digit = static_cast<uint32_t>(c - 'a' + 10);
        } else if (hex && c >= 'A' && c <= 'F') {
          digit = static_cast<uint32_t>(c - 'A' + 10);
        } else {
          valid = false;
        }
        cp = cp * (hex ? 16 : 10) + digit;
        if (cp > 0x10FFFF) valid = false;
      }
      if (!valid) {
        out += content[i++];
        continue;
      }
      AppendUtf8(cp, &out);
    } else {
      out += content[i++];
      continue;
    }
    i = semi + 1;
  }
  return out;
}

}  // namespace litmus::aws
