// AppendJsonString: JSON string literals, fast for printable ASCII.
#include "json_string.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace litmus {

void AppendJsonString(std::string& out, std::string_view s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
  if (!plain) {
    out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out += '"';
  out += s;
  out += '"';
}

}  // namespace litmus
