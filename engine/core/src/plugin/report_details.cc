// ReportDetails: report_detail's values, made canonical JSON when read.
#include "plugin/report_details.h"

#include <nlohmann/json.hpp>

namespace litmus {
namespace {

// `raw` as canonical JSON text (see ReportDetails::Json).
std::string CanonicalDetailJson(std::string_view raw) {
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  const nlohmann::json parsed = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? nlohmann::json(std::string(raw)).dump(-1, ' ', false, kReplace)
                               : parsed.dump(-1, ' ', false, kReplace);
}

}  // namespace

void ReportDetails::Set(std::string_view key, std::string_view raw_json) {
  if (const auto it = raw_.find(key); it != raw_.end()) {
    it->second.assign(raw_json);
    return;
  }
  raw_.emplace(std::string(key), std::string(raw_json));
}

std::map<std::string, std::string> ReportDetails::Json() const {
  std::map<std::string, std::string> out;
  for (const auto& [key, raw] : raw_) out.emplace_hint(out.end(), key, CanonicalDetailJson(raw));
  return out;
}

void ReportDetails::Restore(const std::map<std::string, std::string>& json) {
  raw_.clear();
  for (const auto& [key, text] : json) raw_.emplace_hint(raw_.end(), key, text);
}

}  // namespace litmus
