// Helpers of the training-progress rule tests: TrialBuilder writes a one-worker trial with
// litmus::writer (losses, gradients, metrics and relu_input collections; any global steps, any
// modes), and RunRule runs the real `litmus run` on it with a built-in rule and collects what the
// job reported. Thread-compatible: one builder per trial.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "litmus/format/mode.h"
#include "litmus/writer/writer.h"

namespace litmus::testing {

// One tensor of a step: float32 values of `shape` ({} = a 0-d scalar).
struct TensorData {
  std::string name;
  std::vector<float> values;
  std::vector<int64_t> shape;
};
inline TensorData Scalar(std::string name, float value) { return {std::move(name), {value}, {}}; }
inline TensorData Vector(std::string name, std::vector<float> values) {
  const int64_t size = static_cast<int64_t>(values.size());
  return {std::move(name), std::move(values), {size}};
}

// Collections of the trials: losses (^loss), gradients (^gradient), metrics (^train- and
// ^validation-, as XGBoost names them), relu_input (relu_input), plus all and default (every other
// tensor). Everything is saved at every step.
std::vector<writer::CollectionConfig> ProgressCollections();

class TrialBuilder {
 public:
  explicit TrialBuilder(const std::filesystem::path& dir,
                        std::vector<writer::CollectionConfig> collections = ProgressCollections());
  ~TrialBuilder();
  // Saves `tensors` at global step `step` in `mode`; the global steps between the previous saved
  // step and `step` are left unsaved (they count in `mode`'s mode steps). Steps must increase.
  void Save(int64_t step, Mode mode, const std::vector<TensorData>& tensors);
  // Publishes everything; writes training_job_end.ts when `ended` (the training finished).
  void Finish(bool ended = true);

 private:
  std::unique_ptr<writer::Writer> writer_;
  bool finished_ = false;
};

// What one `litmus run` reported.
struct RuleRun {
  int exit_code = -1;
  std::vector<int64_t> fired;  // steps of RuleEvaluationConditionMet events
  nlohmann::json report;       // rule-reports/<rule>.json (null if absent)
  nlohmann::json series;       // rule-reports/<rule>.series.json (support/series_json.h)
  nlohmann::json status;       // status.json (null if absent)
  std::string message;         // the --message-file line ("" if not written)
  std::string err;             // stderr (the log)
  bool timed_out = false;
};

// Runs `litmus run --trial <trial> --rule <rule> --param p ...` plus `extra` arguments, with the
// built-in plugins of the build tree, a 20 ms poll interval and no end-of-training delay.
RuleRun RunRule(const std::string& trial, const std::string& rule, const std::vector<std::string>& params,
                const std::vector<std::string>& extra = {});

}  // namespace litmus::testing
