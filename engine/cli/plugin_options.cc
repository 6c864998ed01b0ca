// --plugin / --plugin-dir for the subcommands that load rule plugins.
#include "plugin_options.h"

#include <CLI/CLI.hpp>

#include "plugin/plugin_loader.h"

namespace litmus::cli {

void AddPluginOptions(CLI::App* cmd, PluginOptions* options) {
  // One value per occurrence (allow_extra_args false): `--plugin x.so NAME` leaves NAME to the
  // positional argument instead of taking it as a second plugin.
  cmd->add_option("--plugin", options->files, "Rule plugin (.so) to load; repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  cmd->add_option("--plugin-dir", options->dirs,
                  "Folder of rule plugins to load (searched before $LITMUS_PLUGIN_PATH and the install "
                  "location); repeatable")
      ->type_name("DIR")
      ->allow_extra_args(false);
}

Status LoadPluginOptions(const PluginOptions& options, PluginRegistry& registry) {
  return LoadPlugins(registry, options.files, options.dirs);
}

}  // namespace litmus::cli
