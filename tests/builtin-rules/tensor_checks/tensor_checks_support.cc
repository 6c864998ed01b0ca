// Trials written with litmus::writer and runs of the real `litmus` binary for the tensor_checks
// rule tests.
#include "tensor_checks_support.h"

#include <gtest/gtest.h>

#include <fstream>
#include <span>

#include "litmus/writer/writer.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus::testing {
namespace {

template <class T>
Status SaveAs(writer::Writer& w, const TensorValue& t) {
  std::vector<T> converted;
  converted.reserve(t.values.size());
  for (const double v : t.values) converted.push_back(static_cast<T>(v));
  return w.SaveTensor(t.name, std::span<const T>(converted), std::span<const int64_t>(t.shape));
}

Status Save(writer::Writer& w, const TensorValue& t) {
  if (!t.strings.empty()) return w.SaveStrings(t.name, t.strings);
  switch (t.dtype) {
    case DType::kFloat32: return SaveAs<float>(w, t);
    case DType::kFloat64: return SaveAs<double>(w, t);
    case DType::kInt32: return SaveAs<int32_t>(w, t);
    case DType::kInt64: return SaveAs<int64_t>(w, t);
    default: return InvalidArgumentError("tensor_checks_support: unsupported dtype");
  }
}

nlohmann::json ReadJsonIfExists(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) return nullptr;
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Runs `litmus run <args>` writing into a fresh output folder.
RuleRun Run(const std::vector<std::string>& args, const std::string& report_name) {
  TempDir out;
  std::vector<std::string> argv = {LitmusBinary(),  "run",
                                   "--output-dir",  out.str(),
                                   "--message-file", (out.path() / "message").string(),
                                   "--failure-file", (out.path() / "failure").string(),
                                   "--poll-interval-ms", "20"};
  argv.insert(argv.end(), args.begin(), args.end());
  // No plugins from the caller's environment: the built-in ones come from the build tree.
  const ProcessResult result =
      RunProcess(argv, {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}, {"LITMUS_PLUGIN_PATH", ""}});
  EXPECT_FALSE(result.timed_out);
  RuleRun run;
  run.exit_code = result.exit_code;
  run.err = result.err;
  std::ifstream events(out.path() / "events.jsonl");
  for (std::string line; std::getline(events, line);) {
    const nlohmann::json e = nlohmann::json::parse(line);
    if (e["event"] != "RuleEvaluationConditionMet") continue;
    run.fired.push_back(e["step"].get<int64_t>());
    run.fired_by_rule.emplace_back(e["rule"].get<std::string>(), e["step"].get<int64_t>());
  }
  run.report = ReadJsonIfExists(out.path() / "rule-reports" / (report_name + ".json"));
  run.series = ReadJsonIfExists(out.path() / "rule-reports" / (report_name + ".series.json"));
  run.status = ReadJsonIfExists(out.path() / "status.json");
  return run;
}

}  // namespace

TensorValue Values(std::string name, std::vector<double> values, DType dtype) {
  const auto size = static_cast<int64_t>(values.size());
  return {std::move(name), {size}, std::move(values), dtype, {}};
}

TensorValue Filled(std::string name, std::vector<int64_t> shape, double value, DType dtype) {
  int64_t elements = 1;
  for (const int64_t d : shape) elements *= d;
  return {std::move(name), std::move(shape), std::vector<double>(static_cast<size_t>(elements), value), dtype, {}};
}

TensorValue Strings(std::string name, std::vector<std::string> strings) {
  const auto size = static_cast<int64_t>(strings.size());
  return {std::move(name), {size}, {}, DType::kFloat32, std::move(strings)};
}

writer::CollectionConfig Collection(std::string name, std::string include_regex) {
  writer::CollectionConfig collection;
  collection.name = std::move(name);
  collection.include_regex = {std::move(include_regex)};
  return collection;
}

writer::CollectionConfig ReductionsOnly(std::string name, std::string include_regex,
                                        std::vector<layout::Reduction> reductions,
                                        std::vector<layout::Reduction> abs_reductions) {
  writer::CollectionConfig collection = Collection(std::move(name), std::move(include_regex));
  writer::ReductionConfig config;
  for (const layout::Reduction r : reductions) {
    (r == layout::Reduction::kL1 || r == layout::Reduction::kL2 ? config.norms : config.reductions).push_back(r);
  }
  for (const layout::Reduction r : abs_reductions) {
    (r == layout::Reduction::kL1 || r == layout::Reduction::kL2 ? config.abs_norms : config.abs_reductions)
        .push_back(r);
  }
  config.save_raw_tensor = false;
  collection.reduction_config = config;
  return collection;
}

void WriteTrial(const std::filesystem::path& dir, const std::vector<StepSpec>& steps,
                const std::vector<writer::CollectionConfig>& collections) {
  writer::WriterOptions options;
  options.save_config = writer::SaveConfig::Every(1);
  options.collections = collections;
  auto opened = writer::Writer::Open(dir.string(), options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  writer::Writer& w = **opened;
  for (const StepSpec& step : steps) {
    ASSERT_TRUE(w.SetMode(step.mode).ok());
    ASSERT_TRUE(w.BeginStep().ok());
    for (const TensorValue& tensor : step.tensors) {
      const Status saved = Save(w, tensor);
      ASSERT_TRUE(saved.ok()) << tensor.name << ": " << saved.ToString();
    }
    ASSERT_TRUE(w.EndStep().ok());
  }
  ASSERT_TRUE(w.Close().ok());
}

RuleRun RunRule(const std::filesystem::path& trial, const std::string& rule, const std::vector<std::string>& params,
                const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--trial", trial.string(), "--rule", rule};
  for (const std::string& p : params) args.insert(args.end(), {"--param", p});
  args.insert(args.end(), extra.begin(), extra.end());
  return Run(args, rule);
}

RuleRun RunConfig(const std::string& yaml, const std::string& report_name) {
  TempDir dir;
  dir.WriteFile("job.yaml", yaml);
  return Run({"--config", (dir.path() / "job.yaml").string()}, report_name);
}

}  // namespace litmus::testing
