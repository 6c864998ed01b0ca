// `litmus rules [NAME] [--json] [--plugin FILE]... [--plugin-dir DIR]...`: lists the rules of the
// loaded plugins (name, plugin, description) or describes one rule's parameters, from the
// plugins' metadata (no rule instance is created); --json prints the same as one JSON document.
#pragma once

#include <string>

#include "plugin_options.h"

namespace CLI {
class App;
}

namespace litmus::cli {

struct RulesOptions {
  std::string name;  // empty: list every rule
  bool json = false;
  PluginOptions plugins;
};

// Registers the subcommand; the returned options are filled when it is parsed.
RulesOptions& AddRulesCommand(CLI::App& app);
// Runs it. Returns the process exit code: 0 success; 2 for a plugin that fails to load or an
// unknown NAME (one line on stderr listing the available rules).
int RunRules(const RulesOptions& options);

}  // namespace litmus::cli
