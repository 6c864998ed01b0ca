// ParseActionJson / ParseRuleActions: action_json (raw or backslash-escaped JSON) -> ActionSpecs.
#include "litmus/actions/action_spec.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "litmus/actions/endpoint_mask.h"

namespace litmus::actions {
namespace {

using Json = nlohmann::json;

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool IsBlank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); });
}

// Undoes the escapes of a Python string literal that rulesconfig's serialization leaves in the
// value (\" \\ \'); other backslash sequences are kept, since they are JSON escapes.
std::string UndoPythonEscapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\' || text[i + 1] == '\'')) {
      out.push_back(text[++i]);
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; keep what follows.
std::string ShortParseError(const std::string& what) {
  const auto bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

// The string value of `key`, nullopt if absent or null; InvalidArgument if not a string.
StatusOr<std::optional<std::string>> OptionalString(const Json& object, const char* key, std::string_view origin,
                                                    std::string_view action) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) {
    return InvalidArgumentError(std::string(origin) + ": " + std::string(action) + " " + key +
                                " must be a string, got a JSON " + it->type_name());
  }
  return std::optional<std::string>(it->get<std::string>());
}

void Note(std::vector<std::string>* notes, std::string line) {
  if (notes) notes->push_back(std::move(line));
}

Status CheckPrefix(const std::string& prefix, std::string_view origin) {
  static const std::regex kPrefix("^[a-z0-9-]+$");
  if (std::regex_match(prefix, kPrefix)) return OkStatus();
  return InvalidArgumentError(std::string(origin) + ": stoptraining training_job_prefix '" + prefix +
                              "' is invalid: a training job name has only letters, digits and '-'");
}

Status CheckPhone(const std::string& endpoint, std::string_view origin) {
  static const std::regex kE164("^\\+[0-9]{1,15}$");
  if (std::regex_match(endpoint, kE164)) return OkStatus();
  return InvalidArgumentError(std::string(origin) + ": sms endpoint " + MaskEndpoint(endpoint) +
                              " is not an E.164 phone number ('+' and 1 to 15 digits)");
}

Status CheckEmail(const std::string& endpoint, std::string_view origin, std::vector<std::string>* notes) {
  // rulesconfig's pattern (with Python's \w limited to ASCII after lower-casing).
  static const std::regex kRulesConfig("^[a-z0-9]+@\\w+\\.\\w{2,3}$");
  static const std::regex kAddress("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$");
  if (std::regex_match(endpoint, kRulesConfig)) return OkStatus();
  if (std::regex_match(endpoint, kAddress)) {
    Note(notes, std::string(origin) + ": email endpoint " + MaskEndpoint(endpoint) +
                    " does not match the SageMaker SDK's pattern ^[a-z0-9]+@\\w+\\.\\w{2,3}$, which rejects many "
                    "valid addresses (a '.' before the '@', a domain of more than two parts); using it anyway");
    return OkStatus();
  }
  return InvalidArgumentError(std::string(origin) + ": email endpoint " + MaskEndpoint(endpoint) +
                              " is not an e-mail address");
}

StatusOr<std::optional<ActionSpec>> ParseOne(const Json& item, std::string_view origin,
                                             std::vector<std::string>* notes) {
  if (!item.is_object()) {
    Note(notes, std::string(origin) + ": expected an object for an action, got a JSON " + item.type_name() +
                    "; skipped");
    return std::optional<ActionSpec>();
  }
  const auto name_it = item.find("name");
  if (name_it == item.end() || !name_it->is_string()) {
    Note(notes, std::string(origin) +
                    ": an action without a name is skipped (allowed names: stoptraining, email, sms)");
    return std::optional<ActionSpec>();
  }
  const std::string name = name_it->get<std::string>();
  ActionSpec spec;
  if (name == "stoptraining") {
    LITMUS_ASSIGN_OR_RETURN(std::optional<std::string> prefix,
                            OptionalString(item, "training_job_prefix", origin, name));
    if (!prefix) {
      Note(notes, std::string(origin) + ": stoptraining requires 'training_job_prefix'; skipped");
      return std::optional<ActionSpec>();
    }
    LITMUS_RETURN_IF_ERROR(CheckPrefix(*prefix, origin));
    spec = {ActionKind::kStopTraining, *prefix};
  } else if (name == "email" || name == "sms") {
    LITMUS_ASSIGN_OR_RETURN(std::optional<std::string> endpoint, OptionalString(item, "endpoint", origin, name));
    if (!endpoint) {
      Note(notes, std::string(origin) + ": " + name + " requires 'endpoint'; skipped");
      return std::optional<ActionSpec>();
    }
    if (name == "sms") {
      LITMUS_RETURN_IF_ERROR(CheckPhone(*endpoint, origin));
      spec = {ActionKind::kSms, *endpoint};
    } else {
      LITMUS_RETURN_IF_ERROR(CheckEmail(*endpoint, origin, notes));
      spec = {ActionKind::kEmail, *endpoint};
    }
  } else {
    Note(notes, std::string(origin) + ": action '" + name.substr(0, 40) +
                    "' is not supported and is ignored (allowed names: stoptraining, email, sms)");
    return std::optional<ActionSpec>();
  }
  return std::optional<ActionSpec>(std::move(spec));
}

}  // namespace

std::string_view ActionKindName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kStopTraining: return "stoptraining";
    case ActionKind::kEmail: return "email";
    case ActionKind::kSms: return "sms";
  }
  return "stoptraining";
}

StatusOr<std::vector<ActionSpec>> ParseActionJson(std::string_view text, std::string_view origin,
                                                  std::vector<std::string>* notes) {
  std::vector<ActionSpec> specs;
  if (IsBlank(text)) return specs;
  const std::string lowered = AsciiLower(text);
  Json json = Json::parse(lowered, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    try {
      json = Json::parse(UndoPythonEscapes(lowered));
    } catch (const Json::parse_error& e) {
      // Quote the parser's complaint about the escaped form only if the raw form was not JSON
      // either; endpoints may be inside, so the text itself is not quoted.
      return InvalidArgumentError(std::string(origin) + " is not valid JSON (raw or backslash-escaped): " +
                                  ShortParseError(e.what()));
    }
  }
  std::vector<Json> items;
  if (json.is_object()) {
    items.push_back(json);
  } else if (json.is_array()) {
    items.assign(json.begin(), json.end());
  } else {
    return InvalidArgumentError(std::string(origin) + ": expected a JSON object or a list of objects, got a JSON " +
                                json.type_name());
  }
  for (const Json& item : items) {
    LITMUS_ASSIGN_OR_RETURN(std::optional<ActionSpec> spec, ParseOne(item, origin, notes));
    if (spec) specs.push_back(std::move(*spec));
  }
  return specs;
}

StatusOr<std::vector<ActionSpec>> ParseRuleActions(std::string_view action_json,
                                                   const std::vector<std::string>& extra_action_jsons,
                                                   std::vector<std::string>* notes) {
  std::vector<ActionSpec> all;
  LITMUS_ASSIGN_OR_RETURN(all, ParseActionJson(action_json, "action_json", notes));
  for (size_t i = 0; i < extra_action_jsons.size(); ++i) {
    LITMUS_ASSIGN_OR_RETURN(std::vector<ActionSpec> more,
                            ParseActionJson(extra_action_jsons[i], "add_action #" + std::to_string(i + 1), notes));
    all.insert(all.end(), more.begin(), more.end());
  }
  std::vector<ActionSpec> unique;
  for (ActionSpec& spec : all) {
    if (std::find(unique.begin(), unique.end(), spec) != unique.end()) {
      Note(notes, std::string(ActionKindName(spec.kind)) + " action for " + DisplayTarget(spec) +
                      " is configured twice; it runs once");
      continue;
    }
    unique.push_back(std::move(spec));
  }
  return unique;
}

}  // namespace litmus::actions
