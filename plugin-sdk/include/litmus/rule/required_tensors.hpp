/// \file
/// litmus/rule/required_tensors.hpp — part of litmus/rule.hpp: RequiredTensors (smdebug's
/// req_tensors), the tensors and steps invoke_at_step(step) will read, declared in
/// set_required_tensors(step) so that the host prefetches them. Members that call the host are
/// defined in host_calls.hpp. Thread-safety: owned by one Rule, used by its thread.
#ifndef LITMUS_RULE_REQUIRED_TENSORS_HPP_
#define LITMUS_RULE_REQUIRED_TENSORS_HPP_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "litmus/rule/internal.hpp"
#include "litmus/rule/trial.hpp"

namespace litmus {

/// The steps of RequiredTensors::add: a braced list (`{step}`, `{step - 1, step}`) or a
/// std::vector<int64_t>, viewed for the call only (a braced list needs no allocation: rules
/// add each tensor at each step).
class StepList {
 public:
  /// No steps.
  StepList() = default;
  /// The steps of a braced list (valid until the end of the call it is passed to).
  StepList(std::initializer_list<int64_t> steps) : steps_(steps.begin(), steps.size()) {}
  /// The steps of a vector (implicit: code that passed vectors to add() compiles unchanged).
  StepList(const std::vector<int64_t>& steps) : steps_(steps) {}  // NOLINT(google-explicit-constructor)
  /// The steps, in the order given.
  std::span<const int64_t> span() const { return steps_; }

 private:
  std::span<const int64_t> steps_;
};

/// Options of RequiredTensors::add. Use designated initializers:
/// `req_tensors().add(name, {step}, {.reductions_only = true})`.
struct RequireOptions {
  /// `name` is a regex: every tensor whose name it searches is required (none is fine).
  bool should_match_regex = false;
  /// The rule reads only reductions of the tensor at those steps (reduction_value, never
  /// value()): a step where the trial saved reductions but no raw value is still evaluated. By
  /// default such a step is skipped before invoke_at_step, as smdebug's RequiredTensors.fetch
  /// does (it reads every required value). Needs a host of ABI 1.2.
  bool reductions_only = false;
};

/// smdebug's RequiredTensors: what invoke_at_step(step) will read. add() inside
/// set_required_tensors also declares the requirement to the host (which prefetches it); elsewhere
/// it only records. Names keep insertion order, as smdebug's dicts do. Reach it through
/// Rule::req_tensors():
/// \code
/// void set_required_tensors(int64_t step) override {
///   for (const std::string& name : base_trial().tensor_names({.collection = "gradients"})) {
///     req_tensors().add(name, {step});
///   }
/// }
/// bool invoke_at_step(int64_t step) override {
///   for (const litmus::Tensor& tensor : req_tensors().get()) { ... tensor.value(step) ... }
///   return false;
/// }
/// \endcode
class RequiredTensors {
 public:
  /// Requires `name` at `steps` of the base trial, or of `trial`. With should_match_regex every
  /// tensor whose name the regex searches is added (none is fine); otherwise a name the trial never
  /// saved throws TensorUnavailable. (Overloads stand in for smdebug's trial=None default.)
  void add(std::string_view name, StepList steps) { Add(0, name, steps.span(), {}); }
  /// Requires `name` (a regex with should_match_regex) at `steps` of `trial`.
  void add(std::string_view name, StepList steps, const Trial& trial,
           bool should_match_regex = false) {
    Add(TrialIndex(trial), name, steps.span(), {.should_match_regex = should_match_regex});
  }
  /// Requires `name` at `steps` of the base trial, with options (see RequireOptions).
  void add(std::string_view name, StepList steps, RequireOptions options) {
    Add(0, name, steps.span(), options);
  }
  /// Requires `name` at `steps` of `trial`, with options (see RequireOptions).
  void add(std::string_view name, StepList steps, const Trial& trial,
           RequireOptions options) {
    Add(TrialIndex(trial), name, steps.span(), options);
  }
  /// Handles of the required tensors of the base trial / of `trial`, in the order added.
  std::vector<Tensor> get() const { return Get(0); }
  /// Handles of the required tensors of `trial`, in the order added.
  std::vector<Tensor> get(const Trial& trial) const { return Get(TrialIndex(trial)); }
  /// Names of the required tensors of the base trial, in the order added.
  std::vector<std::string> get_names() const { return GetNames(0); }
  /// Names of the required tensors of `trial`, in the order added.
  std::vector<std::string> get_names(const Trial& trial) const {
    return GetNames(TrialIndex(trial));
  }
  /// The steps `name` is required at; InvalidArgument if it was not added.
  std::vector<int64_t> get_tensor_steps(std::string_view name) const {
    return GetTensorSteps(0, name);
  }
  /// The steps `name` of `trial` is required at; InvalidArgument if it was not added.
  std::vector<int64_t> get_tensor_steps(std::string_view name, const Trial& trial) const {
    return GetTensorSteps(TrialIndex(trial), name);
  }
  /// Forgets every requirement (the SDK does it before each step).
  void clear() {
    for (auto& [trial, entries] : per_trial_) entries.Clear();
  }
  /// True when nothing is required.
  bool empty() const {
    for (const auto& [trial, entries] : per_trial_) {
      if (entries.size != 0) return false;
    }
    return true;
  }

 private:
  friend class Rule;
  struct Entry {
    std::shared_ptr<const std::string> name;  // shared with the Tensors get() hands out
    std::vector<int64_t> steps;
  };
  // One trial's entries in the order added, and where each name is (rules add hundreds of
  // names per step, so finding a name must not scan the list). Cleared, it keeps its storage:
  // a rule usually adds the same names in the same order at every step, and then adding one
  // reuses the old entry (its name, its steps' storage and its index slot) in place of three
  // allocations.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  struct Entries {
    // The entries are list[0, size); list[size, end) are spare ones of an earlier use, still
    // indexed. A deque, so that entries never move and `position` can key on views of their
    // names (one copy of each name, not two).
    std::deque<Entry> list;
    size_t size = 0;
    std::unordered_map<std::string_view, size_t, NameHash, std::equal_to<>> position;  // of all of list

    Entries() = default;
    Entries(const Entries& other)
        : list(other.list.begin(), other.list.begin() + static_cast<std::ptrdiff_t>(other.size)),
          size(other.size) {
      Reindex();
    }
    Entries& operator=(const Entries& other) {
      if (this != &other) {
        list.assign(other.list.begin(), other.list.begin() + static_cast<std::ptrdiff_t>(other.size));
        size = other.size;
        Reindex();
      }
      return *this;
    }
    // (Moving a deque hands over its elements in place: the views stay valid.)
    Entries(Entries&& other) noexcept
        : list(std::move(other.list)), size(std::exchange(other.size, 0)), position(std::move(other.position)) {}
    Entries& operator=(Entries&& other) noexcept {
      if (this != &other) {
        list = std::move(other.list);
        size = std::exchange(other.size, 0);
        position = std::move(other.position);
      }
      return *this;
    }
    void Reindex() {
      position.clear();
      for (size_t i = 0; i < list.size(); ++i) position.emplace(*list[i].name, i);
    }
    void Clear() { size = 0; }
    // The position of `name` among the entries, or SIZE_MAX.
    size_t Find(std::string_view name) const {
      const auto found = position.find(name);
      return found != position.end() && found->second < size ? found->second : SIZE_MAX;
    }
    // Appends (name, steps) as the spare entry next in line if it has that name (the same names
    // in the same order as at the last step): then `name` is not among the entries before it,
    // names being unique in the list, so no lookup is needed. False if that entry is another.
    bool ReuseNext(std::string_view name, std::span<const int64_t> steps) {
      if (size >= list.size() || *list[size].name != name) return false;
      list[size].steps.assign(steps.begin(), steps.end());
      ++size;
      return true;
    }
    // Appends (name, steps): the spare entry next in line if it has that name, else a new one
    // (then the spare entries are dropped). REQUIRES: Find(name) == SIZE_MAX.
    void Append(std::string_view name, std::span<const int64_t> steps) {
      if (ReuseNext(name, steps)) return;
      if (size < list.size()) {
        for (size_t i = size; i < list.size(); ++i) position.erase(*list[i].name);
        list.resize(size);
      }
      list.push_back(
          Entry{std::make_shared<const std::string>(name), std::vector<int64_t>(steps.begin(), steps.end())});
      position.emplace(*list.back().name, size);
      ++size;
    }
  };
  explicit RequiredTensors(Rule* rule) : rule_(rule) {}
  void Add(uint32_t trial, std::string_view name, std::span<const int64_t> steps,
           RequireOptions options);
  std::vector<Tensor> Get(uint32_t trial) const;
  std::vector<std::string> GetNames(uint32_t trial) const;
  std::vector<int64_t> GetTensorSteps(uint32_t trial, std::string_view name) const;
  void Record(uint32_t trial, std::string_view name, std::span<const int64_t> steps);
  uint32_t TrialIndex(const Trial& trial) const;

  Rule* rule_;
  bool forward_to_host_ = false;
  std::map<uint32_t, Entries> per_trial_;
};

}  // namespace litmus

#endif  // LITMUS_RULE_REQUIRED_TENSORS_HPP_
