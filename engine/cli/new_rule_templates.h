// The files `litmus new-rule` writes, embedded at build time from engine/cli/templates/new_rule/
// (embed_templates.cmake generates new_rule_templates.cc). In the text, @NAME@ stands for the
// rule's name and @TARGET@ for the project's (snake_case) name, in file paths too.
// Thread-safety: immutable after first use.
#pragma once

#include <string_view>
#include <vector>

namespace litmus::cli {

struct NewRuleTemplate {
  std::string_view path;  // relative to the project folder
  std::string_view text;
};

// In the order they are written.
const std::vector<NewRuleTemplate>& NewRuleTemplates();

}  // namespace litmus::cli
