// `litmus new-rule NAME [DIR]`: writes a ready-to-build out-of-tree rule project into DIR
// (default ./NAME): CMakeLists.txt (find_package(Litmus) + litmus_add_rule_plugin), a working rule
// NAME with one parameter, and a CTest test that runs it through `litmus run`. See
// docs/first-rule.md. Refuses a non-empty DIR and a NAME that is not a C++ identifier.
#pragma once

#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace litmus::cli {

struct NewRuleOptions {
  std::string name;  // the rule's class name and the name `litmus run --rule` selects
  std::string dir;   // empty: ./NAME
};

// Registers the subcommand; the returned options are filled when it is parsed.
NewRuleOptions& AddNewRuleCommand(CLI::App& app);
// Runs it. Returns the process exit code: 0 when the project was written (the files and the next
// commands on stdout); 2 for a bad NAME, a DIR that is not empty or cannot be written (one line on
// stderr; nothing is left behind).
int RunNewRule(const NewRuleOptions& options);

// The project (CMake target and file) name of a rule: snake_case of NAME ("MyRule" -> "my_rule"),
// with "_rule" appended to a name CMake reserves ("test", "all", ...). Exposed for tests.
std::string NewRuleTargetName(std::string_view name);
// Empty if NAME can name the rule, else why not (one phrase). Exposed for tests.
std::string NewRuleNameProblem(std::string_view name);

}  // namespace litmus::cli
