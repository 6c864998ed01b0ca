# Sourced by the bench scripts: all_rules_yaml TRIAL prints a `litmus run --config` file with the
# 20 built-in tensor rules on TRIAL (SimilarAcrossRuns against TRIAL itself; TensorVariance with a
# bound no tensor reaches, so that it computes every variance).
all_rules_yaml() {
  local trial=$1
  cat <<YAML
trial: $trial
rules:
  - {rule: VanishingGradient}
  - {rule: ExplodingTensor}
  - {rule: AllZero}
  - {rule: TensorVariance, parameters: {max_threshold: "1e30"}}
  - {rule: UnchangedTensor}
  - {rule: WeightUpdateRatio}
  - {rule: SimilarAcrossRuns, parameters: {other_trials: "$trial"}}
  - {rule: LossNotDecreasing}
  - {rule: Overfit}
  - {rule: Overtraining}
  - {rule: PoorWeightInitialization}
  - {rule: StalledTrainingRule}
  - {rule: SaturatedActivation}
  - {rule: DeadRelu}
  - {rule: CheckInputImages}
  - {rule: NLPSequenceRatio}
  - {rule: ClassImbalance}
  - {rule: Confusion}
  - {rule: FeatureImportanceOverweight}
  - {rule: TreeDepth}
YAML
}
