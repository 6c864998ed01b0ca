/// \file
/// litmus/rule/rule_base.hpp — part of litmus/rule.hpp: litmus::Rule, the base class of every
/// rule (invoke_at_step, set_required_tensors, on_poll; trials, parameters, logging, report,
/// actions), RuleArgs that its constructor takes, and JsonString for report_detail.
/// Thread-safety: the host calls an instance from one thread at a time; host access (everything
/// but the parameter accessors) works only during a host call.
#ifndef LITMUS_RULE_RULE_BASE_HPP_
#define LITMUS_RULE_RULE_BASE_HPP_

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "litmus/rule/errors.hpp"
#include "litmus/rule/internal.hpp"
#include "litmus/rule/params.hpp"
#include "litmus/rule/required_tensors.hpp"
#include "litmus/rule/trial.hpp"
#include "litmus/rule/types.hpp"
#include "litmus/rule_abi.h"

namespace litmus {

/// Quotes and escapes text as a JSON string, for Rule::report_detail:
/// `report_detail("tensor", JsonString(tensor.name()))`.
inline std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

/// What the SDK hands a rule's constructor; pass it on to litmus::Rule. Valid during construction.
class RuleArgs {
 public:
  RuleArgs(const RuleArgs&) = delete;             ///< Not copyable: it lives for one create call.
  RuleArgs& operator=(const RuleArgs&) = delete;  ///< Not assignable.

  /// For the SDK's thunks and for tests that construct rules against a fake host table.
  RuleArgs(const litmus_host_api_t* host, litmus_ctx_t* ctx,
           const litmus_rule_descriptor_t* descriptor, const litmus_param_t* params,
           size_t param_count)
      : host_(host), ctx_(ctx), descriptor_(descriptor), params_(params), param_count_(param_count) {}

 private:
  friend class Rule;
  const litmus_host_api_t* host_;
  litmus_ctx_t* ctx_;
  const litmus_rule_descriptor_t* descriptor_;
  const litmus_param_t* params_;
  size_t param_count_;
};

// ---- The rule base class ----------------------------------------------------------------------
/// The base class of every rule, smdebug's `Rule`. Derive, pass RuleArgs to this constructor,
/// override invoke_at_step (and set_required_tensors if the rule declares its reads), and register
/// the class with LITMUS_RULE_PLUGIN. A rule is created by the host's create call, used by one
/// thread at a time, and destroyed by destroy.
///
/// A minimal rule:
/// \code
/// class LossAbove : public litmus::Rule {
///  public:
///   explicit LossAbove(const litmus::RuleArgs& args)
///       : Rule(args), limit_(param_float("limit")) {}
///   bool invoke_at_step(int64_t step) override {
///     return base_trial().tensor("loss").value(step).scalar() > limit_;
///   }
///  private:
///   double limit_;
/// };
/// LITMUS_RULE_PLUGIN("loss_rules", "1.0.0",
///                    LITMUS_RULE(LossAbove, "LossAbove", "1.0.0", "Fires when the loss > limit",
///                                litmus::FloatParam("limit", "10.0", "largest loss allowed")));
/// \endcode
///
/// Exceptions thrown from any member the host calls (constructor included) become the status of
/// their class (see Error); a TensorUnavailableForStep from invoke_at_step skips the step.
///
/// A rule whose verdict at a step depends only on the data it reads for that step, never on
/// what earlier calls saw, says so with `static constexpr bool stateless = true;` in its class
/// (ABI 1.2, LITMUS_RULE_STATELESS): a job resumed after a crash then continues it where it was
/// instead of replaying its earlier steps to rebuild its state.
class Rule {
 public:
  /// Reads the rule's name, declared parameters and the user's values from `args`. Host access
  /// (logging, trials) works in the constructor too; parameter values are best read here.
  explicit Rule(const RuleArgs& args)
      : host_(args.host_),
        ctx_(args.ctx_),
        req_tensors_(this),
        active_req_(&req_tensors_) {
    if (args.descriptor_ != nullptr) {
      const litmus_rule_descriptor_t& d = *args.descriptor_;
      name_ = internal::FromStr(d.name);
      const size_t stride =
          d.param_spec_size != 0 ? d.param_spec_size : sizeof(litmus_param_spec_t);
      for (size_t i = 0; i < d.param_count; ++i) {
        const auto* spec = reinterpret_cast<const litmus_param_spec_t*>(
            reinterpret_cast<const unsigned char*>(d.params) + i * stride);
        declared_.emplace(std::string(internal::FromStr(spec->name)),
                          std::string(internal::FromStr(spec->default_value)));
      }
    }
    for (size_t i = 0; i < args.param_count_; ++i) {
      values_[std::string(internal::FromStr(args.params_[i].key))] =
          std::string(internal::FromStr(args.params_[i].value));
    }
  }
  virtual ~Rule() = default;               ///< Called by the host's destroy.
  Rule(const Rule&) = delete;              ///< Not copyable: the host owns the instance.
  Rule& operator=(const Rule&) = delete;   ///< Not assignable.

  /// smdebug's set_required_tensors(step): declare through req_tensors().add what
  /// invoke_at_step(step) reads. May run ahead of time; must not change evaluation state.
  virtual void set_required_tensors(int64_t step) { static_cast<void>(step); }
  /// smdebug's invoke_at_step(step): true when the condition is met at global step `step`.
  virtual bool invoke_at_step(int64_t step) = 0;
  /// ABI 1.1: called while no new step arrives (after each poll of the trial that found nothing
  /// to evaluate, also while the host waits for the trial's first collections file), for rules
  /// that depend on time rather than data. last_step: the last global step evaluated for this
  /// rule, -1 if none. True = condition met (reported at last_step, or 0 when -1). Override only
  /// when needed: the host calls it only for rules that override it.
  virtual bool on_poll(int64_t last_step) {
    static_cast<void>(last_step);
    return false;
  }

  /// The rule's class name as registered ("CustomGradientRule").
  const std::string& rule_name() const { return name_; }

  /// \name Trials
  /// The job's trials: the base trial (0) and the other trials (1..), smdebug's base_trial and
  /// other_trials.
  /// @{

  /// The trial the rule evaluates.
  Trial base_trial() { return Trial(this, 0); }
  /// The number of trials (1 + other trials).
  size_t trial_count() const;
  /// Trial `index` (0 is the base trial); InvalidArgument out of range.
  Trial trial(size_t index) {
    if (index >= trial_count()) {
      throw InvalidArgument("trial index " + std::to_string(index) + " out of range (" +
                            std::to_string(trial_count()) + " trials)");
    }
    return Trial(this, static_cast<uint32_t>(index));
  }
  /// The other trials (1..), for rules that compare runs.
  std::vector<Trial> other_trials() {
    std::vector<Trial> out;
    const size_t count = trial_count();
    for (size_t i = 1; i < count; ++i) out.push_back(Trial(this, static_cast<uint32_t>(i)));
    return out;
  }
  /// The requirements of the current step (see RequiredTensors).
  RequiredTensors& req_tensors() { return *active_req_; }
  /// @}

  /// \name Parameters
  /// The value of a parameter is the user's, else the declared default
  /// (docs/rules/semantics.md §1.2). "None" and "" mean not set. Reading a parameter the rule did
  /// not declare is a rule bug (litmus::Error); a bad or missing value throws InvalidConfig
  /// "name: ...", which create turns into LITMUS_INVALID_CONFIG.
  /// @{

  /// True when the parameter has a value (not "None" or "").
  bool has_param(std::string_view name) const { return !params::IsUnset(ParamText(name)); }
  /// The text as given, or nullopt if absent (no "None" handling).
  std::optional<std::string> param_raw(std::string_view name) const {
    const auto found = values_.find(name);
    if (found != values_.end()) return found->second;
    CheckDeclared(name);
    const auto declared = declared_.find(name);
    if (declared->second.empty()) return std::nullopt;
    return declared->second;
  }
  /// A number (params::ParseDouble); InvalidConfig if not set or not a number.
  double param_float(std::string_view name) const { return *ParseRequired(name, ParseFloatOf); }
  /// An integer (params::ParseInt); InvalidConfig if not set or not an integer.
  int64_t param_int(std::string_view name) const { return *ParseRequired(name, ParseIntOf); }
  /// True, true, False or false; InvalidConfig if not set or anything else.
  bool param_bool(std::string_view name) const { return *ParseRequired(name, ParseBoolOf); }
  /// The text; InvalidConfig if not set.
  std::string param_string(std::string_view name) const {
    const std::string_view text = ParamText(name);
    if (params::IsUnset(text)) throw InvalidConfig(std::string(name) + ": required parameter is not set");
    return std::string(text);
  }
  /// A number, or nullopt if not set; InvalidConfig if set but not a number.
  std::optional<double> param_optional_float(std::string_view name) const {
    return ParseOptional(name, ParseFloatOf);
  }
  /// An integer, or nullopt if not set; InvalidConfig if set but not an integer.
  std::optional<int64_t> param_optional_int(std::string_view name) const {
    return ParseOptional(name, ParseIntOf);
  }
  /// A boolean, or nullopt if not set; InvalidConfig if set but not a boolean.
  std::optional<bool> param_optional_bool(std::string_view name) const {
    return ParseOptional(name, ParseBoolOf);
  }
  /// The text, or nullopt if not set.
  std::optional<std::string> param_optional_string(std::string_view name) const {
    const std::string_view text = ParamText(name);
    if (params::IsUnset(text)) return std::nullopt;
    return std::string(text);
  }
  /// Comma-separated, items trimmed, empty items dropped; not set gives an empty list.
  std::vector<std::string> param_list(std::string_view name) const {
    return params::SplitList(ParamText(name));
  }
  /// A list of numbers; InvalidConfig naming the item that is not one.
  std::vector<double> param_float_list(std::string_view name) const {
    return ParseList(name, ParseFloatOf);
  }
  /// A list of integers; InvalidConfig naming the item that is not one.
  std::vector<int64_t> param_int_list(std::string_view name) const {
    return ParseList(name, ParseIntOf);
  }
  /// @}

  /// \name Logging
  /// Through the host's logger (stderr of `litmus run`), tagged with the rule. Arguments are
  /// streamed with operator<<: `log_info("tensor ", name, " mean ", mean)`. Never throws; a line
  /// logged outside a host call is dropped.
  /// @{

  /// One line at `level`.
  template <class... Args>
  void log(LogLevel level, const Args&... args) const noexcept {
    try {
      std::ostringstream line;
      (line << ... << args);
      LogText(level, line.str());
    } catch (...) {
      // Logging must never fail a rule.
    }
  }
  /// One line at debug level.
  template <class... Args>
  void log_debug(const Args&... args) const noexcept { log(LogLevel::kDebug, args...); }
  /// One line at info level.
  template <class... Args>
  void log_info(const Args&... args) const noexcept { log(LogLevel::kInfo, args...); }
  /// One line at warning level.
  template <class... Args>
  void log_warning(const Args&... args) const noexcept { log(LogLevel::kWarning, args...); }
  /// One line at error level.
  template <class... Args>
  void log_error(const Args&... args) const noexcept { log(LogLevel::kError, args...); }
  /// @}

  // ---- Actions (ABI 1.1).
  /// Only in the constructor: one more action to run when this rule's condition is met, besides
  /// the job's action_json, in that parameter's JSON form (docs/job-contract.md §8), e.g.
  /// `{"name": "stoptraining", "training_job_prefix": "job-1"}`. Throws InvalidArgument (the
  /// host's text) for text that is not a JSON object or list.
  void add_action(std::string_view action_json) {
    Check(HostFn(&litmus_host_api_t::add_action, "add_action")(Ctx("add_action"),
                                                                internal::ToStr(action_json)),
          "add_action");
  }

  /// \name Report
  /// The rule's report file (rule-reports/RULE.json in the output folder); only inside
  /// invoke_at_step and on_poll.
  /// @{

  /// Adds `count` to the report's Violations.
  void report_violations(int64_t count) {
    HostFn(&litmus_host_api_t::report_violations, "report_violations")(Ctx("report_violations"),
                                                                        count);
  }
  /// Sets Details.key to `json_value`, JSON text (invalid JSON is stored as a string by the host).
  void report_detail(std::string_view key, std::string_view json_value) {
    HostFn(&litmus_host_api_t::report_detail, "report_detail")(
        Ctx("report_detail"), internal::ToStr(key), internal::ToStr(json_value));
  }
  /// Sets Details.key to a number or bool (NaN and infinities are stored as the strings "nan",
  /// "inf").
  template <class T>
    requires std::is_arithmetic_v<T>
  void report_detail(std::string_view key, T value) {
    if constexpr (std::is_same_v<T, bool>) {
      report_detail(key, std::string_view(value ? "true" : "false"));
    } else if constexpr (std::is_floating_point_v<T>) {
      const double v = static_cast<double>(value);
      if (std::isnan(v)) return report_detail(key, std::string_view("\"nan\""));
      if (std::isinf(v)) return report_detail(key, std::string_view(v > 0 ? "\"inf\"" : "\"-inf\""));
      char buffer[64];
      const auto result = std::to_chars(buffer, buffer + sizeof(buffer), v);
      report_detail(key, std::string_view(buffer, static_cast<size_t>(result.ptr - buffer)));
    } else {
      report_detail(key, std::string_view(std::to_string(value)));
    }
  }
  /// @}

  /// \name What the rule watched (ABI 1.3)
  /// Shown in the job's HTML report and TensorBoard output (docs/report.md), never part of the
  /// verdict. Publish the values the rule compares and the threshold it compares them with.
  /// @{

  /// One value of the series `series` (e.g. "mean |gradient|") of tensor `tensor` at global step
  /// `step`; only inside invoke_at_step and on_poll.
  void report_series(std::string_view series, std::string_view tensor, int64_t step, double value) {
    HostFn(&litmus_host_api_t::report_series, "report_series")(
        Ctx("report_series"), internal::ToStr(series), internal::ToStr(tensor), step, value);
  }
  /// A series of the rule itself, not of one tensor (e.g. "loss change").
  void report_series(std::string_view series, int64_t step, double value) {
    report_series(series, std::string_view(), step, value);
  }
  /// The threshold `series` is compared with and on which side the condition is met; in the
  /// constructor, invoke_at_step or on_poll. One per side (upper and lower bound); a later call
  /// for the same side replaces it.
  void report_threshold(std::string_view series, double value, Fires fires_when) {
    HostFn(&litmus_host_api_t::report_threshold, "report_threshold")(
        Ctx("report_threshold"), internal::ToStr(series), value, static_cast<int32_t>(fires_when));
  }
  /// What to do when the rule fires, in a sentence or two (the report's rules table); in the
  /// constructor, invoke_at_step or on_poll.
  void report_recommendation(std::string_view text) {
    HostFn(&litmus_host_api_t::report_recommendation, "report_recommendation")(
        Ctx("report_recommendation"), internal::ToStr(text));
  }
  /// @}

 private:
  friend class Trial;
  friend class Tensor;
  friend class RequiredTensors;
  friend struct internal::Thunks;
  template <class State, class T, size_t I>
  friend litmus_status_t internal::CreateThunk(litmus_ctx_t*, const litmus_param_t*, size_t,
                                               litmus_rule_instance_t**) noexcept;

  // The host function `member`, or Error if the host table does not have it (its struct_size
  // ends before it, or it is NULL).
  template <class Fn>
  Fn HostFn(Fn litmus_host_api_t::*member, const char* name) const {
    const Fn fn = host_ == nullptr ? nullptr : host_->*member;
    if (fn == nullptr) {
      throw Error(std::string("the host does not provide ") + name + " (host ABI " +
                  (host_ == nullptr ? std::string("none")
                                    : std::to_string(host_->abi_major) + "." +
                                          std::to_string(host_->abi_minor)) +
                  ")");
    }
    return fn;
  }
  litmus_ctx_t* Ctx(const char* what) const {
    if (ctx_ == nullptr) {
      throw Error(std::string(what) + ": host access outside a host call (create, "
                                      "set_required_tensors, invoke_at_step, on_poll)");
    }
    return ctx_;
  }
  // Turns a failed host status into the matching exception, marked as already reported.
  template <class E>
  [[noreturn]] static void ThrowReported(E error) {
    error.host_reported_ = true;
    throw error;
  }
  [[noreturn]] static void ThrowHostStatus(litmus_status_t status, const char* function,
                                           std::string_view tensor, int64_t step, Mode mode,
                                           std::string_view worker) {
    switch (status) {
      case LITMUS_TENSOR_UNAVAILABLE_FOR_STEP:
        ThrowReported(TensorUnavailableForStep(tensor, step, mode));
      case LITMUS_TENSOR_UNAVAILABLE: ThrowReported(TensorUnavailable(tensor));
      case LITMUS_STEP_UNAVAILABLE: ThrowReported(StepUnavailable(step, mode));
      case LITMUS_NOT_YET_AVAILABLE: ThrowReported(StepNotYetAvailable(step, mode));
      case LITMUS_NO_MORE_DATA:
        ThrowReported(NoMoreData("Looking for step " + std::to_string(step) + " of mode " +
                                 std::string(ModeName(mode)) + " and reached end of training"));
      case LITMUS_INVALID_CONFIG:
        ThrowReported(InvalidConfig(std::string(function) + ": invalid configuration"));
      case LITMUS_INVALID_ARGUMENT:
        ThrowReported(InvalidArgument(std::string(function) + ": invalid argument" +
                                      (tensor.empty() ? "" : " (tensor " + std::string(tensor) + ")")));
      case LITMUS_INVALID_WORKER: ThrowReported(InvalidWorker(worker));
      default: break;  // LITMUS_INTERNAL and values this SDK does not know
    }
    ThrowReported(Error(std::string(function) + " failed with status " + std::to_string(status) +
                        (tensor.empty() ? "" : " (tensor " + std::string(tensor) + ")")));
  }
  static void Check(litmus_status_t status, const char* function, std::string_view tensor = {},
                    int64_t step = -1, Mode mode = Mode::kGlobal, std::string_view worker = {}) {
    if (status != LITMUS_OK) ThrowHostStatus(status, function, tensor, step, mode, worker);
  }
  void LogText(LogLevel level, std::string_view text) const noexcept {
    if (host_ == nullptr || host_->log == nullptr || ctx_ == nullptr) return;
    host_->log(ctx_, static_cast<int32_t>(level), text.data(), text.size());
  }

  // ---- Parameters
  void CheckDeclared(std::string_view name) const {
    if (declared_.find(name) == declared_.end() && values_.find(name) == values_.end()) {
      throw Error("rule " + name_ + " reads parameter '" + std::string(name) +
                  "' that it does not declare");
    }
  }
  std::string_view ParamText(std::string_view name) const {
    const auto found = values_.find(name);
    if (found != values_.end()) return found->second;
    CheckDeclared(name);
    const auto declared = declared_.find(name);
    return declared == declared_.end() ? std::string_view() : std::string_view(declared->second);
  }
  static std::optional<double> ParseFloatOf(std::string_view name, std::string_view text) {
    const std::optional<double> value = params::ParseDouble(text);
    if (!value) {
      throw InvalidConfig(std::string(name) + ": expected a number, got '" + std::string(text) + "'");
    }
    return value;
  }
  static std::optional<int64_t> ParseIntOf(std::string_view name, std::string_view text) {
    const std::optional<int64_t> value = params::ParseInt(text);
    if (!value) {
      throw InvalidConfig(std::string(name) + ": expected an integer, got '" + std::string(text) +
                          "'");
    }
    return value;
  }
  static std::optional<bool> ParseBoolOf(std::string_view name, std::string_view text) {
    const std::optional<bool> value = params::ParseBool(text);
    if (!value) {
      throw InvalidConfig(std::string(name) + ": expected True, true, False or false, got '" +
                          std::string(text) + "'");
    }
    return value;
  }
  template <class V>
  using Parser = std::optional<V> (*)(std::string_view name, std::string_view text);
  template <class V>
  std::optional<V> ParseRequired(std::string_view name, Parser<V> parse) const {
    const std::string_view text = ParamText(name);
    if (params::IsUnset(text)) {
      throw InvalidConfig(std::string(name) + ": required parameter is not set");
    }
    return parse(name, text);
  }
  template <class V>
  std::optional<V> ParseOptional(std::string_view name, Parser<V> parse) const {
    const std::string_view text = ParamText(name);
    if (params::IsUnset(text)) return std::nullopt;
    return parse(name, text);
  }
  template <class V>
  std::vector<V> ParseList(std::string_view name, Parser<V> parse) const {
    std::vector<V> out;
    const std::vector<std::string> items = param_list(name);
    for (size_t i = 0; i < items.size(); ++i) {
      try {
        out.push_back(*parse(name, items[i]));
      } catch (const InvalidConfig& error) {
        throw InvalidConfig(std::string(name) + ": item " + std::to_string(i + 1) + " of '" +
                            std::string(ParamText(name)) + "': " +
                            std::string(error.what()).substr(name.size() + 2));
      }
    }
    return out;
  }

  // ---- Call plumbing for the thunks (internal::Thunks). Each sets ctx_ for the call and clears it
  // afterwards; exceptions never leave them.
  struct CallScope {
    CallScope(Rule* rule, litmus_ctx_t* ctx) : rule_(rule) { rule_->ctx_ = ctx; }
    ~CallScope() {
      rule_->ctx_ = nullptr;
      rule_->active_req_ = &rule_->req_tensors_;
      rule_->req_tensors_.forward_to_host_ = false;
    }
    Rule* rule_;
  };
  litmus_status_t RunSetRequiredTensors(litmus_ctx_t* ctx, int64_t step) noexcept {
    CallScope scope(this, ctx);
    try {
      // (The storage of a step already evaluated, if any: see RequiredTensors::Entries.)
      RequiredTensors declared = spare_req_ ? std::move(*spare_req_) : RequiredTensors(this);
      spare_req_.reset();
      declared.clear();
      declared.forward_to_host_ = true;
      active_req_ = &declared;
      set_required_tensors(step);
      active_req_ = &req_tensors_;
      declared.forward_to_host_ = false;
      pending_.insert_or_assign(step, std::move(declared));
      return LITMUS_OK;
    } catch (...) {
      active_req_ = &req_tensors_;
      return internal::StatusFromCurrentException(host_, ctx);
    }
  }
  litmus_status_t RunInvoke(litmus_ctx_t* ctx, int64_t step, bool declares_requirements) noexcept {
    CallScope scope(this, ctx);
    try {
      // The requirements of this very step: those the host had declared through
      // set_required_tensors(step) (possibly ahead of time), or recorded now the way smdebug's
      // invoke() does (clear, then set_required_tensors(step)) when the host did not.
      const auto found = pending_.find(step);
      if (found != pending_.end()) {
        spare_req_ = std::exchange(req_tensors_, std::move(found->second));
      } else {
        req_tensors_.clear();
        if (declares_requirements) set_required_tensors(step);
      }
      pending_.erase(pending_.begin(), pending_.upper_bound(step));
      return invoke_at_step(step) ? LITMUS_CONDITION_MET : LITMUS_OK;
    } catch (...) {
      return internal::StatusFromCurrentException(host_, ctx);
    }
  }
  litmus_status_t RunOnPoll(litmus_ctx_t* ctx, int64_t last_step) noexcept {
    CallScope scope(this, ctx);
    try {
      return on_poll(last_step) ? LITMUS_CONDITION_MET : LITMUS_OK;
    } catch (...) {
      return internal::StatusFromCurrentException(host_, ctx);
    }
  }

  const litmus_host_api_t* host_;
  litmus_ctx_t* ctx_;
  std::string name_;
  std::map<std::string, std::string, std::less<>> declared_;  // name -> default text
  std::map<std::string, std::string, std::less<>> values_;    // as given by the host
  RequiredTensors req_tensors_;
  RequiredTensors* active_req_;
  std::map<int64_t, RequiredTensors> pending_;  // declared ahead by set_required_tensors(step)
  std::optional<RequiredTensors> spare_req_;    // the previous step's, for its storage
};

}  // namespace litmus

#endif  // LITMUS_RULE_RULE_BASE_HPP_
