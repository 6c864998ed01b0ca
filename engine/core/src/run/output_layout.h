// Where `litmus run` writes when no path is given (docs/run.md, "Output files"). Inside a
// SageMaker rule container SageMaker's paths (/opt/ml/processing/output/rule, /opt/ml/output/
// message and failure, temp files in <output>/.sagemaker-ignore); anywhere else ./litmus-output
// with the message and failure files inside it and temp files beside their targets, so that a
// user without root can run and two jobs on one machine never share a file. Pure functions.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "litmus/status.h"

namespace litmus {

enum class OutputLayout { kLocal, kSageMaker };

// What decides the layout. `forced` is LITMUS_OUTPUT_LAYOUT ("sagemaker" or "local", any case;
// empty or unset: detect). Detected: SageMaker's iff the environment is the rule container's
// (the contract's S3_PATH or LITMUS_RULE_PARAMETERS set and non-empty) AND /opt/ml exists.
struct OutputLayoutInputs {
  std::optional<std::string> forced;
  bool rule_container_environment = false;
  bool opt_ml_exists = false;
};
// InvalidArgument naming LITMUS_OUTPUT_LAYOUT for any other forced value.
StatusOr<OutputLayout> ChooseOutputLayout(const OutputLayoutInputs& inputs);

// The same from the process's view: `getenv` reads a variable, /opt/ml is looked up on disk.
StatusOr<OutputLayout> DetectOutputLayout(const std::function<std::optional<std::string>(const std::string&)>& getenv);

std::string_view OutputLayoutName(OutputLayout layout);  // "sagemaker", "local"

struct OutputPaths {
  std::string output_dir;
  std::string message_file;
  std::string failure_file;
  // Folder for the temp files of atomic writes; empty: beside each target (same folder, so the
  // rename never crosses file systems).
  std::string temp_dir;
};

// The paths for `layout`, each explicit value (command line or YAML) kept as given. Local: output
// ./litmus-output, message and failure <output>/message and <output>/failure (also for an
// explicit output folder). SageMaker: /opt/ml/processing/output/rule, /opt/ml/output/message and
// /opt/ml/output/failure, temp files in <output>/.sagemaker-ignore.
OutputPaths ResolveOutputPaths(OutputLayout layout, const std::optional<std::string>& output_dir,
                               const std::optional<std::string>& message_file,
                               const std::optional<std::string>& failure_file);

}  // namespace litmus
