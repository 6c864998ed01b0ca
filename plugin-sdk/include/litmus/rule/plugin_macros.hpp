/// \file
/// litmus/rule/plugin_macros.hpp — part of litmus/rule.hpp: LITMUS_RULE_PLUGIN and LITMUS_RULE,
/// which register a plugin's rules and define its only export (litmus_plugin_entry_v1), and the
/// machinery behind them: constant-initialized tables (no code runs at dlopen), compile-time
/// checks of each declaration, and the noexcept thunks the host calls.
/// Thread-safety: see litmus/rule_abi.h.
#ifndef LITMUS_RULE_PLUGIN_MACROS_HPP_
#define LITMUS_RULE_PLUGIN_MACROS_HPP_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "litmus/rule/internal.hpp"
#include "litmus/rule/params.hpp"
#include "litmus/rule/rule_base.hpp"
#include "litmus/rule_abi.h"

namespace litmus {

// ---- Registration machinery behind LITMUS_RULE_PLUGIN -----------------------------------------
namespace internal {

// Called from constant evaluation when a declaration is invalid: not constexpr on purpose, so the
// compiler's error names the problem.
inline void LITMUS_ERROR_duplicate_rule_name() {}
inline void LITMUS_ERROR_empty_rule_or_param_name() {}
inline void LITMUS_ERROR_duplicate_param_name() {}
inline void LITMUS_ERROR_unknown_param_type_use_float_int_bool_string_list_or_mode() {}
inline void LITMUS_ERROR_on_poll_needs_a_plugin_built_for_ABI_1_1() {}

struct Thunks {
  static void Destroy(litmus_rule_instance_t* instance) noexcept {
    try {
      delete reinterpret_cast<Rule*>(instance);
    } catch (...) {
      // Destructors do not throw; nothing can be reported from destroy anyway.
    }
  }
  static litmus_status_t SetRequiredTensors(litmus_rule_instance_t* instance, litmus_ctx_t* ctx,
                                            int64_t step) noexcept {
    if (instance == nullptr) return LITMUS_INVALID_ARGUMENT;
    return reinterpret_cast<Rule*>(instance)->RunSetRequiredTensors(ctx, step);
  }
  template <bool kDeclaresRequirements>
  static litmus_status_t InvokeAtStep(litmus_rule_instance_t* instance, litmus_ctx_t* ctx,
                                      int64_t step) noexcept {
    if (instance == nullptr) return LITMUS_INVALID_ARGUMENT;
    return reinterpret_cast<Rule*>(instance)->RunInvoke(ctx, step, kDeclaresRequirements);
  }
  static litmus_status_t OnPoll(litmus_rule_instance_t* instance, litmus_ctx_t* ctx,
                                int64_t last_step) noexcept {
    if (instance == nullptr) return LITMUS_INVALID_ARGUMENT;
    return reinterpret_cast<Rule*>(instance)->RunOnPoll(ctx, last_step);
  }
};

// Per-plugin globals, instantiated with a type private to the plugin's registration TU: the host
// snapshot (trivial, zero until the entry ran) and the plugin table.
template <class Tag>
struct PluginState {
  static inline litmus_host_api_t host{};
  static inline const litmus_plugin_api_t* api = nullptr;
};

template <class State, class T, size_t I>
litmus_status_t CreateThunk(litmus_ctx_t* ctx, const litmus_param_t* params, size_t param_count,
                            litmus_rule_instance_t** instance) noexcept {
  const litmus_host_api_t* host = &State::host;
  try {
    if (instance == nullptr || State::api == nullptr || (param_count > 0 && params == nullptr)) {
      SetErrorText(host, ctx, {}, "create: called with invalid arguments or before the entry");
      return LITMUS_INVALID_ARGUMENT;
    }
    *instance = nullptr;
    const RuleArgs args(host, ctx, &State::api->rules[I], params, param_count);
    std::unique_ptr<T> rule = std::make_unique<T>(args);
    Rule* base = rule.release();
    base->ctx_ = nullptr;  // ctx is valid during create only
    *instance = reinterpret_cast<litmus_rule_instance_t*>(base);
    return LITMUS_OK;
  } catch (...) {
    return StatusFromCurrentException(host, ctx);
  }
}

// The function type of a pointer to member function: bool(int64_t) for &T::invoke_at_step.
template <class M>
struct MemberFunction;
template <class C, class F>
struct MemberFunction<F C::*> {
  using type = F;
};

// One LITMUS_RULE(...) line: the class and its metadata.
template <class T, size_t N>
struct RuleEntry {
  using RuleType = T;
  std::string_view name;
  std::string_view version;
  std::string_view description;
  std::array<ParamSpec, N> params;
};

template <class T, class... P>
constexpr RuleEntry<T, sizeof...(P)> MakeRuleEntry(std::string_view name, std::string_view version,
                                                   std::string_view description, P... params) {
  static_assert(std::is_base_of_v<Rule, T>, "LITMUS_RULE: the class must derive from litmus::Rule");
  using InvokeType = typename MemberFunction<decltype(&T::invoke_at_step)>::type;
  static_assert(std::is_same_v<InvokeType, bool(int64_t)> ||
                    std::is_same_v<InvokeType, bool(int64_t) noexcept>,
                "LITMUS_RULE: the class must override bool invoke_at_step(int64_t step)");
  using SetRequiredType =
      typename MemberFunction<decltype(&T::set_required_tensors)>::type;
  static_assert(std::is_same_v<SetRequiredType, void(int64_t)> ||
                    std::is_same_v<SetRequiredType, void(int64_t) noexcept>,
                "LITMUS_RULE: set_required_tensors must be void set_required_tensors(int64_t step)");
  using OnPollType = typename MemberFunction<decltype(&T::on_poll)>::type;
  static_assert(std::is_same_v<OnPollType, bool(int64_t)> ||
                    std::is_same_v<OnPollType, bool(int64_t) noexcept>,
                "LITMUS_RULE: on_poll must be bool on_poll(int64_t last_step)");
  static_assert(!std::is_abstract_v<T>, "LITMUS_RULE: the class is abstract");
  static_assert(std::is_constructible_v<T, const RuleArgs&>,
                "LITMUS_RULE: the class needs a public constructor T(const litmus::RuleArgs&) that "
                "passes the args to litmus::Rule (`using litmus::Rule::Rule;` if it needs nothing "
                "else)");
  static_assert((std::is_same_v<P, ParamSpec> && ...),
                "LITMUS_RULE: parameters are litmus::FloatParam(...), IntParam, BoolParam, "
                "StringParam, ListParam, ModeParam or Required(...)");
  return {name, version, description, {params...}};
}

// True when T (or a base between it and Rule) overrides set_required_tensors.
template <class T>
constexpr bool kDeclaresRequirements =
    !std::is_same_v<decltype(&T::set_required_tensors), void (Rule::*)(int64_t)>;

// True when T (or a base between it and Rule) overrides on_poll.
template <class T>
constexpr bool kPolls = !std::is_same_v<decltype(&T::on_poll), bool (Rule::*)(int64_t)>;

// True when T declares `static constexpr bool stateless = true;` (ABI 1.2 LITMUS_RULE_STATELESS).
template <class T>
constexpr bool kStateless = [] {
  if constexpr (requires { T::stateless; }) {
    return static_cast<bool>(T::stateless);
  } else {
    return false;
  }
}();

template <size_t N>
struct ParamTable {
  std::array<litmus_param_spec_t, N> specs{};
};

// All static tables of a plugin, constant-initialized (no code runs at dlopen). Built by direct
// initialization of a namespace-scope constinit variable, so the pointers between its members
// point into that variable.
template <class State, class... Entries>
class PluginTables {
 public:
  constexpr PluginTables(State, uint32_t abi_major, uint32_t abi_minor, std::string_view name,
                         std::string_view version, Entries... entries)
      : param_tables_{MakeParamTable(entries)...} {
    static_assert(sizeof...(Entries) > 0, "LITMUS_RULE_PLUGIN: declare at least one rule");
    Fill(std::index_sequence_for<Entries...>{}, abi_minor, entries...);
    api_.struct_size = sizeof(litmus_plugin_api_t);
    api_.abi_major = abi_major;
    api_.abi_minor = abi_minor;
    api_.plugin_name = ToStrConst(name);
    api_.plugin_version = ToStrConst(version);
    api_.rules = descriptors_.data();
    api_.rule_count = sizeof...(Entries);
    if (name.empty()) LITMUS_ERROR_empty_rule_or_param_name();
  }
  const litmus_plugin_api_t* api() const { return &api_; }

 private:
  static constexpr litmus_str_t ToStrConst(std::string_view text) {
    return {text.data(), text.size()};
  }
  template <class E>
  static constexpr auto MakeParamTable(const E& entry) {
    ParamTable<std::tuple_size_v<decltype(entry.params)>> table;
    for (size_t i = 0; i < entry.params.size(); ++i) {
      const ParamSpec& p = entry.params[i];
      if (p.name.empty()) LITMUS_ERROR_empty_rule_or_param_name();
      if (p.type != "float" && p.type != "int" && p.type != "bool" && p.type != "string" &&
          p.type != "list" && p.type != "mode") {
        LITMUS_ERROR_unknown_param_type_use_float_int_bool_string_list_or_mode();
      }
      for (size_t j = 0; j < i; ++j) {
        if (entry.params[j].name == p.name) LITMUS_ERROR_duplicate_param_name();
      }
      table.specs[i].name = ToStrConst(p.name);
      table.specs[i].type = ToStrConst(p.type);
      table.specs[i].default_value = ToStrConst(p.default_value);
      table.specs[i].required = p.required ? 1u : 0u;
      table.specs[i].description = ToStrConst(p.description);
    }
    return table;
  }
  template <size_t... I>
  constexpr void Fill(std::index_sequence<I...>, uint32_t abi_minor, const Entries&... entries) {
    (FillOne<I>(abi_minor, entries), ...);
  }
  // abi_minor: the minor the plugin declares; members since a later minor stay NULL.
  template <size_t I, class E>
  constexpr void FillOne(uint32_t abi_minor, const E& entry) {
    using T = typename E::RuleType;
    if (entry.name.empty()) LITMUS_ERROR_empty_rule_or_param_name();
    for (size_t j = 0; j < I; ++j) {
      const litmus_rule_descriptor_t& other = descriptors_[j];
      if (std::string_view(other.name.data, other.name.size) == entry.name) {
        LITMUS_ERROR_duplicate_rule_name();
      }
    }
    litmus_rule_descriptor_t& d = descriptors_[I];
    d.struct_size = sizeof(litmus_rule_descriptor_t);
    d.param_spec_size = sizeof(litmus_param_spec_t);
    d.name = ToStrConst(entry.name);
    d.version = ToStrConst(entry.version);
    d.description = ToStrConst(entry.description);
    d.params = std::get<I>(param_tables_).specs.data();
    d.param_count = entry.params.size();
    d.create = &CreateThunk<State, T, I>;
    d.destroy = &Thunks::Destroy;
    d.set_required_tensors = kDeclaresRequirements<T> ? &Thunks::SetRequiredTensors : nullptr;
    d.invoke_at_step = &Thunks::InvokeAtStep<kDeclaresRequirements<T>>;
    // since 1.1: a rule that relies on on_poll cannot claim an older ABI (its host would never
    // call it).
    if (kPolls<T> && abi_minor < 1) LITMUS_ERROR_on_poll_needs_a_plugin_built_for_ABI_1_1();
    d.on_poll = kPolls<T> && abi_minor >= 1 ? &Thunks::OnPoll : nullptr;
    // since 1.2 (an older host never reads it).
    d.flags = kStateless<T> ? LITMUS_RULE_STATELESS : 0u;
  }

  std::tuple<ParamTable<std::tuple_size_v<decltype(Entries::params)>>...> param_tables_;
  std::array<litmus_rule_descriptor_t, sizeof...(Entries)> descriptors_{};
  litmus_plugin_api_t api_{};
};

template <class State, class... Entries>
PluginTables(State, uint32_t, uint32_t, std::string_view, std::string_view, Entries...)
    -> PluginTables<State, Entries...>;

// The body of litmus_plugin_entry_v1: checks the host's ABI and hands out the plugin table.
template <class State>
litmus_status_t PluginEntry(const litmus_plugin_api_t* api, const litmus_host_api_t* host,
                            litmus_ctx_t* ctx, const litmus_plugin_api_t** out) noexcept {
  try {
    if (out != nullptr) *out = nullptr;
    if (host == nullptr || out == nullptr) return LITMUS_INVALID_ARGUMENT;
    litmus_host_api_t snapshot;
    SnapshotHost(host, &snapshot);
    if (snapshot.struct_size < offsetof(litmus_host_api_t, reserved0)) {
      return LITMUS_INVALID_ARGUMENT;  // not even a table header: nowhere to put a message
    }
    if (snapshot.abi_major != api->abi_major || snapshot.abi_minor < api->abi_minor) {
      const std::string message =
          "plugin " + std::string(FromStr(api->plugin_name)) + " needs ABI " +
          std::to_string(api->abi_major) + "." + std::to_string(api->abi_minor) +
          ", litmus provides " + std::to_string(snapshot.abi_major) + "." +
          std::to_string(snapshot.abi_minor);
      SetErrorText(&snapshot, ctx, {}, message);
      return LITMUS_INVALID_CONFIG;
    }
    State::host = snapshot;
    State::api = api;
    *out = api;
    return LITMUS_OK;
  } catch (...) {
    return StatusFromCurrentException(host, ctx);
  }
}

}  // namespace internal
}  // namespace litmus

#ifndef LITMUS_PLUGIN_ABI_MAJOR
/// The ABI major version a plugin declares: LITMUS_ABI_MAJOR. Tests of litmus itself override it
/// to build plugins that claim another version; a real plugin never sets it.
#define LITMUS_PLUGIN_ABI_MAJOR LITMUS_ABI_MAJOR
#endif
#ifndef LITMUS_PLUGIN_ABI_MINOR
/// The ABI minor version a plugin declares: LITMUS_ABI_MINOR (see LITMUS_PLUGIN_ABI_MAJOR).
#define LITMUS_PLUGIN_ABI_MINOR LITMUS_ABI_MINOR
#endif

/// One rule of a plugin, an argument of LITMUS_RULE_PLUGIN: its class (derived from litmus::Rule,
/// constructible from `const litmus::RuleArgs&`), smdebug class name (what `--rule` selects),
/// version, one-line description and parameters (litmus::FloatParam(...), ...; none is fine).
/// Mistakes such as a wrong invoke_at_step signature, a duplicate name or an unknown parameter
/// type fail to compile with a message that names them.
#define LITMUS_RULE(Class, name, version, description, ...) \
  ::litmus::internal::MakeRuleEntry<Class>(name, version, description __VA_OPT__(, ) __VA_ARGS__)

/// Registers the rules of a plugin and defines its only export, litmus_plugin_entry_v1. Use once
/// per plugin, at namespace scope of one source file, followed by a semicolon:
/// \code
/// LITMUS_RULE_PLUGIN("my_rules", "1.0.0",
///                    LITMUS_RULE(MyRule, "MyRule", "1.0.0", "Fires when ...",
///                                litmus::FloatParam("threshold", "10.0", "...")),
///                    LITMUS_RULE(OtherRule, "OtherRule", "1.0.0", "..."));
/// \endcode
/// The plugin's tables are constant-initialized (no code runs at dlopen); the entry checks the
/// host's ABI version and fails with "plugin X needs ABI 1.N, litmus provides 1.M" when too old.
#define LITMUS_RULE_PLUGIN(plugin_name, plugin_version, ...)                                    \
  namespace {                                                                                  \
  struct LitmusPluginTag_ {};                                                                  \
  using LitmusPluginState_ = ::litmus::internal::PluginState<LitmusPluginTag_>;                \
  constinit const ::litmus::internal::PluginTables litmus_plugin_tables_{                      \
      LitmusPluginState_{}, LITMUS_PLUGIN_ABI_MAJOR, LITMUS_PLUGIN_ABI_MINOR, plugin_name,     \
      plugin_version, __VA_ARGS__};                                                            \
  }                                                                                            \
  extern "C" LITMUS_PLUGIN_EXPORT litmus_status_t litmus_plugin_entry_v1(                      \
      const litmus_host_api_t* host, litmus_ctx_t* ctx, const litmus_plugin_api_t** out) {     \
    return ::litmus::internal::PluginEntry<LitmusPluginState_>(litmus_plugin_tables_.api(),    \
                                                               host, ctx, out);                \
  }                                                                                            \
  static_assert(true, "require a semicolon after LITMUS_RULE_PLUGIN(...)")

#endif  // LITMUS_RULE_PLUGIN_MACROS_HPP_
