// Support for the tensor_checks rule tests: writes small trials with litmus::writer (steps with a
// mode each, any collections, gaps) and runs the real `litmus run` binary on them, which finds the
// built-in plugins in the build tree; collects the exit code, stderr, the firing steps
// (events.jsonl), status.json and the rule report. Thread-compatible.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "litmus/format/dtype.h"
#include "litmus/format/mode.h"
#include "litmus/format/trial_layout.h"
#include "litmus/writer/config.h"

namespace litmus::testing {

// One tensor of one step; values in C order, converted to `dtype` when written. A non-empty
// `strings` makes it a 1-D string tensor instead.
struct TensorValue {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<double> values;
  DType dtype = DType::kFloat32;
  std::vector<std::string> strings;
};

// A 1-D tensor holding `values`.
TensorValue Values(std::string name, std::vector<double> values, DType dtype = DType::kFloat32);
// A tensor of `shape` whose every element is `value`.
TensorValue Filled(std::string name, std::vector<int64_t> shape, double value, DType dtype = DType::kFloat32);
// A 1-D string tensor.
TensorValue Strings(std::string name, std::vector<std::string> strings);

// One global step: its mode and what it saves. A step without tensors is not saved at all (the
// trial has no such step, as when a save interval skips it).
struct StepSpec {
  Mode mode = Mode::kTrain;
  std::vector<TensorValue> tensors;
};

// A collection of the tensors whose name `include_regex` searches, saved at every step.
writer::CollectionConfig Collection(std::string name, std::string include_regex);
// The same, saving only these reductions (of x and of |x|), not the raw tensor.
writer::CollectionConfig ReductionsOnly(std::string name, std::string include_regex,
                                        std::vector<layout::Reduction> reductions,
                                        std::vector<layout::Reduction> abs_reductions);

// Writes a finished trial into `dir` (created): steps 0, 1, ... in order. `collections` replace
// smdebug's PyTorch defaults (all, default, biases, weights `^(?!gradient).*weight`, gradients
// `^gradient`, losses); every collection saves every step.
void WriteTrial(const std::filesystem::path& dir, const std::vector<StepSpec>& steps,
                const std::vector<writer::CollectionConfig>& collections = writer::DefaultCollections());

struct RuleRun {
  int exit_code = -1;
  std::string err;             // stderr of litmus
  std::vector<int64_t> fired;  // steps of RuleEvaluationConditionMet events, in order
  std::vector<std::pair<std::string, int64_t>> fired_by_rule;  // (configuration name, step)
  nlohmann::json report;       // rule-reports/<report_name>.json; null if not written
  nlohmann::json series;       // rule-reports/<report_name>.series.json (support/series_json.h)
  nlohmann::json status;       // status.json; null if not written
};

// `litmus run --trial trial --rule rule --param p...` (each "key=value") plus `extra`, without
// --plugin: the built-in rules come from the build tree. The report read is the rule's.
RuleRun RunRule(const std::filesystem::path& trial, const std::string& rule,
                const std::vector<std::string>& params = {}, const std::vector<std::string>& extra = {});

// `litmus run --config <file holding yaml>`; the report read is `report_name`'s.
RuleRun RunConfig(const std::string& yaml, const std::string& report_name);

}  // namespace litmus::testing
