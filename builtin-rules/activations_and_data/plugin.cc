// litmus_activations_and_data: the plugin of SageMaker Debugger's activation and input-data rules
// (docs/rules/<RuleName>.md). This file only registers the rules; each rule lives in its own
// files and declares its parameters (key, type, default, meaning) next to its code.
#include "litmus/rule.hpp"

#include "check_input_images.h"
#include "class_imbalance.h"
#include "confusion.h"
#include "dead_relu.h"
#include "nlp_sequence_ratio.h"
#include "saturated_activation.h"

namespace {

using litmus_builtin::CheckInputImages;
using litmus_builtin::ClassImbalance;
using litmus_builtin::Confusion;
using litmus_builtin::DeadRelu;
using litmus_builtin::NLPSequenceRatio;
using litmus_builtin::SaturatedActivation;

constexpr std::string_view kVersion = "1.0.0";

}  // namespace

LITMUS_RULE_PLUGIN(
    "litmus_activations_and_data", kVersion,
    LITMUS_RULE(SaturatedActivation, SaturatedActivation::kName, kVersion, SaturatedActivation::kDescription,
                SaturatedActivation::kCollectionNames, SaturatedActivation::kTensorRegex,
                SaturatedActivation::kThresholdTanh, SaturatedActivation::kThresholdSigmoid,
                SaturatedActivation::kThresholdTanhMin, SaturatedActivation::kThresholdTanhMax,
                SaturatedActivation::kThresholdSigmoidMin, SaturatedActivation::kThresholdSigmoidMax,
                SaturatedActivation::kThresholdInactivity, SaturatedActivation::kThresholdLayer),
    LITMUS_RULE(DeadRelu, DeadRelu::kName, kVersion, DeadRelu::kDescription, DeadRelu::kTensorRegex,
                DeadRelu::kThresholdInactivity, DeadRelu::kThresholdLayer),
    LITMUS_RULE(CheckInputImages, CheckInputImages::kName, kVersion, CheckInputImages::kDescription,
                CheckInputImages::kThresholdMean, CheckInputImages::kThresholdSamples,
                CheckInputImages::kRegex, CheckInputImages::kChannel),
    LITMUS_RULE(NLPSequenceRatio, NLPSequenceRatio::kName, kVersion, NLPSequenceRatio::kDescription,
                NLPSequenceRatio::kTensorRegex, NLPSequenceRatio::kTokenValues,
                NLPSequenceRatio::kTokenThresholdsPercent),
    LITMUS_RULE(ClassImbalance, ClassImbalance::kName, kVersion, ClassImbalance::kDescription,
                ClassImbalance::kThresholdImbalance, ClassImbalance::kThresholdMisprediction,
                ClassImbalance::kSamples, ClassImbalance::kArgmax, ClassImbalance::kLabelsRegex,
                ClassImbalance::kPredictionsRegex),
    LITMUS_RULE(Confusion, Confusion::kName, kVersion, Confusion::kDescription, Confusion::kCategoryNo,
                Confusion::kLabels, Confusion::kPredictions, Confusion::kLabelsCollection,
                Confusion::kPredictionsCollection, Confusion::kMinDiag, Confusion::kMaxOffDiag));
