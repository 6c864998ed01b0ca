// The plugin options shared by `litmus rules` and `litmus run` (--plugin FILE, --plugin-dir DIR,
// both repeatable) and loading them with the default search path. Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "litmus/status.h"

namespace CLI {
class App;
}

namespace litmus {
class PluginRegistry;
}

namespace litmus::cli {

struct PluginOptions {
  std::vector<std::string> files;  // --plugin
  std::vector<std::string> dirs;   // --plugin-dir
};

// Adds --plugin and --plugin-dir to `cmd`, filling `options` (which must outlive parsing).
void AddPluginOptions(CLI::App* cmd, PluginOptions* options);

// Loads the --plugin files, the --plugin-dir folders (which must exist), then the default search
// path ($LITMUS_PLUGIN_PATH, the install location, the build tree): LoadPlugins (plugin_loader.h).
Status LoadPluginOptions(const PluginOptions& options, PluginRegistry& registry);

}  // namespace litmus::cli
