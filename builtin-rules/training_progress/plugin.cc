// litmus_training_progress: the plugin of SageMaker Debugger's training-progress rules
// (docs/rules/<RuleName>.md). This file only registers the rules; each rule lives in
// its own files and declares its parameters (key, type, default, meaning) next to its code.
#include "litmus/rule.hpp"
#include "loss_not_decreasing.h"
#include "overfit.h"
#include "overtraining.h"
#include "poor_weight_initialization.h"
#include "stalled_training_rule.h"

namespace {

using litmus_builtin::LossNotDecreasing;
using litmus_builtin::Overfit;
using litmus_builtin::Overtraining;
using litmus_builtin::PoorWeightInitialization;
using litmus_builtin::StalledTrainingRule;

constexpr std::string_view kVersion = "1.0.0";

}  // namespace

LITMUS_RULE_PLUGIN("litmus_training_progress", kVersion,
                   LITMUS_RULE(LossNotDecreasing, LossNotDecreasing::kName, kVersion, LossNotDecreasing::kDescription,
                               LossNotDecreasing::kCollectionNames, LossNotDecreasing::kTensorRegex,
                               LossNotDecreasing::kUseLossesCollection, LossNotDecreasing::kNumSteps,
                               LossNotDecreasing::kDiffPercent, LossNotDecreasing::kIncreaseThresholdPercent,
                               LossNotDecreasing::kMode),
                   LITMUS_RULE(Overfit, Overfit::kName, kVersion, Overfit::kDescription, Overfit::kTensorRegex,
                               Overfit::kStartStep, Overfit::kPatience, Overfit::kRatioThreshold),
                   LITMUS_RULE(Overtraining, Overtraining::kName, kVersion, Overtraining::kDescription,
                               Overtraining::kPatienceTrain, Overtraining::kPatienceValidation, Overtraining::kDelta),
                   LITMUS_RULE(PoorWeightInitialization, PoorWeightInitialization::kName, kVersion,
                               PoorWeightInitialization::kDescription, PoorWeightInitialization::kActivationInputsRegex,
                               PoorWeightInitialization::kThreshold, PoorWeightInitialization::kDistributionRange,
                               PoorWeightInitialization::kPatience, PoorWeightInitialization::kSteps),
                   LITMUS_RULE(StalledTrainingRule, StalledTrainingRule::kName, kVersion,
                               StalledTrainingRule::kDescription, StalledTrainingRule::kThreshold,
                               StalledTrainingRule::kStopTrainingOnFire, StalledTrainingRule::kTrainingJobNamePrefix));
