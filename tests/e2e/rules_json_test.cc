// End-to-end: `litmus rules --json` and `litmus rules NAME --json`, parsed back and compared with
// the text form of `litmus rules NAME`; list defaults declared as "" (AllZero) and as "None"
// (LossNotDecreasing) both read as an empty list, in text and in JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "support/run_process.h"

namespace litmus {
namespace {

using ::testing::HasSubstr;
using testing::LitmusBinary;
using testing::RunProcess;
using Json = nlohmann::json;

const std::vector<std::pair<std::string, std::string>> kEnv = {{"LITMUS_PLUGIN_PATH", ""}};

std::vector<std::string> WithPlugins(std::vector<std::string> args) {
  for (const char* plugin : {LITMUS_CUSTOM_RULE_PLUGIN, LITMUS_TENSOR_CHECKS_PLUGIN, LITMUS_TRAINING_PROGRESS_PLUGIN}) {
    args.push_back("--plugin");
    args.push_back(plugin);
  }
  args.insert(args.begin(), {LitmusBinary(), "rules"});
  return args;
}

Json RulesJson(const std::vector<std::string>& args) {
  const auto result = RunProcess(WithPlugins(args), kEnv);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  return Json::parse(result.out);
}

// The parameter rows of `litmus rules NAME`: name -> {type, default, description}, split on the
// table's column gaps (two or more spaces).
std::map<std::string, std::vector<std::string>> TextParams(const std::string& rule) {
  const auto result = RunProcess(WithPlugins({rule}), kEnv);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::map<std::string, std::vector<std::string>> rows;
  std::istringstream lines(result.out);
  bool in_table = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  NAME ", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table || line.empty()) continue;
    std::vector<std::string> cells;
    const std::regex gap(" {2,}");
    const std::string body = line.substr(2);
    for (std::sregex_token_iterator it(body.begin(), body.end(), gap, -1), end; it != end; ++it) cells.push_back(*it);
    if (cells.size() == 3) cells.push_back("");  // no description
    EXPECT_EQ(cells.size(), 4u) << line;
    if (cells.size() == 4) rows[cells[0]] = {cells[1], cells[2], cells[3]};
  }
  return rows;
}

// What the text form shows for a JSON default.
std::string DefaultAsText(const Json& param) {
  if (param["required"].get<bool>()) return "required";
  const Json& d = param["default"];
  if (d.is_array()) {
    if (d.empty()) return "(empty list)";
    std::string text;
    for (const auto& item : d) text += (text.empty() ? "" : ", ") + item.get<std::string>();
    return text;
  }
  if (d.is_null()) return "None";
  if (d.is_string()) return d.get<std::string>();
  if (d.is_boolean()) return d.get<bool>() ? "True" : "False";
  return d.dump();
}

void ExpectTextMatchesJson(const Json& rule) {
  const std::string name = rule["name"];
  const auto text = TextParams(name);
  ASSERT_EQ(text.size(), rule["parameters"].size()) << name;
  for (const Json& p : rule["parameters"]) {
    const std::string pname = p["name"];
    ASSERT_TRUE(text.contains(pname)) << name << "." << pname;
    const auto& row = text.at(pname);
    EXPECT_EQ(row[0], p["type"].is_null() ? "-" : p["type"].get<std::string>()) << name << "." << pname;
    EXPECT_EQ(row[2], p["doc"].get<std::string>()) << name << "." << pname;
    const std::string expected = DefaultAsText(p);
    if (p["default"].is_number()) {
      EXPECT_DOUBLE_EQ(std::stod(row[1]), p["default"].get<double>()) << name << "." << pname;
    } else if (p["default"].is_boolean()) {
      EXPECT_TRUE(row[1] == "True" || row[1] == "true" || row[1] == "False" || row[1] == "false") << row[1];
      EXPECT_EQ(row[1] == "True" || row[1] == "true", p["default"].get<bool>()) << name << "." << pname;
    } else {
      EXPECT_EQ(row[1], expected) << name << "." << pname;
    }
  }
}

TEST(RulesJson, ListsEveryRuleWithItsParameters) {
  const Json doc = RulesJson({"--json"});
  ASSERT_TRUE(doc["rules"].is_array());
  std::map<std::string, Json> by_name;
  for (const Json& rule : doc["rules"]) by_name[rule["name"]] = rule;
  for (const char* name : {"CustomGradientRule", "AllZero", "VanishingGradient", "LossNotDecreasing", "Overfit"}) {
    ASSERT_TRUE(by_name.contains(name)) << name;
  }
  const Json& custom = by_name["CustomGradientRule"];
  EXPECT_EQ(custom["version"], "1.0.0");
  EXPECT_EQ(custom["plugin_path"], LITMUS_CUSTOM_RULE_PLUGIN);
  EXPECT_EQ(custom["description"], "Fires when the mean absolute value of any gradient exceeds threshold");
  const Json& threshold = custom["parameters"][0];
  EXPECT_EQ(threshold["name"], "threshold");
  EXPECT_EQ(threshold["type"], "float");
  EXPECT_EQ(threshold["default"], 10.0);
  EXPECT_EQ(threshold["required"], false);
  EXPECT_EQ(threshold["doc"], "limit for the mean absolute value of each gradient");
  for (const auto& [name, rule] : by_name) {
    for (const char* key : {"name", "version", "description", "plugin", "plugin_path", "parameters"}) {
      EXPECT_TRUE(rule.contains(key)) << name << " lacks " << key;
    }
  }
}

TEST(RulesJson, OneRuleIsTheSameObjectAsInTheList) {
  const Json list = RulesJson({"--json"});
  for (const char* name : {"CustomGradientRule", "LossNotDecreasing"}) {
    const Json one = RulesJson({name, "--json"});
    Json listed;
    for (const Json& rule : list["rules"]) {
      if (rule["name"] == name) listed = rule;
    }
    EXPECT_EQ(one, listed) << name;
  }
  // snake_case names work as in the text form.
  EXPECT_EQ(RulesJson({"loss_not_decreasing", "--json"})["name"], "LossNotDecreasing");
}

TEST(RulesJson, TextAndJsonAgreeForEveryRule) {
  for (const Json& rule : RulesJson({"--json"})["rules"]) ExpectTextMatchesJson(rule);
}

TEST(RulesJson, ListDefaultsReadAsEmptyListWhetherDeclaredEmptyOrNone) {
  // AllZero declares collection_names as "", LossNotDecreasing as "None": both mean no collection.
  for (const char* rule : {"AllZero", "LossNotDecreasing"}) {
    const Json doc = RulesJson({rule, "--json"});
    bool found = false;
    for (const Json& p : doc["parameters"]) {
      if (p["name"] != "collection_names") continue;
      found = true;
      EXPECT_EQ(p["type"], "list");
      EXPECT_EQ(p["default"], Json::array()) << rule;
    }
    EXPECT_TRUE(found) << rule;
    const auto text = TextParams(rule);
    ASSERT_TRUE(text.contains("collection_names")) << rule;
    EXPECT_EQ(text.at("collection_names")[1], "(empty list)") << rule;
  }
}

TEST(RulesJson, UnknownRuleIsStillAOneLineError) {
  const auto result = RunProcess(WithPlugins({"Nope", "--json"}), kEnv);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_THAT(result.err, HasSubstr("unknown rule 'Nope'"));
}

}  // namespace
}  // namespace litmus
