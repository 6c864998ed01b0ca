// `litmus new-rule`: validates the name and the folder, then writes the embedded templates
// (new_rule_templates.h) with the rule's names filled in, and prints the commands that build and
// test the project.
#include "new_rule_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <system_error>
#include <vector>

#include "exit_codes.h"
#include "new_rule_templates.h"

namespace litmus::cli {
namespace {

namespace fs = std::filesystem;

// C++ keywords and alternative tokens (a rule's name becomes a class name), and names that would
// hide the namespaces the generated source uses.
constexpr std::array<std::string_view, 99> kReservedNames = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "final", "override",
    "import", "module", "litmus", "std", "main",
};

// Target names CMake reserves or generates itself.
constexpr std::array<std::string_view, 10> kReservedTargets = {
    "all", "clean", "help", "install", "test", "package", "package_source", "edit_cache",
    "rebuild_cache", "depend",
};

std::string ReplaceAll(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  size_t start = 0;
  for (size_t at = text.find(from); at != std::string_view::npos; at = text.find(from, start)) {
    out.append(text.substr(start, at - start));
    out.append(to);
    start = at + from.size();
  }
  out.append(text.substr(start));
  return out;
}

// The install prefix of this litmus binary when it runs from an install (PREFIX/bin/litmus next
// to PREFIX/lib*/cmake/Litmus), for the printed CMAKE_PREFIX_PATH; empty otherwise.
fs::path InstallPrefix() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (error || exe.parent_path().filename() != "bin") return {};
  const fs::path prefix = exe.parent_path().parent_path();
  for (const char* lib : {"lib", "lib64"}) {
    if (fs::exists(prefix / lib / "cmake" / "Litmus" / "LitmusConfig.cmake", error)) return prefix;
    for (const fs::directory_entry& entry : fs::directory_iterator(prefix / lib, error)) {
      const fs::path config = entry.path() / "cmake" / "Litmus" / "LitmusConfig.cmake";
      if (fs::exists(config, error)) return prefix;
    }
  }
  return {};
}

// Puts a path in single quotes for the printed shell commands when it needs them.
std::string ShellWord(const std::string& text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || c == '=';
  });
  if (plain && !text.empty()) return text;
  return "'" + ReplaceAll(text, "'", "'\\''") + "'";
}

}  // namespace

std::string NewRuleNameProblem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (!std::isalpha(static_cast<unsigned char>(name.front()))) {
    return "must start with a letter (it becomes a C++ class name)";
  }
  for (const char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
      return "is not a C++ identifier: use letters, digits and _ only";
    }
  }
  if (name.find("__") != std::string_view::npos) {
    return "contains __, which C++ reserves for the implementation";
  }
  if (std::find(kReservedNames.begin(), kReservedNames.end(), name) != kReservedNames.end()) {
    return "is a C++ keyword or a name the generated code needs";
  }
  return {};
}

std::string NewRuleTargetName(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (std::isupper(c)) {
      // A word starts at an upper-case letter after a lower-case letter or digit ("myRule"), or at
      // the last upper-case letter of an acronym followed by a lower-case one ("HTTPRule").
      const bool after_lower = i > 0 && (std::islower(static_cast<unsigned char>(name[i - 1])) ||
                                         std::isdigit(static_cast<unsigned char>(name[i - 1])));
      const bool acronym_end = i > 0 && std::isupper(static_cast<unsigned char>(name[i - 1])) &&
                               i + 1 < name.size() &&
                               std::islower(static_cast<unsigned char>(name[i + 1]));
      if ((after_lower || acronym_end) && !out.empty() && out.back() != '_') out += '_';
      out += static_cast<char>(std::tolower(c));
    } else {
      out += static_cast<char>(c);
    }
  }
  if (std::find(kReservedTargets.begin(), kReservedTargets.end(), out) != kReservedTargets.end()) {
    out += "_rule";
  }
  return out;
}

NewRuleOptions& AddNewRuleCommand(CLI::App& app) {
  static NewRuleOptions options;
  CLI::App* cmd = app.add_subcommand(
      "new-rule",
      "Write a ready-to-build rule project: CMakeLists.txt, a rule NAME with one parameter, and a "
      "test (docs/first-rule.md)");
  cmd->add_option("NAME", options.name,
                  "Rule name: a C++ identifier such as MyRule; the class name and what "
                  "`litmus run --rule` selects")
      ->required();
  cmd->add_option("DIR", options.dir, "Folder to create (default ./NAME); must be absent or empty");
  return options;
}

int RunNewRule(const NewRuleOptions& options) {
  if (const std::string problem = NewRuleNameProblem(options.name); !problem.empty()) {
    return Fail(kExitBadInput, "new-rule: rule name '" + options.name + "' " + problem);
  }
  const fs::path dir = options.dir.empty() ? fs::path(options.name) : fs::path(options.dir);
  const std::string target = NewRuleTargetName(options.name);

  std::error_code error;
  const bool existed = fs::exists(dir, error);
  if (existed) {
    if (!fs::is_directory(dir, error)) {
      return Fail(kExitBadInput, "new-rule: " + dir.string() + " exists and is not a folder");
    }
    if (!fs::is_empty(dir, error) || error) {
      return Fail(kExitBadInput, "new-rule: " + dir.string() +
                                     " is not empty; give a new or empty folder (nothing written)");
    }
  }

  // Writes every file, or leaves nothing behind.
  std::vector<fs::path> written;
  auto undo = [&] {
    std::error_code ignored;
    if (!existed) {
      fs::remove_all(dir, ignored);
      return;
    }
    for (const fs::path& path : written) fs::remove(path, ignored);
    for (const NewRuleTemplate& file : NewRuleTemplates()) {
      // Folders created for nested files (test/): removed only if empty.
      const fs::path parent = (dir / ReplaceAll(file.path, "@TARGET@", target)).parent_path();
      if (parent != dir) fs::remove(parent, ignored);
    }
  };
  for (const NewRuleTemplate& file : NewRuleTemplates()) {
    const fs::path path = dir / ReplaceAll(file.path, "@TARGET@", target);
    fs::create_directories(path.parent_path(), error);
    std::ofstream out;
    if (!error) out.open(path, std::ios::binary | std::ios::trunc);
    if (out) {
      out << ReplaceAll(ReplaceAll(file.text, "@NAME@", options.name), "@TARGET@", target);
      out.close();
    }
    if (error || !out) {
      undo();
      return Fail(kExitBadInput, "new-rule: cannot write " + path.string() +
                                     (error ? ": " + error.message() : std::string()) +
                                     " (nothing was written)");
    }
    written.push_back(path);
  }

  const fs::path prefix = InstallPrefix();
  const std::string shown_prefix = prefix.empty() ? "<litmus install prefix>" : prefix.string();
  const std::string d = ShellWord(dir.string());
  std::cout << "Created the rule project " << options.name << " in " << dir.string() << ":\n";
  for (const fs::path& path : written) {
    std::cout << "  " << path.lexically_relative(dir).string() << "\n";
  }
  std::cout << "Build and test it (CMAKE_PREFIX_PATH: the folder litmus was installed into):\n"
            << "  cmake -S " << d << " -B " << d << "/build -DCMAKE_PREFIX_PATH="
            << ShellWord(shown_prefix) << "\n"
            << "  cmake --build " << d << "/build\n"
            << "  ctest --test-dir " << d << "/build --output-on-failure\n"
            << "Run it on a trial:\n"
            << "  litmus run --trial TRIAL --plugin " << d << "/build/" << target << ".so --rule "
            << options.name << "\n";
  return kExitOk;
}

}  // namespace litmus::cli
