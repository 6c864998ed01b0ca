// `litmus rules`: loads plugins like `litmus run` and prints their metadata, as tables or (--json)
// as one JSON document. Defaults are shown by what they mean to the rule (the SDK's parameter
// parsing, rule.hpp): "" and "None" are "not set" (None / null; "(empty list)" / [] for a list),
// a list default is its comma-separated items.
#include "rules_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string_view>
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

using Json = nlohmann::ordered_json;

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

// As the SDK reads a parameter's text (rule.hpp, params::IsUnset and params::SplitList).
bool IsUnset(std::string_view text) {
  const std::string_view t = Trim(text);
  return t.empty() || t == "None";
}
std::vector<std::string> ListItems(std::string_view text) {
  std::vector<std::string> items;
  if (IsUnset(text)) return items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = Trim(text.substr(start, comma - start));
    if (!item.empty()) items.emplace_back(item);
    start = comma + 1;
  }
  return items;
}

// The DEFAULT column of `litmus rules NAME`.
std::string DefaultText(const LoadedRule::Param& p) {
  if (p.required) return "required";
  if (p.type == "list") {
    const std::vector<std::string> items = ListItems(p.default_value);
    if (items.empty()) return "(empty list)";
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
    return text;
  }
  // "None" as SageMaker's RuleParameters spell "not set" (and as parameter docs say "None: ...").
  if (IsUnset(p.default_value)) return "None";
  return std::string(Trim(p.default_value));
}

// The same default as JSON: null when required or not set, [] / ["a", ...] for lists, a number or
// boolean when the text is one of the parameter's type, else the text.
Json DefaultJson(const LoadedRule::Param& p) {
  if (p.type == "list" && !p.required) return ListItems(p.default_value);
  if (p.required || IsUnset(p.default_value)) return nullptr;
  const std::string_view text = Trim(p.default_value);
  if (p.type == "int") {
    int64_t v = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (error == std::errc() && end == text.data() + text.size()) return v;
  }
  if (p.type == "float" || p.type == "int") {
    double v = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (error == std::errc() && end == text.data() + text.size() && std::isfinite(v)) return v;
  }
  if (p.type == "bool") {
    if (text == "True" || text == "true") return true;
    if (text == "False" || text == "false") return false;
  }
  return std::string(text);
}

Json RuleJson(const LoadedRule& rule) {
  Json r;
  r["name"] = rule.name;
  r["version"] = rule.version;
  r["description"] = rule.description;
  r["plugin"] = rule.plugin_name;
  r["plugin_path"] = rule.plugin_path;
  Json params = Json::array();
  for (const LoadedRule::Param& p : rule.params) {
    params.push_back(Json{{"name", p.name},
                          {"type", p.type.empty() ? Json(nullptr) : Json(p.type)},
                          {"default", DefaultJson(p)},
                          {"required", p.required},
                          {"doc", p.description}});
  }
  r["parameters"] = std::move(params);
  return r;
}

void PrintJson(const Json& j) {
  std::cout << j.dump(2, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace) << "\n";
}

int ListRulesJson(const PluginRegistry& registry) {
  Json rules = Json::array();
  for (const LoadedRule* rule : registry.rules()) rules.push_back(RuleJson(*rule));
  PrintJson(Json{{"rules", std::move(rules)}, {"plugin_folders_searched", registry.searched_directories()}});
  return kExitOk;
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
    rows.push_back({p.name, p.type.empty() ? "-" : p.type, DefaultText(p), p.description});
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
  cmd->add_flag("--json", options.json,
                "Print the rules (or the one rule NAME) as JSON: name, version, description, plugin, plugin_path "
                "and parameters (name, type, default, required, doc)");
  AddPluginOptions(cmd, &options.plugins);
  return options;
}

int RunRules(const RulesOptions& options) {
  PluginRegistry registry;
  if (Status s = LoadPluginOptions(options.plugins, registry); !s.ok()) return Fail(kExitBadInput, s.message());
  if (options.name.empty()) return options.json ? ListRulesJson(registry) : ListRules(registry);
  StatusOr<const LoadedRule*> rule = registry.FindRule(options.name);
  if (!rule.ok()) return Fail(kExitBadInput, rule.status().message());
  if (options.json) {
    PrintJson(RuleJson(**rule));
    return kExitOk;
  }
  return DescribeRule(**rule);
}

}  // namespace litmus::cli
