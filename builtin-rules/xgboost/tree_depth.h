// TreeDepth (docs/rules/TreeDepth.md): an XGBoost rule that fires when the tree dumped at a step is
// deeper than `depth`, by the managed rule's estimate floor(log2(max(trees/Node) + 1)). When the
// dump's child columns trees/Yes and trees/No are saved it also walks the tree and reports the
// true depth (Details only: the decision keeps the documented formula).
// Thread-safety: one instance is used by one thread at a time (the host's contract).
#pragma once

#include <cstdint>
#include <string_view>

#include "litmus/rule.hpp"

namespace litmus_builtin {

class TreeDepth : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "TreeDepth";
  static constexpr std::string_view kDescription =
      "Fires when an XGBoost tree is deeper than depth, estimated as "
      "floor(log2(max(trees/Node) + 1)) from the hook's tree dump";
  static constexpr litmus::ParamSpec kDepth = litmus::FloatParam(
      "depth", "4", "largest allowed depth; fires when floor(log2(max node id + 1)) > depth");

  // The series it publishes (ABI 1.3), of the rule: the formula's depth it compares with depth
  // (Details' computed_depth) and, when the dump has child columns, the walked depth it does not
  // compare but shows beside it (Details' true_depth), so that a chart shows the caveat at work.
  static constexpr std::string_view kSeriesComputed = "computed depth";
  static constexpr std::string_view kSeriesTrue = "true depth";

  // Throws litmus::InvalidConfig naming the key for a depth that does not parse or is negative or
  // not finite.
  explicit TreeDepth(const litmus::RuleArgs& args);

  // Requires trees/Node at `step` (a trial that never saved it skips every step), and trees/Yes
  // and trees/No when both are saved at `step`.
  void set_required_tensors(int64_t step) override;
  // Met if floor(log2(max(trees/Node) + 1)) > depth.
  bool invoke_at_step(int64_t step) override;

 private:
  double depth_;
  // Details describe the last evaluated step until the first firing, then the last firing.
  bool fired_ = false;
  bool nodes_seen_ = false;  // trees/Node is in the trial
  bool logged_missing_nodes_ = false;
  bool logged_unusable_nodes_ = false;
  bool logged_bad_children_ = false;
};

}  // namespace litmus_builtin
