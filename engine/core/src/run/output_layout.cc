// Output layout: container detection and default output paths (see output_layout.h).
#include "run/output_layout.h"

#include <algorithm>
#include <filesystem>

namespace litmus {

StatusOr<OutputLayout> ChooseOutputLayout(const OutputLayoutInputs& inputs) {
  if (inputs.forced && !inputs.forced->empty()) {
    std::string value = *inputs.forced;
    std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
    if (value == "sagemaker") return OutputLayout::kSageMaker;
    if (value == "local") return OutputLayout::kLocal;
    return InvalidArgumentError("LITMUS_OUTPUT_LAYOUT: expected sagemaker or local, got '" + *inputs.forced + "'");
  }
  return inputs.rule_container_environment && inputs.opt_ml_exists ? OutputLayout::kSageMaker : OutputLayout::kLocal;
}

StatusOr<OutputLayout> DetectOutputLayout(
    const std::function<std::optional<std::string>(const std::string&)>& getenv) {
  const auto set = [&](const char* name) {
    const auto value = getenv(name);
    return value && !value->empty();
  };
  OutputLayoutInputs inputs;
  inputs.forced = getenv("LITMUS_OUTPUT_LAYOUT");
  inputs.rule_container_environment = set("S3_PATH") || set("LITMUS_RULE_PARAMETERS");
  std::error_code ec;
  inputs.opt_ml_exists = inputs.rule_container_environment && std::filesystem::is_directory("/opt/ml", ec);
  return ChooseOutputLayout(inputs);
}

std::string_view OutputLayoutName(OutputLayout layout) {
  switch (layout) {
    case OutputLayout::kLocal: return "local";
    case OutputLayout::kSageMaker: return "sagemaker";
  }
  return "local";
}

OutputPaths ResolveOutputPaths(OutputLayout layout, const std::optional<std::string>& output_dir,
                               const std::optional<std::string>& message_file,
                               const std::optional<std::string>& failure_file) {
  OutputPaths paths;
  switch (layout) {
    case OutputLayout::kSageMaker:
      paths.output_dir = output_dir.value_or("/opt/ml/processing/output/rule");
      paths.message_file = message_file.value_or("/opt/ml/output/message");
      paths.failure_file = failure_file.value_or("/opt/ml/output/failure");
      paths.temp_dir = (std::filesystem::path(paths.output_dir) / ".sagemaker-ignore").string();
      break;
    case OutputLayout::kLocal:
      paths.output_dir = output_dir.value_or("litmus-output");
      paths.message_file = message_file.value_or((std::filesystem::path(paths.output_dir) / "message").string());
      paths.failure_file = failure_file.value_or((std::filesystem::path(paths.output_dir) / "failure").string());
      break;
  }
  return paths;
}

}  // namespace litmus
