// PluginRegistry: loads rule plugins (shared objects exporting litmus_plugin_entry_v1) and finds
// their rules by name (plugin-sdk/VERSIONING.md). Plugins are dlopen'ed once per process with
// RTLD_NOW | RTLD_LOCAL from an absolute path and never dlclose'd; their metadata is checked and
// copied at load time. Thread-safety: loading is serialized process-wide; a PluginRegistry is
// thread-compatible (const methods may run concurrently once loading is done).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/rule_abi.h"
#include "litmus/status.h"

namespace litmus {

// One rule of a loaded plugin, with the plugin's metadata copied out (valid for the process's
// life: plugins are never unloaded).
struct LoadedRule {
  std::string name;         // the smdebug class name, e.g. "VanishingGradient"
  std::string version;      // the rule's own version
  std::string description;  // one line
  std::string plugin_path;  // absolute path of the .so
  std::string plugin_name;  // the plugin's own name (its file stem if it gives none)
  struct Param {
    std::string name, type, default_value, description;
    bool required = false;
  };
  std::vector<Param> params;
  const litmus_rule_descriptor_t* descriptor = nullptr;  // in the plugin's static table
  // descriptor->on_poll (ABI 1.1) if the descriptor's struct_size covers it, else NULL: use this,
  // never descriptor->on_poll, which an ABI 1.0 plugin's descriptor does not have.
  litmus_status_t (*on_poll)(litmus_rule_instance_t*, litmus_ctx_t*, int64_t) = nullptr;
  // ABI 1.2 LITMUS_RULE_STATELESS: a resumed job continues the rule where it was instead of
  // replaying its earlier steps (false for older descriptors).
  bool stateless = false;
};

namespace internal {
struct LoadedPlugin;
}

class PluginRegistry {
 public:
  PluginRegistry();
  ~PluginRegistry();
  PluginRegistry(const PluginRegistry&) = delete;
  PluginRegistry& operator=(const PluginRegistry&) = delete;

  // Loads one plugin given explicitly (e.g. --plugin); a relative path is made absolute. Loading a
  // file that is already loaded (same file, any path) is a no-op. Errors (one line, naming the
  // file): NotFound (no such file), InvalidArgument (not loadable, no entry symbol, dynamic
  // symbols exported besides the entry (refused: see ExtraExports in the .cc), the entry failed,
  // ABI mismatch "plugin P needs ABI 1.N, litmus provides 1.M", a malformed table).
  Status LoadFile(const std::string& path);

  // Loads every `*.so` in `dir` (not recursive), in name order. Decision for search folders:
  // a file that cannot be dlopen'ed or has no litmus_plugin_entry_v1 is not a litmus plugin
  // (or cannot be told apart from one): it is skipped with a warning. A file that does export
  // the entry but fails the checks is a broken litmus plugin: its error is returned. A missing
  // folder is fine (search paths list folders that may not exist) unless `must_exist`.
  // Rules of earlier-loaded folders shadow same-named rules of later ones (see FindRule).
  Status LoadDirectory(const std::string& dir, bool must_exist = false);

  // The rule called `name`: matched case-insensitively, and also in its snake_case form
  // (VanishingGradient <-> vanishing_gradient, NLPSequenceRatio <-> nlp_sequence_ratio); an exact
  // (case-sensitive) match wins over the other forms. Precedence: plugins given by LoadFile, then
  // folders in the order they were loaded (like PATH); two plugins of the same precedence
  // exporting the name is an InvalidArgument ambiguity error naming both. NotFound lists the
  // available rule names, after "did you mean X?" when a class name or its snake_case form is
  // close to `name` (SuggestName, name_suggestion.h).
  StatusOr<const LoadedRule*> FindRule(std::string_view name) const;

  // Every loaded rule (shadowed ones included), sorted by name, then plugin path.
  std::vector<const LoadedRule*> rules() const;
  // Folders given to LoadDirectory, in order (for messages: "searched: ...").
  const std::vector<std::string>& searched_directories() const { return searched_directories_; }
  // Files skipped by LoadDirectory (also logged as warnings), one line each.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Entry {
    std::shared_ptr<const internal::LoadedPlugin> plugin;
    int precedence;  // 0 = LoadFile; 1.. = LoadDirectory calls in order
  };
  // skip_non_plugins: LoadDirectory's leniency (see there).
  Status Load(const std::string& path, int precedence, bool skip_non_plugins);

  std::vector<Entry> plugins_;
  int directories_loaded_ = 0;
  std::vector<std::string> searched_directories_;
  std::vector<std::string> warnings_;
};

// The default plugin search path, in precedence order: `plugin_dirs` (--plugin-dir), then
// $LITMUS_PLUGIN_PATH (colon-separated), then the install location <prefix>/<libdir>/litmus/plugins
// (the executable is <prefix>/bin/litmus; libdir as configured, usually lib), then, when the
// executable runs from the build tree, the build tree's built-in rules (<build>/builtin-rules).
// Duplicates removed; folders need not exist.
std::vector<std::string> PluginSearchPath(const std::vector<std::string>& plugin_dirs);

// What `litmus run` and `litmus rules` do: every file of `plugin_files`, every folder of
// `plugin_dirs` (which must exist), then the rest of PluginSearchPath(plugin_dirs).
Status LoadPlugins(PluginRegistry& registry, const std::vector<std::string>& plugin_files,
                   const std::vector<std::string>& plugin_dirs);

// "VanishingGradient" -> "vanishing_gradient", "NLPSequenceRatio" -> "nlp_sequence_ratio".
std::string RuleNameToSnakeCase(std::string_view name);

}  // namespace litmus
