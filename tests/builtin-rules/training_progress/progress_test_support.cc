// TrialBuilder and RunRule (see progress_test_support.h).
#include "progress_test_support.h"

#include <gtest/gtest.h>

#include <fstream>
#include <span>

#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus::testing {

std::vector<writer::CollectionConfig> ProgressCollections() {
  auto collection = [](std::string name, std::vector<std::string> regex) {
    writer::CollectionConfig c;
    c.name = std::move(name);
    c.include_regex = std::move(regex);
    return c;
  };
  return {collection("all", {}),
          collection("default", {}),
          collection("losses", {"^loss"}),
          collection("gradients", {"^gradient"}),
          collection("metrics", {"^train-", "^validation-"}),
          collection("relu_input", {"relu_input"})};
}

TrialBuilder::TrialBuilder(const std::filesystem::path& dir, std::vector<writer::CollectionConfig> collections) {
  writer::WriterOptions options;
  options.save_config = writer::SaveConfig::Every(1);
  options.collections = std::move(collections);
  options.overwrite_existing = true;  // TempDir created the folder
  options.skip_end_marker_if_training_job_name_set = false;
  options.end_marker = writer::EndMarkerPolicy::kNever;  // Finish() decides
  auto w = writer::Writer::Open(dir.string(), options);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (w.ok()) writer_ = std::move(w).value();
}

TrialBuilder::~TrialBuilder() {
  if (!finished_) Finish(false);
}

void TrialBuilder::Save(int64_t step, Mode mode, const std::vector<TensorData>& tensors) {
  ASSERT_NE(writer_, nullptr);
  ASSERT_GT(step, writer_->step()) << "steps must increase";
  ASSERT_TRUE(writer_->SetMode(mode).ok());
  while (writer_->step() + 1 < step) {  // unsaved steps in between
    ASSERT_TRUE(writer_->BeginStep().ok());
    ASSERT_TRUE(writer_->EndStep().ok());
  }
  ASSERT_TRUE(writer_->BeginStep().ok());
  for (const TensorData& t : tensors) {
    const Status s = writer_->SaveTensor(t.name, std::span<const float>(t.values), std::span<const int64_t>(t.shape));
    ASSERT_TRUE(s.ok()) << t.name << ": " << s.ToString();
  }
  const Status s = writer_->EndStep();
  ASSERT_TRUE(s.ok()) << s.ToString();
}

void TrialBuilder::Finish(bool ended) {
  finished_ = true;
  if (writer_ == nullptr) return;
  const Status s = writer_->Close();
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (ended) {
    const Status marker = writer::MarkTrainingEnded(nullptr, writer_->out_dir());
    EXPECT_TRUE(marker.ok()) << marker.ToString();
  }
}

RuleRun RunRule(const std::string& trial, const std::string& rule, const std::vector<std::string>& params,
                const std::vector<std::string>& extra) {
  TempDir out;
  std::vector<std::string> args = {LitmusBinary(),
                                   "run",
                                   "--trial",
                                   trial,
                                   "--rule",
                                   rule,
                                   "--output-dir",
                                   out.str(),
                                   "--message-file",
                                   out.str() + "/message",
                                   "--failure-file",
                                   out.str() + "/failure",
                                   "--poll-interval-ms",
                                   "20"};
  for (const std::string& p : params) args.insert(args.end(), {"--param", p});
  args.insert(args.end(), extra.begin(), extra.end());
  const ProcessResult process =
      RunProcess(args, {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}}, std::chrono::seconds(120));
  RuleRun run;
  run.exit_code = process.exit_code;
  run.err = process.err;
  run.timed_out = process.timed_out;
  std::ifstream events(out.path() / "events.jsonl");
  for (std::string line; std::getline(events, line);) {
    const nlohmann::json e = nlohmann::json::parse(line);
    if (e["event"] == "RuleEvaluationConditionMet") run.fired.push_back(e["step"].get<int64_t>());
  }
  const auto read_json = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    return in ? nlohmann::json::parse(in) : nlohmann::json();
  };
  run.status = read_json(out.path() / "status.json");
  const std::filesystem::path reports = out.path() / "rule-reports";
  if (std::filesystem::exists(reports)) {
    for (const auto& entry : std::filesystem::directory_iterator(reports)) {
      const std::string file = entry.path().filename().string();
      (file.ends_with(".series.json") ? run.series : run.report) = read_json(entry.path());
    }
  }
  if (std::filesystem::exists(out.path() / "message")) run.message = ReadWholeFile(out.path() / "message");
  return run;
}

}  // namespace litmus::testing
