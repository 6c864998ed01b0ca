// Trials written with litmus::writer and runs of the real `litmus` binary for the
// activations_and_data rule tests.
#include "rule_test_support.h"

#include <cmath>
#include <fstream>
#include <span>

#include <gtest/gtest.h>

#include "litmus/writer/writer.h"
#include "support/run_process.h"

namespace litmus::testing {
namespace {

template <class T>
Status SaveAs(writer::Writer& w, const TensorData& t) {
  std::vector<T> converted;
  converted.reserve(t.values.size());
  for (const double v : t.values) converted.push_back(static_cast<T>(v));
  return w.SaveTensor(t.name, std::span<const T>(converted), std::span<const int64_t>(t.shape));
}

// IEEE binary16 bits of a value that is 0 or a normal half (|v| in [2^-14, 65504]); the mantissa
// is truncated. Enough for test values such as 0, ±0.5 or ±3.
uint16_t ToHalfBits(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (v == 0) return sign;
  int exponent = 0;
  const double mantissa = std::frexp(std::fabs(v), &exponent);  // |v| = mantissa * 2^exponent
  const auto biased = static_cast<uint16_t>(exponent - 1 + 15);
  const auto fraction = static_cast<uint16_t>((mantissa * 2 - 1) * 1024);
  return static_cast<uint16_t>(sign | (biased << 10) | fraction);
}

Status Save(writer::Writer& w, const TensorData& t) {
  switch (t.dtype) {
    case DType::kFloat32: return SaveAs<float>(w, t);
    case DType::kFloat64: return SaveAs<double>(w, t);
    case DType::kInt32: return SaveAs<int32_t>(w, t);
    case DType::kInt64: return SaveAs<int64_t>(w, t);
    case DType::kUInt8: return SaveAs<uint8_t>(w, t);
    case DType::kFloat16: {
      std::vector<writer::Float16> halves;
      for (const double v : t.values) halves.push_back({ToHalfBits(v)});
      return w.SaveTensor(t.name, std::span<const writer::Float16>(halves), std::span<const int64_t>(t.shape));
    }
    case DType::kBool: {
      std::vector<uint8_t> bytes;
      for (const double v : t.values) bytes.push_back(v != 0 ? 1 : 0);
      return w.SaveTensor(t.name, std::as_bytes(std::span<const uint8_t>(bytes)),
                          std::span<const int64_t>(t.shape), DType::kBool);
    }
    default: return InvalidArgumentError("rule_test_support: unsupported dtype");
  }
}

nlohmann::json ReadJsonIfExists(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) return nullptr;
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

RuleRun Run(std::vector<std::string> args, const std::filesystem::path& out, const std::string& report_name) {
  const std::vector<std::string> common = {"--output-dir", out.string(), "--message-file", (out / "message").string(),
                                           "--failure-file", (out / "failure").string(), "--poll-interval-ms", "20"};
  args.insert(args.begin() + 2, common.begin(), common.end());
  const ProcessResult result = RunProcess(args, {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}});
  EXPECT_FALSE(result.timed_out);
  RuleRun run;
  run.exit_code = result.exit_code;
  run.err = result.err;
  std::ifstream events(out / "events.jsonl");
  for (std::string line; std::getline(events, line);) {
    const nlohmann::json e = nlohmann::json::parse(line);
    if (e["event"] != "RuleEvaluationConditionMet") continue;
    run.fired.push_back(e["step"].get<int64_t>());
    run.fired_by_rule[e["rule"].get<std::string>()].push_back(e["step"].get<int64_t>());
  }
  run.report = ReadJsonIfExists(out / "rule-reports" / (report_name + ".json"));
  run.series = ReadJsonIfExists(out / "rule-reports" / (report_name + ".series.json"));
  return run;
}

}  // namespace

TensorData Filled(std::string name, std::vector<int64_t> shape, double value, DType dtype) {
  int64_t elements = 1;
  for (const int64_t d : shape) elements *= d;
  return {std::move(name), std::move(shape), std::vector<double>(static_cast<size_t>(elements), value), dtype};
}

writer::CollectionConfig Collection(std::string name, std::string include_regex) {
  writer::CollectionConfig collection;
  collection.name = std::move(name);
  collection.include_regex = {std::move(include_regex)};
  return collection;
}

void WriteTrial(const std::filesystem::path& dir, const std::vector<StepData>& steps,
                const std::vector<writer::CollectionConfig>& collections) {
  writer::WriterOptions options;
  options.save_config = writer::SaveConfig::Every(1);
  options.collections.insert(options.collections.end(), collections.begin(), collections.end());
  auto opened = writer::Writer::Open(dir.string(), options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  writer::Writer& w = **opened;
  ASSERT_TRUE(w.SetMode(Mode::kTrain).ok());
  for (const StepData& step : steps) {
    ASSERT_TRUE(w.BeginStep().ok());
    if (step.empty()) {
      ASSERT_TRUE(w.SaveScalar("step", static_cast<double>(w.step())).ok());
    }
    for (const TensorData& tensor : step) {
      const Status saved = Save(w, tensor);
      ASSERT_TRUE(saved.ok()) << tensor.name << ": " << saved.ToString();
    }
    ASSERT_TRUE(w.EndStep().ok());
  }
  ASSERT_TRUE(w.Close().ok());
}

RuleRun RunRule(const std::filesystem::path& trial, const std::string& rule, const std::vector<std::string>& params,
                const std::vector<std::string>& extra) {
  TempDir out;
  std::vector<std::string> args = {LitmusBinary(), "run", "--trial", trial.string(), "--rule", rule};
  for (const std::string& p : params) args.insert(args.end(), {"--param", p});
  args.insert(args.end(), extra.begin(), extra.end());
  return Run(std::move(args), out.path(), rule);
}

RuleRun RunConfig(const std::filesystem::path& yaml, const std::string& report_name) {
  TempDir out;
  return Run({LitmusBinary(), "run", "--config", yaml.string()}, out.path(), report_name);
}

}  // namespace litmus::testing
