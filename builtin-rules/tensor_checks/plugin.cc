// litmus_tensor_checks: the plugin of SageMaker Debugger's rules that check tensor values
// (docs/rules/<RuleName>.md). This file only registers the rules; each rule lives in
// its own files and declares its parameters (key, type, default, meaning) next to its code.
#include "litmus/rule.hpp"

#include "all_zero.h"
#include "exploding_tensor.h"
#include "similar_across_runs.h"
#include "tensor_variance.h"
#include "unchanged_tensor.h"
#include "vanishing_gradient.h"
#include "weight_update_ratio.h"

namespace {

using litmus_builtin::AllZero;
using litmus_builtin::ExplodingTensor;
using litmus_builtin::SimilarAcrossRuns;
using litmus_builtin::TensorVariance;
using litmus_builtin::UnchangedTensor;
using litmus_builtin::VanishingGradient;
using litmus_builtin::WeightUpdateRatio;

constexpr std::string_view kVersion = "1.0.0";

}  // namespace

LITMUS_RULE_PLUGIN(
    "litmus_tensor_checks", kVersion,
    LITMUS_RULE(VanishingGradient, VanishingGradient::kName, kVersion, VanishingGradient::kDescription,
                VanishingGradient::kThreshold),
    LITMUS_RULE(ExplodingTensor, ExplodingTensor::kName, kVersion, ExplodingTensor::kDescription,
                ExplodingTensor::kCollectionNames, ExplodingTensor::kTensorRegex, ExplodingTensor::kOnlyNan),
    LITMUS_RULE(AllZero, AllZero::kName, kVersion, AllZero::kDescription, AllZero::kCollectionNames,
                AllZero::kTensorRegex, AllZero::kThreshold),
    LITMUS_RULE(TensorVariance, TensorVariance::kName, kVersion, TensorVariance::kDescription,
                TensorVariance::kCollectionNames, TensorVariance::kTensorRegex, TensorVariance::kMaxThreshold,
                TensorVariance::kMinThreshold),
    LITMUS_RULE(UnchangedTensor, UnchangedTensor::kName, kVersion, UnchangedTensor::kDescription,
                UnchangedTensor::kCollectionNames, UnchangedTensor::kTensorRegex, UnchangedTensor::kNumSteps,
                UnchangedTensor::kRtol, UnchangedTensor::kAtol, UnchangedTensor::kEqualNan),
    LITMUS_RULE(WeightUpdateRatio, WeightUpdateRatio::kName, kVersion, WeightUpdateRatio::kDescription,
                WeightUpdateRatio::kNumSteps, WeightUpdateRatio::kLargeThreshold,
                WeightUpdateRatio::kSmallThreshold, WeightUpdateRatio::kEpsilon),
    LITMUS_RULE(SimilarAcrossRuns, SimilarAcrossRuns::kName, kVersion, SimilarAcrossRuns::kDescription,
                SimilarAcrossRuns::kCollectionNames, SimilarAcrossRuns::kTensorRegex));
