// Support for the activations_and_data rule tests: writes small trials with litmus::writer (every
// step saved, TRAIN mode) and runs the real `litmus run` binary on them, collecting the exit code,
// stderr, the firing steps (events.jsonl) and the rule report. Thread-compatible.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "litmus/format/dtype.h"
#include "litmus/writer/config.h"
#include "support/temp_dir.h"

namespace litmus::testing {

// One tensor of one step; values in C order, converted to `dtype` when written (float16: 0 and
// normal values only, mantissa truncated).
struct TensorData {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<double> values;
  DType dtype = DType::kFloat32;
};

// The tensors of one step. A step without tensors is still a step of the trial: it saves the
// scalar "scalar/step" so that the step exists (a step that saved nothing leaves no files).
using StepData = std::vector<TensorData>;

// A tensor of `shape` whose every element is `value`.
TensorData Filled(std::string name, std::vector<int64_t> shape, double value, DType dtype = DType::kFloat32);

// A collection of the tensors whose name `include_regex` searches.
writer::CollectionConfig Collection(std::string name, std::string include_regex);

// Writes the steps 0, 1, ... of a finished trial into `dir` (created). `collections` are added to
// the writer's default ones; every collection saves every step.
void WriteTrial(const std::filesystem::path& dir, const std::vector<StepData>& steps,
                const std::vector<writer::CollectionConfig>& collections = {});

struct RuleRun {
  int exit_code = -1;
  std::string err;              // stderr of litmus
  std::vector<int64_t> fired;   // steps of RuleEvaluationConditionMet events, in order
  std::map<std::string, std::vector<int64_t>> fired_by_rule;  // the same per configuration name
  nlohmann::json report;        // rule-reports/<rule>.json; null if not written
  nlohmann::json series;        // rule-reports/<rule>.series.json (support/series_json.h)
};

// `litmus run --trial trial --rule rule --param p...` (params as "key=value") plus `extra`
// arguments, with the built-in plugins found from the build tree (no --plugin).
RuleRun RunRule(const std::filesystem::path& trial, const std::string& rule,
                const std::vector<std::string>& params = {}, const std::vector<std::string>& extra = {});

// `litmus run --config <yaml>`; the report is read for configuration name `report_name`.
RuleRun RunConfig(const std::filesystem::path& yaml, const std::string& report_name);

}  // namespace litmus::testing
