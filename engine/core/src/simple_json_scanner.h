// ScanSimpleJson: a fast path in front of nlohmann_json's SAX parser for the JSON that training
// jobs write (index files: ASCII names without escapes, non-negative integers). It walks the
// text once and calls the same SAX handler methods, with the same values, in the same order as
// nlohmann::json::sax_parse would, but only while the text stays inside a simple subset of
// JSON: strings of printable ASCII without escapes, integers without sign, fraction or exponent
// (at most 19 digits), true/false/null, objects and arrays, the four JSON whitespace bytes, no
// byte-order mark. On anything else, including every syntax error, it stops and returns false
// without deciding anything: the caller then parses the whole text again with nlohmann (with a
// fresh handler), so results and errors are always nlohmann's. tests/unit/engine/
// simple_json_scanner_test.cc compares the events of both on valid, mutated and random texts.
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace litmus {

// Handler: nlohmann's json_sax interface subset used here, each returning bool (false stops):
//   null(), boolean(bool), number_unsigned(uint64_t), string(std::string&), key(std::string&),
//   start_object(size_t), end_object(), start_array(size_t), end_array().
// Returns true if the whole text was scanned and every handler call returned true.
template <typename Handler>
bool ScanSimpleJson(std::string_view text, Handler& handler) {
  const char* p = text.data();
  const char* const end = p + text.size();
  const auto skip_space = [&] {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
  };
  // A string at p (after its opening quote); on success p is past the closing quote.
  const auto scan_string = [&](std::string* out) {
    const char* const start = p;
    while (p < end) {
      const unsigned char c = static_cast<unsigned char>(*p);
      if (c == '"') {
        out->assign(start, p);
        ++p;
        return true;
      }
      if (c < 0x20 || c >= 0x7f || c == '\\') return false;  // escapes, control bytes, non-ASCII
      ++p;
    }
    return false;
  };
  // A member's key and its colon, at p (after whitespace); on success p is past the colon.
  std::string scratch;
  const auto scan_key = [&] {
    if (p == end || *p != '"') return false;
    ++p;
    if (!scan_string(&scratch) || !handler.key(scratch)) return false;
    skip_space();
    if (p == end || *p != ':') return false;
    ++p;
    return true;
  };
  const auto matches = [&](std::string_view word) {
    if (static_cast<size_t>(end - p) < word.size() || std::string_view(p, word.size()) != word) return false;
    p += word.size();
    return true;
  };

  // Containers we are inside: true for an object, false for an array (nlohmann passes -1 as
  // the element count of start_object/start_array: unknown).
  std::vector<bool> stack;
  // States: expecting a value (after '[', ',' in an array, ':' or at the top), or after a value.
  bool want_value = true;
  skip_space();
  if (p == end) return false;
  while (true) {
    if (want_value) {
      skip_space();
      if (p == end) return false;
      const char c = *p;
      if (c == '{' || c == '[') {
        ++p;
        const bool object = c == '{';
        if (!(object ? handler.start_object(static_cast<size_t>(-1)) : handler.start_array(static_cast<size_t>(-1)))) {
          return false;
        }
        skip_space();
        if (p < end && *p == (object ? '}' : ']')) {  // empty container
          ++p;
          if (!(object ? handler.end_object() : handler.end_array())) return false;
          want_value = false;
          continue;
        }
        stack.push_back(object);
        if (object && !scan_key()) return false;  // the first key
        continue;                                 // a value next
      }
      if (c == '"') {
        ++p;
        if (!scan_string(&scratch) || !handler.string(scratch)) return false;
      } else if (c >= '0' && c <= '9') {
        const char* const start = p;
        uint64_t value = 0;
        while (p < end && *p >= '0' && *p <= '9') value = value * 10 + static_cast<uint64_t>(*p++ - '0');
        const size_t digits = static_cast<size_t>(p - start);
        if (digits > 19 || (digits > 1 && *start == '0')) return false;  // may overflow; leading zero
        if (p < end && (*p == '.' || *p == 'e' || *p == 'E')) return false;  // not an integer
        if (!handler.number_unsigned(value)) return false;
      } else if (matches("true")) {
        if (!handler.boolean(true)) return false;
      } else if (matches("false")) {
        if (!handler.boolean(false)) return false;
      } else if (matches("null")) {
        if (!handler.null()) return false;
      } else {
        return false;  // '-', a stray byte, a syntax error
      }
      want_value = false;
      continue;
    }
    // After a value: ',' or the end of the enclosing container, or the end of the text.
    skip_space();
    if (stack.empty()) return p == end;
    if (p == end) return false;
    const bool object = stack.back();
    if (*p == ',') {
      ++p;
      if (object) {
        skip_space();
        if (!scan_key()) return false;
      }
      want_value = true;
      continue;
    }
    if (*p != (object ? '}' : ']')) return false;
    ++p;
    stack.pop_back();
    if (!(object ? handler.end_object() : handler.end_array())) return false;
  }
}

}  // namespace litmus
