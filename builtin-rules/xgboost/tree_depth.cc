// TreeDepth: see tree_depth.h. What smdebug's XGBoost hook dumps per step (smdebug/xgboost/
// utils.py parse_tree_model, one boosting round's tree): trees/Tree and trees/Node (int64), and
// trees/Yes / trees/No as strings "<tree>-<child node>", "nan" for leaves, sorted by Node. The
// formula and its caveat are explained for users in docs/rules/TreeDepth.md.
#include "tree_depth.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <compare>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace litmus_builtin {
namespace {

constexpr std::string_view kNodeTensor = "trees/Node";
constexpr std::string_view kYesTensor = "trees/Yes";
constexpr std::string_view kNoTensor = "trees/No";

// floor(log2(max_node_id + 1)), exactly (integer arithmetic), for max_node_id >= 0.
int64_t FormulaDepth(int64_t max_node_id) {
  return static_cast<int64_t>(std::bit_width(static_cast<uint64_t>(max_node_id) + 1)) - 1;
}

// The node ids of trees/Node, or nullopt if any element is not a non-negative integer.
std::optional<std::vector<int64_t>> NodeIds(const litmus::TensorView& view) {
  if (view.is_string() || view.dtype() == litmus::DType::kComplex64 ||
      view.dtype() == litmus::DType::kComplex128) {
    return std::nullopt;
  }
  if (view.dtype() == litmus::DType::kInt64) {  // what the hook writes
    const std::span<const int64_t> ids = view.as<int64_t>();
    if (std::any_of(ids.begin(), ids.end(), [](int64_t id) { return id < 0; })) return std::nullopt;
    return std::vector<int64_t>(ids.begin(), ids.end());
  }
  std::vector<int64_t> ids;
  ids.reserve(view.size());
  for (int64_t i = 0; i < view.num_elements(); ++i) {
    const double value = view.at_double(i);
    if (!(value >= 0) || std::trunc(value) != value || value >= 0x1p62) return std::nullopt;
    ids.push_back(static_cast<int64_t>(value));
  }
  return ids;
}

struct NodeKey {
  int64_t tree;
  int64_t node;
  auto operator<=>(const NodeKey&) const = default;
};

// A child reference of the dump, "<tree>-<node>"; nullopt for a leaf's "nan" or anything else.
std::optional<NodeKey> ParseChild(std::string_view text) {
  const size_t dash = text.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == text.size()) return std::nullopt;
  auto parse = [](std::string_view digits) -> std::optional<int64_t> {
    if (digits.front() < '0' || digits.front() > '9') return std::nullopt;  // no sign
    int64_t value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    return value;
  };
  const std::optional<int64_t> tree = parse(text.substr(0, dash));
  const std::optional<int64_t> node = parse(text.substr(dash + 1));
  if (!tree || !node) return std::nullopt;
  return NodeKey{*tree, *node};
}

// The true depth (edges from node 0 to the deepest leaf) of the deepest tree in the dump, by
// walking the Yes/No children; nullopt if the columns do not describe trees (sizes differ, a
// split listed twice, children in another tree, a tree without a root split, a cycle).
std::optional<int64_t> WalkedDepth(const std::vector<int64_t>& nodes,
                                   const std::vector<std::string_view>& yes,
                                   const std::vector<std::string_view>& no) {
  if (yes.size() != nodes.size() || no.size() != nodes.size()) return std::nullopt;
  std::map<NodeKey, std::pair<std::optional<NodeKey>, std::optional<NodeKey>>> splits;
  std::set<int64_t> trees;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::optional<NodeKey> yes_child = ParseChild(yes[i]);
    const std::optional<NodeKey> no_child = ParseChild(no[i]);
    if (!yes_child && !no_child) continue;  // a leaf
    const int64_t tree = (yes_child ? yes_child : no_child)->tree;
    if ((yes_child && yes_child->tree != tree) || (no_child && no_child->tree != tree)) return std::nullopt;
    if (!splits.emplace(NodeKey{tree, nodes[i]}, std::pair(yes_child, no_child)).second) return std::nullopt;
    trees.insert(tree);
  }
  // In a forest each split is entered once and has two children: trees + 2 * splits visits.
  const size_t max_visits = trees.size() + 2 * splits.size();
  size_t visits = 0;
  int64_t deepest = 0;
  for (const int64_t tree : trees) {
    if (!splits.contains(NodeKey{tree, 0})) return std::nullopt;
    std::vector<std::pair<NodeKey, int64_t>> stack = {{NodeKey{tree, 0}, 0}};
    while (!stack.empty()) {
      const auto [key, depth] = stack.back();
      stack.pop_back();
      if (++visits > max_visits) return std::nullopt;  // a node reached twice: not a tree
      deepest = std::max(deepest, depth);
      const auto found = splits.find(key);
      if (found == splits.end()) continue;  // a leaf
      for (const std::optional<NodeKey>& child : {found->second.first, found->second.second}) {
        if (child) stack.emplace_back(*child, depth + 1);
      }
    }
  }
  return deepest;
}

}  // namespace

TreeDepth::TreeDepth(const litmus::RuleArgs& args) : Rule(args), depth_(param_float(kDepth.name)) {
  if (!std::isfinite(depth_) || depth_ < 0) {
    throw litmus::InvalidConfig("depth: expected a finite number >= 0, got '" +
                                param_raw(kDepth.name).value_or("") + "'");
  }
  report_threshold(kSeriesComputed, depth_, litmus::Fires::kAbove);
  report_recommendation(
      "Deep trees fit noise: lower max_depth, or raise min_child_weight, gamma or the L1/L2 "
      "regularization (alpha, lambda).");
}

void TreeDepth::set_required_tensors(int64_t step) {
  // (A tensor once saved stays in the trial: found, it is not asked about again; has_tensor
  // lists its steps, which cost as much as a step's work on a long trial.)
  if (!nodes_seen_ && !logged_missing_nodes_) {
    nodes_seen_ = base_trial().has_tensor(kNodeTensor);
    if (!nodes_seen_) {
      log_warning("the trial has no tensor ", kNodeTensor,
                  " (save the XGBoost hook's `trees` collection); steps without it are skipped");
      logged_missing_nodes_ = true;
    }
  }
  // Throws TensorUnavailable when trees/Node was never saved: the host skips the step.
  req_tensors().add(kNodeTensor, {step});
  const std::vector<std::string> children =
      base_trial().tensor_names({.regex = "^trees/(Yes|No)$", .step = step});
  if (children.size() == 2) {
    for (const std::string& name : children) req_tensors().add(name, {step});
  }
}

bool TreeDepth::invoke_at_step(int64_t step) {
  const std::optional<std::vector<int64_t>> nodes =
      NodeIds(base_trial().tensor(kNodeTensor).value(step));
  if (!nodes || nodes->empty()) {
    if (!logged_unusable_nodes_) {
      log_warning(kNodeTensor, " at step ", step,
                  " does not hold non-negative integer node ids; steps like it are not evaluated");
      logged_unusable_nodes_ = true;
    }
    return false;
  }
  const int64_t max_node_id = *std::max_element(nodes->begin(), nodes->end());
  const int64_t computed_depth = FormulaDepth(max_node_id);

  std::optional<int64_t> true_depth;
  const std::vector<std::string> required = req_tensors().get_names();
  if (std::find(required.begin(), required.end(), kYesTensor) != required.end()) {
    const litmus::TensorView yes = base_trial().tensor(kYesTensor).value(step);
    const litmus::TensorView no = base_trial().tensor(kNoTensor).value(step);
    if (yes.is_string() && no.is_string()) true_depth = WalkedDepth(*nodes, yes.strings(), no.strings());
    if (!true_depth && !logged_bad_children_) {
      log_warning(kYesTensor, " and ", kNoTensor, " at step ", step,
                  " do not describe trees (expected strings \"<tree>-<node>\" or \"nan\", one per "
                  "node); true_depth is not reported for such steps");
      logged_bad_children_ = true;
    }
  }

  report_series(kSeriesComputed, step, static_cast<double>(computed_depth));
  if (true_depth) report_series(kSeriesTrue, step, static_cast<double>(*true_depth));
  const bool met = static_cast<double>(computed_depth) > depth_;
  if (met || !fired_) {
    report_detail("step", step);
    report_detail("computed_depth", computed_depth);
    report_detail("max_node_id", max_node_id);
    report_detail("depth", depth_);
    // null when the dump has no child columns at this step, so an older value never lingers.
    if (true_depth) {
      report_detail("true_depth", *true_depth);
    } else {
      report_detail("true_depth", std::string_view("null"));
    }
  }
  if (met) {
    report_violations(1);
    fired_ = true;
  }
  return met;
}

}  // namespace litmus_builtin
