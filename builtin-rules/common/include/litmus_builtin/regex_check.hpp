// Validation of regex parameters when a rule is created. The host owns the regex engine (Python
// re.search semantics), so a pattern is checked by one tensor_names query; a pattern it refuses
// becomes a configuration error naming the key ("tensor_regex: invalid regex '(': ...") instead of
// a rule failure at the first step. Header-only on the public SDK; call from a rule's constructor.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "litmus/rule.hpp"

namespace litmus_builtin {

// Throws litmus::InvalidConfig when the host refuses one of `regexes` (parameter `key`).
inline void CheckRegexes(litmus::Rule& rule, std::string_view key,
                         const std::vector<std::string>& regexes) {
  for (const std::string& regex : regexes) {
    try {
      rule.base_trial().tensor_names({.regex = regex});
    } catch (const litmus::InvalidArgument&) {
      throw litmus::InvalidConfig(std::string(key) + ": invalid regex '" + regex + "'");
    }
  }
}

}  // namespace litmus_builtin
