// --plugin / --plugin-dir for the subcommands that load rule plugins.
#include "plugin_options.h"

#include <CLI/CLI.hpp>

#include "plugin/plugin_loader.h"

namespace litmus::cli {

void AddPluginOptions(CLI::App* cmd, PluginOptions* options) {
  // One value per occurrence (allow_extra_args false): `--plugin x.so NAME` leaves NAME to the
  // positional argument instead of taking it as a second plugin.
  cmd->add_option("--plugin", options->files,
                  "Load the rules of this plugin (a .so built with the litmus plugin SDK, e.g. your own rules); "
                  "its rules win over same-named ones found in folders. Not needed for the built-in SageMaker "
                  "rules, which are found on their own (in " LITMUS_PLUGIN_DIR_TEXT
                  " for a litmus installed in <prefix>/bin, in the build tree's builtin-rules/ for one run from "
                  "there); repeatable")
      ->type_name("FILE")
      ->allow_extra_args(false);
  cmd->add_option("--plugin-dir", options->dirs,
                  "Load every rule plugin (*.so) of this folder, which must exist; searched before "
                  "$LITMUS_PLUGIN_PATH (colon-separated folders) and the built-in rules' folder; repeatable")
      ->type_name("DIR")
      ->allow_extra_args(false);
}

Status LoadPluginOptions(const PluginOptions& options, PluginRegistry& registry) {
  return LoadPlugins(registry, options.files, options.dirs);
}

}  // namespace litmus::cli
