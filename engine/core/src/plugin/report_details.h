// ReportDetails: what a rule said with report_detail (key -> JSON text), kept as the plugin gave
// it and made canonical JSON only when read. Rules report their details at every step (each
// tensor's value, the step, ...) and a later step's value replaces the earlier one, so parsing
// each value as it arrives (nlohmann) cost ~6 % of the runner with 20 rules on small tensors,
// while the rule report and the checkpoint read the details only now and then.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace litmus {

class ReportDetails {
 public:
  // Records `raw_json` for `key`, replacing what the key had (no allocation once the key's text
  // has room).
  void Set(std::string_view key, std::string_view raw_json);
  // Every key's value as canonical JSON text: the value parsed and written compactly, or, if it
  // does not parse, the text as a JSON string (invalid UTF-8 replaced).
  std::map<std::string, std::string> Json() const;
  // Replaces everything with `json` (texts Json() returned, as a checkpoint keeps them).
  void Restore(const std::map<std::string, std::string>& json);

 private:
  std::map<std::string, std::string, std::less<>> raw_;
};

}  // namespace litmus
