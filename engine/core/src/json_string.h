// AppendJsonString: a string as a JSON string literal, exactly as nlohmann::json's
// dump(-1, ' ', false, error_handler_t::replace) writes it (the project's JSON files and event
// lines are written both ways and must agree byte for byte). Plain printable ASCII, what names
// and messages nearly always are, is copied between the quotes without building a JSON value.
#pragma once

#include <string>
#include <string_view>

namespace litmus {

void AppendJsonString(std::string& out, std::string_view s);

}  // namespace litmus
