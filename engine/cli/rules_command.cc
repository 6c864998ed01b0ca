// `litmus rules`: loads plugins like `litmus run` and prints their metadata.
#include "rules_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <vector>

#include "exit_codes.h"
#include "plugin/plugin_loader.h"

namespace litmus::cli {
namespace {

// Prints rows of cells as left-aligned columns (the last column is not padded).
void PrintTable(const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::cout << line << "\n";
  }
}

int ListRules(const PluginRegistry& registry) {
  const std::vector<const LoadedRule*> rules = registry.rules();
  if (rules.empty()) {
    std::string searched;
    for (const std::string& dir : registry.searched_directories()) searched += (searched.empty() ? "" : ", ") + dir;
    std::cout << "no rules found (plugin folders searched: " << (searched.empty() ? "none" : searched)
              << "); load plugins with --plugin FILE or --plugin-dir DIR\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows = {{"RULE", "PLUGIN", "DESCRIPTION"}};
  for (const LoadedRule* rule : rules) rows.push_back({rule->name, rule->plugin_name, rule->description});
  PrintTable(rows, "");
  return kExitOk;
}

int DescribeRule(const LoadedRule& rule) {
  std::cout << rule.name << (rule.version.empty() ? "" : " " + rule.version) << "\n";
  if (!rule.description.empty()) std::cout << "  " << rule.description << "\n";
  std::cout << "  plugin: " << rule.plugin_name << " (" << rule.plugin_path << ")\n";
  std::cout << "\n";
  if (rule.params.empty()) {
    std::cout << "Parameters: none\n";
    return kExitOk;
  }
  std::cout << "Parameters:\n";
  std::vector<std::vector<std::string>> rows = {{"NAME", "TYPE", "DEFAULT", "DESCRIPTION"}};
  for (const LoadedRule::Param& p : rule.params) {
    rows.push_back({p.name, p.type.empty() ? "-" : p.type,
                    p.required ? "required" : (p.default_value.empty() ? "\"\"" : p.default_value), p.description});
  }
  PrintTable(rows, "  ");
  return kExitOk;
}

}  // namespace

RulesOptions& AddRulesCommand(CLI::App& app) {
  static RulesOptions options;
  CLI::App* cmd =
      app.add_subcommand("rules", "List the rules of the available plugins, or describe one rule's parameters");
  cmd->add_option("name", options.name,
                  "Rule to describe (class name, case-insensitive, or snake_case like vanishing_gradient)");
  AddPluginOptions(cmd, &options.plugins);
  return options;
}

int RunRules(const RulesOptions& options) {
  PluginRegistry registry;
  if (Status s = LoadPluginOptions(options.plugins, registry); !s.ok()) return Fail(kExitBadInput, s.message());
  if (options.name.empty()) return ListRules(registry);
  StatusOr<const LoadedRule*> rule = registry.FindRule(options.name);
  if (!rule.ok()) return Fail(kExitBadInput, rule.status().message());
  return DescribeRule(**rule);
}

}  // namespace litmus::cli
