// Text that goes into the HTML report: escaped for HTML element content and attribute values, and
// JSON made safe inside a <script> element (rule names, messages and tensor names can hold
// < & " ' or "</script>"). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

namespace litmus::report {

// & < > " ' as character references: safe in element content and in quoted attribute values.
std::string EscapeHtml(std::string_view text);

// `value` as JSON text that can stand inside <script>…</script> as a JavaScript expression:
// < > & are written \u003c \u003e \u0026 (they only occur inside JSON strings, where the escape
// means the same character), so no "</script>" or "<!--" can end or change the element. Invalid
// UTF-8 in strings becomes U+FFFD instead of throwing.
std::string ScriptJson(const nlohmann::json& value);

// The same for text written straight into a page's JSON (report_page.cc builds its chart data
// without a JSON document): `text` as a script-safe JSON string appended to `out` (invalid UTF-8
// as U+FFFD); a double as its shortest round-trip text, or null when not finite (JSON has no
// NaN or infinity; the charts leave a gap); an integer.
void AppendScriptString(std::string& out, std::string_view text);
void AppendJsonNumber(std::string& out, double value);
void AppendJsonInt(std::string& out, int64_t value);

// `bytes` as a JSON string of their base64 (RFC 4648, with padding): script-safe as it is (the
// alphabet holds no character to escape). The page's chart data (report_page.cc) is binary:
// doubles as they are, decoded by the page's script, instead of millions of numbers as text.
void AppendBase64String(std::string& out, std::span<const std::byte> bytes);

}  // namespace litmus::report
