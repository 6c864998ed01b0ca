// PluginRegistry: dlopen, entry call, table checks and metadata copy (once per process and file),
// rule lookup, and the default search path. Thread-safety: a process-wide mutex serializes
// loading (and so every plugin entry call); see plugin_loader.h.
#include "plugin/plugin_loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <system_error>

#include "plugin/host_api.h"
#include "plugin/name_suggestion.h"

namespace litmus {
namespace internal {

// One plugin as loaded (immutable once built; shared by every registry of the process).
struct LoadedPlugin {
  std::string path;
  std::string name;
  std::string version;
  std::vector<LoadedRule> rules;
};

}  // namespace internal

namespace {

namespace fs = std::filesystem;
using internal::LoadedPlugin;

// The outcome of loading one file, kept per dlopen handle: a library is loaded and its entry
// called once per process, whatever path or registry asks for it again.
struct LoadResult {
  Status status;
  bool not_a_plugin = false;  // dlopen failed or no entry symbol (LoadDirectory skips these)
  std::shared_ptr<const LoadedPlugin> plugin;
};

struct LoaderState {
  std::mutex mu;
  std::map<void*, LoadResult> by_handle;
};

LoaderState& State() {
  static LoaderState* state = new LoaderState;  // never destroyed: plugins are never unloaded
  return *state;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// Absolute, lexically normal, without a trailing separator.
std::string NormalPath(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) p = path;
  p = p.lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p.string();
}

std::string AbiText(uint32_t major, uint32_t minor) { return std::to_string(major) + "." + std::to_string(minor); }

// Upper bounds that only a corrupt table exceeds (they keep a bad size from allocating wildly).
constexpr size_t kMaxStringSize = 1 << 20;
constexpr size_t kMaxRules = 10000;
constexpr size_t kMaxParams = 1000;

// Checks the table an entry returned and copies its metadata. `who` is "plugin <path>".
StatusOr<std::shared_ptr<const LoadedPlugin>> ReadPluginTable(const litmus_plugin_api_t* table, const std::string& path,
                                                              const std::string& who) {
  if (table == nullptr) {
    return InvalidArgumentError(who + ": litmus_plugin_entry_v1 returned LITMUS_OK but no plugin table (plugin bug)");
  }
  constexpr size_t kVersionEnd = offsetof(litmus_plugin_api_t, abi_minor) + sizeof(table->abi_minor);
  if (table->struct_size < kVersionEnd) {
    return InvalidArgumentError(who + ": plugin table struct_size " + std::to_string(table->struct_size) +
                                " is too small to hold the ABI version (plugin bug)");
  }
  // Majors must be equal, and the host minor at least the plugin's (plugin-sdk/VERSIONING.md).
  if (table->abi_major != LITMUS_ABI_MAJOR || table->abi_minor > LITMUS_ABI_MINOR) {
    return InvalidArgumentError(who + " needs ABI " + AbiText(table->abi_major, table->abi_minor) +
                                ", litmus provides " + AbiText(LITMUS_ABI_MAJOR, LITMUS_ABI_MINOR));
  }
  // Every field we read exists since 1.0, so an ABI 1.x table holds at least the 1.0 size.
  if (table->struct_size < sizeof(litmus_plugin_api_t)) {
    return InvalidArgumentError(who + ": plugin table struct_size " + std::to_string(table->struct_size) +
                                " is smaller than the ABI 1.0 size " + std::to_string(sizeof(litmus_plugin_api_t)) +
                                " (plugin bug)");
  }

  auto copy = [&who](litmus_str_t s, const std::string& what) -> StatusOr<std::string> {
    if (s.data == nullptr && s.size > 0) {
      return InvalidArgumentError(who + ": " + what + " has NULL data and size " + std::to_string(s.size) +
                                  " (plugin bug)");
    }
    if (s.size > kMaxStringSize) {
      return InvalidArgumentError(who + ": " + what + " is " + std::to_string(s.size) + " bytes long (plugin bug?)");
    }
    return s.size == 0 ? std::string() : std::string(s.data, s.size);
  };

  auto plugin = std::make_shared<LoadedPlugin>();
  plugin->path = path;
  LITMUS_ASSIGN_OR_RETURN(plugin->name, copy(table->plugin_name, "plugin_name"));
  if (plugin->name.empty()) plugin->name = fs::path(path).stem().string();
  LITMUS_ASSIGN_OR_RETURN(plugin->version, copy(table->plugin_version, "plugin_version"));

  if (table->rule_count > kMaxRules) {
    return InvalidArgumentError(who + ": rule_count " + std::to_string(table->rule_count) + " (plugin bug?)");
  }
  if (table->rule_count > 0 && table->rules == nullptr) {
    return InvalidArgumentError(who + ": rules is NULL but rule_count is " + std::to_string(table->rule_count) +
                                " (plugin bug)");
  }
  // Descriptors grow by appending (on_poll since 1.1): the 1.0 size is the smallest valid one.
  constexpr size_t kDescriptorSize10 = offsetof(litmus_rule_descriptor_t, on_poll);
  constexpr size_t kOnPollEnd = kDescriptorSize10 + sizeof(litmus_rule_descriptor_t::on_poll);
  const uint32_t stride = table->rule_count > 0 ? table->rules[0].struct_size : 0;
  if (table->rule_count > 0 && stride < kDescriptorSize10) {
    return InvalidArgumentError(who + ": rule descriptor struct_size " + std::to_string(stride) +
                                " is smaller than the ABI 1.0 size " + std::to_string(kDescriptorSize10) +
                                " (plugin bug)");
  }
  std::set<std::string> rule_names;  // lower-case, to refuse two rules FindRule cannot tell apart
  for (size_t i = 0; i < table->rule_count; ++i) {
    const auto* d =
        reinterpret_cast<const litmus_rule_descriptor_t*>(reinterpret_cast<const char*>(table->rules) + i * stride);
    const std::string rule_id = "rule #" + std::to_string(i);
    if (d->struct_size != stride) {
      return InvalidArgumentError(who + ": " + rule_id + " has struct_size " + std::to_string(d->struct_size) +
                                  ", rule #0 has " + std::to_string(stride) + " (they must be equal; plugin bug)");
    }
    LoadedRule rule;
    LITMUS_ASSIGN_OR_RETURN(rule.name, copy(d->name, rule_id + " name"));
    if (rule.name.empty()) return InvalidArgumentError(who + ": " + rule_id + " has an empty name (plugin bug)");
    const std::string rule_who = rule_id + " (" + rule.name + ")";
    if (!rule_names.insert(Lower(rule.name)).second) {
      return InvalidArgumentError(who + ": exports rule " + rule.name + " twice (names are case-insensitive)");
    }
    for (const auto& [fn, fn_name] : {std::pair<bool, const char*>{d->create == nullptr, "create"},
                                      {d->destroy == nullptr, "destroy"},
                                      {d->invoke_at_step == nullptr, "invoke_at_step"}}) {
      if (fn) return InvalidArgumentError(who + ": " + rule_who + ": " + fn_name + " is NULL (required)");
    }
    LITMUS_ASSIGN_OR_RETURN(rule.version, copy(d->version, rule_who + " version"));
    LITMUS_ASSIGN_OR_RETURN(rule.description, copy(d->description, rule_who + " description"));
    rule.plugin_path = plugin->path;
    rule.plugin_name = plugin->name;
    rule.descriptor = d;
    if (d->struct_size >= kOnPollEnd) rule.on_poll = d->on_poll;
    // since 1.2: the rule's flags (an older descriptor has none).
    constexpr size_t kFlagsEnd = offsetof(litmus_rule_descriptor_t, flags) + sizeof(litmus_rule_descriptor_t::flags);
    if (d->struct_size >= kFlagsEnd) rule.stateless = (d->flags & LITMUS_RULE_STATELESS) != 0;

    const size_t param_stride = d->param_spec_size == 0 ? sizeof(litmus_param_spec_t) : d->param_spec_size;
    if (param_stride < sizeof(litmus_param_spec_t)) {
      return InvalidArgumentError(who + ": " + rule_who + ": param_spec_size " + std::to_string(param_stride) +
                                  " is smaller than the ABI 1.0 size " + std::to_string(sizeof(litmus_param_spec_t)) +
                                  " (plugin bug)");
    }
    if (d->param_count > kMaxParams || (d->param_count > 0 && d->params == nullptr)) {
      return InvalidArgumentError(who + ": " + rule_who + ": params is " + (d->params ? "non-NULL" : "NULL") +
                                  " with param_count " + std::to_string(d->param_count) + " (plugin bug)");
    }
    std::set<std::string> param_names;
    for (size_t j = 0; j < d->param_count; ++j) {
      const auto* p =
          reinterpret_cast<const litmus_param_spec_t*>(reinterpret_cast<const char*>(d->params) + j * param_stride);
      const std::string param_id = rule_who + " parameter #" + std::to_string(j);
      LoadedRule::Param param;
      LITMUS_ASSIGN_OR_RETURN(param.name, copy(p->name, param_id + " name"));
      if (param.name.empty()) return InvalidArgumentError(who + ": " + param_id + " has an empty name (plugin bug)");
      if (!param_names.insert(param.name).second) {
        return InvalidArgumentError(who + ": " + rule_who + " declares parameter '" + param.name + "' twice");
      }
      LITMUS_ASSIGN_OR_RETURN(param.type, copy(p->type, param_id + " type"));
      LITMUS_ASSIGN_OR_RETURN(param.default_value, copy(p->default_value, param_id + " default_value"));
      LITMUS_ASSIGN_OR_RETURN(param.description, copy(p->description, param_id + " description"));
      param.required = p->required != 0;
      rule.params.push_back(std::move(param));
    }
    plugin->rules.push_back(std::move(rule));
  }
  return std::shared_ptr<const LoadedPlugin>(std::move(plugin));
}

// The dynamic symbols `path` defines and exports besides the entry (a plugin built with
// litmus_add_rule_plugin has none: its version script keeps everything else local, including
// libstdc++ template instances that would otherwise interpose across plugins). Read from the ELF
// file's .dynsym section; empty when the file is not a native ELF64 with section headers, where
// the check cannot be done.
std::vector<std::string> ExtraExports(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  auto read = [&in](uint64_t offset, void* out, uint64_t size) {
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(static_cast<char*>(out), static_cast<std::streamsize>(size));
    return static_cast<bool>(in);
  };
  Elf64_Ehdr header{};
  if (!read(0, &header, sizeof(header)) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != (std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB) ||
      header.e_shoff == 0 || header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0) {
    return {};
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  if (!read(header.e_shoff, sections.data(), sections.size() * sizeof(Elf64_Shdr))) return {};
  constexpr uint64_t kMaxSection = 256ull << 20;
  std::vector<std::string> extra;
  for (const Elf64_Shdr& dynsym : sections) {
    if (dynsym.sh_type != SHT_DYNSYM || dynsym.sh_link >= sections.size() || dynsym.sh_entsize != sizeof(Elf64_Sym) ||
        dynsym.sh_size > kMaxSection || sections[dynsym.sh_link].sh_size > kMaxSection) {
      continue;
    }
    std::vector<Elf64_Sym> symbols(dynsym.sh_size / sizeof(Elf64_Sym));
    std::string names(sections[dynsym.sh_link].sh_size, '\0');
    if (!read(dynsym.sh_offset, symbols.data(), symbols.size() * sizeof(Elf64_Sym)) ||
        !read(sections[dynsym.sh_link].sh_offset, names.data(), names.size())) {
      return {};
    }
    for (const Elf64_Sym& symbol : symbols) {
      const unsigned bind = ELF64_ST_BIND(symbol.st_info);
      const unsigned type = ELF64_ST_TYPE(symbol.st_info);
      const unsigned visibility = ELF64_ST_VISIBILITY(symbol.st_other);
      if (symbol.st_shndx == SHN_UNDEF || symbol.st_shndx == SHN_ABS) continue;  // imports, version names
      if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) continue;
      if (visibility != STV_DEFAULT && visibility != STV_PROTECTED) continue;
      if (type == STT_SECTION || type == STT_FILE || symbol.st_name >= names.size()) continue;
      const std::string name(names.c_str() + symbol.st_name);
      // The linker's own markers (as tests/abi/check_plugin.cmake allows them).
      static const std::set<std::string> kAllowed = {
          LITMUS_PLUGIN_ENTRY_NAME, "_init",      "_fini",   "_edata",     "_end", "__bss_start",
          "__bss_start__",          "_bss_end__", "__end__", "__bss_end__"};
      if (!kAllowed.contains(name)) extra.push_back(name);
    }
  }
  std::sort(extra.begin(), extra.end());
  return extra;
}

// Finds and calls the entry of a freshly opened library, then checks its table.
LoadResult InitializePlugin(void* handle, const std::string& path) {
  const std::string who = "plugin " + path;
  dlerror();
  void* symbol = dlsym(handle, LITMUS_PLUGIN_ENTRY_NAME);
  if (symbol == nullptr) {
    // A major ABI break is a new entry symbol; say so rather than "not a plugin".
    if (dlsym(handle, "litmus_plugin_entry_v2") != nullptr) {
      return {InvalidArgumentError(who + " exports litmus_plugin_entry_v2 only: it needs ABI 2.x, litmus provides " +
                                   AbiText(LITMUS_ABI_MAJOR, LITMUS_ABI_MINOR)),
              false, nullptr};
    }
    return {InvalidArgumentError(who + ": no symbol " LITMUS_PLUGIN_ENTRY_NAME " (not a litmus plugin?)"), true,
            nullptr};
  }
  // Decision: extra exports are refused (plugin-sdk/VERSIONING.md: exactly one exported symbol),
  // before the entry runs.
  if (const std::vector<std::string> extra = ExtraExports(path); !extra.empty()) {
    constexpr size_t kShown = 5;
    std::vector<std::string> shown(extra.begin(), extra.begin() + std::min(extra.size(), kShown));
    return {
        InvalidArgumentError(who + " exports symbols other than " LITMUS_PLUGIN_ENTRY_NAME ": " + Join(shown, ", ") +
                             (extra.size() > kShown ? " and " + std::to_string(extra.size() - kShown) + " more" : "") +
                             " (build it with litmus_add_rule_plugin, whose version script exports only the entry)"),
        false, nullptr};
  }
  const auto entry = reinterpret_cast<litmus_plugin_entry_fn>(symbol);
  litmus_ctx ctx(who, {}, nullptr);
  ctx.BeginCall(PluginCallPhase::kEntry);
  const litmus_plugin_api_t* table = nullptr;
  litmus_status_t status = LITMUS_INTERNAL;
  try {
    status = entry(PluginHostApi(), &ctx, &table);
  } catch (...) {
    ctx.has_error = true;
    ctx.error = "a C++ exception escaped from the plugin (plugin bug)";
  }
  if (status != LITMUS_OK) {
    const std::string text = ctx.has_error ? ctx.error : "no error message (plugin bug)";
    return {InvalidArgumentError(who + ": " LITMUS_PLUGIN_ENTRY_NAME " failed with " + LitmusStatusName(status) + ": " +
                                 text),
            false, nullptr};
  }
  ctx.EndCall();
  StatusOr<std::shared_ptr<const LoadedPlugin>> plugin = ReadPluginTable(table, path, who);
  if (!plugin.ok()) return {plugin.status(), false, nullptr};
  return {OkStatus(), false, std::move(plugin).value()};
}

// dlopens `path` (absolute) once per process and returns the cached outcome.
LoadResult LoadOnce(const std::string& path) {
  LoaderState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  dlerror();
  // RTLD_NOLOAD: already resident (this path, or another path of the same file)?
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) {
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      return {InvalidArgumentError("plugin " + path + ": cannot load: " +
                                   (error != nullptr ? std::string(error) : std::string("unknown dlopen error"))),
              true, nullptr};
    }
  }
  if (const auto it = state.by_handle.find(handle); it != state.by_handle.end()) return it->second;
  LoadResult result = InitializePlugin(handle, path);
  // Never dlclose: even a refused library may have run constructors or handed out pointers.
  state.by_handle.emplace(handle, result);
  return result;
}

bool IsWithin(const fs::path& path, const fs::path& folder) {
  const std::string p = path.lexically_normal().string();
  std::string f = folder.lexically_normal().string();
  if (!f.empty() && f.back() != '/') f += '/';
  return p.compare(0, f.size(), f) == 0;
}

}  // namespace

PluginRegistry::PluginRegistry() = default;
PluginRegistry::~PluginRegistry() = default;

Status PluginRegistry::LoadFile(const std::string& path) { return Load(path, 0, /*skip_non_plugins=*/false); }

Status PluginRegistry::Load(const std::string& given_path, int precedence, bool skip_non_plugins) {
  const std::string path = NormalPath(given_path);
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return NotFoundError("plugin " + path + ": no such file");
  if (fs::is_directory(st)) {
    return InvalidArgumentError("plugin " + path + ": is a folder, not a plugin file (use --plugin-dir for folders)");
  }
  LoadResult loaded = LoadOnce(path);
  if (!loaded.status.ok()) {
    if (skip_non_plugins && loaded.not_a_plugin) {
      warnings_.push_back(loaded.status.message() + " (skipped)");
      spdlog::warn("{}", warnings_.back());
      return OkStatus();
    }
    return loaded.status;
  }
  for (const Entry& entry : plugins_) {
    if (entry.plugin == loaded.plugin) return OkStatus();  // the same file again: no-op
  }
  plugins_.push_back({std::move(loaded.plugin), precedence});
  return OkStatus();
}

Status PluginRegistry::LoadDirectory(const std::string& dir, bool must_exist) {
  const std::string folder = NormalPath(dir);
  if (std::find(searched_directories_.begin(), searched_directories_.end(), folder) != searched_directories_.end()) {
    return OkStatus();
  }
  std::error_code ec;
  const fs::file_status st = fs::status(folder, ec);
  if (!fs::is_directory(st)) {
    if (must_exist) {
      return fs::exists(st) ? InvalidArgumentError("plugin folder " + folder + " is not a folder")
                            : NotFoundError("plugin folder " + folder + " does not exist");
    }
    spdlog::debug("plugin folder {} does not exist (skipped)", folder);
    return OkStatus();
  }
  searched_directories_.push_back(folder);
  const int precedence = ++directories_loaded_;
  std::vector<std::string> files;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code file_ec;
    if (it->path().extension() == ".so" && it->is_regular_file(file_ec)) files.push_back(it->path().string());
  }
  if (ec) return UnavailableError("plugin folder " + folder + ": cannot list it: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) LITMUS_RETURN_IF_ERROR(Load(file, precedence, /*skip_non_plugins=*/true));
  return OkStatus();
}

StatusOr<const LoadedRule*> PluginRegistry::FindRule(std::string_view name) const {
  struct Match {
    const LoadedRule* rule;
    int precedence;
    bool exact;
  };
  const std::string wanted = Lower(name);
  std::vector<Match> matches;
  for (const Entry& entry : plugins_) {
    for (const LoadedRule& rule : entry.plugin->rules) {
      const bool exact = rule.name == name;
      if (exact || Lower(rule.name) == wanted || RuleNameToSnakeCase(rule.name) == wanted) {
        matches.push_back({&rule, entry.precedence, exact});
      }
    }
  }
  if (matches.empty()) {
    std::set<std::string> available;
    for (const LoadedRule* rule : rules()) available.insert(rule->name);
    if (available.empty()) {
      return NotFoundError(
          "unknown rule '" + std::string(name) + "': no rule plugins were found (searched: " +
          (searched_directories_.empty() ? std::string("no folder") : Join(searched_directories_, ", ")) +
          "); load one with --plugin FILE or --plugin-dir DIR");
    }
    std::vector<NameCandidate> candidates;
    for (const std::string& rule : available) {
      candidates.push_back({rule, rule});
      candidates.push_back({RuleNameToSnakeCase(rule), rule});
    }
    const std::optional<std::string> suggestion = SuggestName(name, candidates);
    return NotFoundError("unknown rule '" + std::string(name) + "'; " +
                         (suggestion ? "did you mean " + *suggestion + "? " : std::string()) +
                         "available rules: " + Join({available.begin(), available.end()}, ", "));
  }
  if (std::any_of(matches.begin(), matches.end(), [](const Match& m) { return m.exact; })) {
    std::erase_if(matches, [](const Match& m) { return !m.exact; });
  }
  const int best = std::min_element(matches.begin(), matches.end(), [](const Match& a, const Match& b) {
                     return a.precedence < b.precedence;
                   })->precedence;
  std::erase_if(matches, [best](const Match& m) { return m.precedence != best; });
  if (matches.size() > 1) {
    std::vector<std::string> candidates;
    for (const Match& m : matches) candidates.push_back(m.rule->name + " of plugin " + m.rule->plugin_path);
    return InvalidArgumentError("rule name '" + std::string(name) + "' is ambiguous: " + Join(candidates, " and ") +
                                "; load only one of these plugins");
  }
  return matches.front().rule;
}

std::vector<const LoadedRule*> PluginRegistry::rules() const {
  std::vector<const LoadedRule*> out;
  for (const Entry& entry : plugins_) {
    for (const LoadedRule& rule : entry.plugin->rules) out.push_back(&rule);
  }
  std::sort(out.begin(), out.end(), [](const LoadedRule* a, const LoadedRule* b) {
    const std::string la = Lower(a->name), lb = Lower(b->name);
    return la != lb ? la < lb : a->plugin_path < b->plugin_path;
  });
  return out;
}

std::vector<std::string> PluginSearchPath(const std::vector<std::string>& plugin_dirs) {
  std::vector<std::string> out;
  auto add = [&out](const std::string& dir) {
    if (dir.empty()) return;
    std::string normal = NormalPath(dir);
    if (std::find(out.begin(), out.end(), normal) == out.end()) out.push_back(std::move(normal));
  };
  for (const std::string& dir : plugin_dirs) add(dir);
  if (const char* env = std::getenv("LITMUS_PLUGIN_PATH")) {
    std::string_view rest(env);
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      add(std::string(rest.substr(0, colon)));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path bin = exe.parent_path();
    // <prefix>/<libdir>/litmus/plugins, libdir as configured (lib, or lib/x86_64-linux-gnu for
    // a /usr prefix on Debian; an absolute libdir replaces the prefix).
    add((bin / ".." / LITMUS_INSTALL_PLUGIN_SUBDIR).string());
#if defined(LITMUS_BUILD_DIR) && defined(LITMUS_BUILD_PLUGIN_DIR)
    // Only a binary running from the build tree uses the build tree's plugins: an installed
    // litmus must not pick up a stale developer build.
    const fs::path build = fs::weakly_canonical(LITMUS_BUILD_DIR, ec);
    if (!ec && IsWithin(exe, build)) {
      add((bin / ".." / ".." / "builtin-rules").string());
      add(LITMUS_BUILD_PLUGIN_DIR);
    }
#endif
  }
  return out;
}

Status LoadPlugins(PluginRegistry& registry, const std::vector<std::string>& plugin_files,
                   const std::vector<std::string>& plugin_dirs) {
  for (const std::string& file : plugin_files) LITMUS_RETURN_IF_ERROR(registry.LoadFile(file));
  for (const std::string& dir : plugin_dirs) LITMUS_RETURN_IF_ERROR(registry.LoadDirectory(dir, /*must_exist=*/true));
  for (const std::string& dir : PluginSearchPath(plugin_dirs)) LITMUS_RETURN_IF_ERROR(registry.LoadDirectory(dir));
  return OkStatus();
}

std::string RuleNameToSnakeCase(std::string_view name) {
  auto upper = [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; };
  auto lower_or_digit = [](char c) {
    return std::islower(static_cast<unsigned char>(c)) != 0 || std::isdigit(static_cast<unsigned char>(c)) != 0;
  };
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (upper(c) && i > 0 && !out.empty() && out.back() != '_') {
      // A word starts after a lower-case letter or digit ("dRelu"), or at the last capital of an
      // acronym that is followed by a lower-case letter ("NLPSequence" -> "nlp_sequence").
      const bool after_word = lower_or_digit(name[i - 1]);
      const bool acronym_end =
          upper(name[i - 1]) && i + 1 < name.size() && std::islower(static_cast<unsigned char>(name[i + 1])) != 0;
      if (after_word || acronym_end) out += '_';
    }
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace litmus
