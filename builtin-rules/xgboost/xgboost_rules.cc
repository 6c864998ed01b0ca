// litmus_xgboost_rules: the built-in plugin of SageMaker Debugger's XGBoost-only rules,
// FeatureImportanceOverweight and TreeDepth (docs/rules/FeatureImportanceOverweight.md,
// docs/rules/TreeDepth.md). Only registration lives here; each rule's metadata (name, description,
// parameters) is declared with its class.
#include "feature_importance_overweight.h"
#include "litmus/rule.hpp"
#include "tree_depth.h"

using litmus_builtin::FeatureImportanceOverweight;
using litmus_builtin::TreeDepth;

LITMUS_RULE_PLUGIN(
    "litmus_xgboost_rules", "1.0.0",
    LITMUS_RULE(FeatureImportanceOverweight, FeatureImportanceOverweight::kName, "1.0.0",
                FeatureImportanceOverweight::kDescription, FeatureImportanceOverweight::kThreshold,
                FeatureImportanceOverweight::kNFeatures, FeatureImportanceOverweight::kTensorRegex),
    LITMUS_RULE(TreeDepth, TreeDepth::kName, "1.0.0", TreeDepth::kDescription, TreeDepth::kDepth));
