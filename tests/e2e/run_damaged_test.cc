// End-to-end: damaged data is an error, never "not saved" (docs/run.md, "Damaged data"). A trial
// whose step 3 holds an infinity is damaged at that record in each way a trial can be (event
// file truncated or deleted, index entry past the end of its file, a bit flipped in a record's
// length, in its protobuf payload or in its tensor data, all with real payload CRCs): ExplodingTensor
// must end in Error (exit 2) naming the file, tensor, step and worker, never NoIssuesFound;
// --skip-damaged skips the step and says so; `litmus inspect` lists the damage and exits 2. Also a
// live trial (no end marker) whose record never arrives, a full disk and a read-only output folder,
// and a disk that fills at the end (the report says so).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "litmus/format/trial_layout.h"
#include "litmus/writer/writer.h"
#include "run_test_support.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace litmus::testing {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr int64_t kDamagedStep = 3;

// Six TRAIN steps of gradient/w (256 floats): finite, except +inf at step 3. Real payload CRCs.
void WriteTrial(const std::string& dir, bool finished = true) {
  writer::WriterOptions options;
  options.save_config = writer::SaveConfig::Every(1);
  options.write_payload_crc = true;
  if (!finished) options.end_marker = writer::EndMarkerPolicy::kNever;
  auto w = writer::Writer::Open(dir, options);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->SetMode(Mode::kTrain).ok());
  for (int64_t step = 0; step < 6; ++step) {
    ASSERT_TRUE((*w)->BeginStep().ok());
    std::vector<float> values(256, 0.5f);
    if (step == kDamagedStep) values[100] = std::numeric_limits<float>::infinity();
    ASSERT_TRUE((*w)->SaveTensor("gradient/w", values, {256}).ok());
    ASSERT_TRUE((*w)->EndStep().ok());
  }
  ASSERT_TRUE((*w)->Close().ok());
}

fs::path EventFile(const fs::path& trial) { return trial / layout::EventFilePath(kDamagedStep, "worker_0"); }
fs::path IndexFile(const fs::path& trial) { return trial / layout::IndexFilePath(kDamagedStep, "worker_0"); }

// Where gradient/w's record of step 3 is: {start_idx, length}.
std::pair<uint64_t, uint64_t> Record(const fs::path& trial) {
  const Json index = ReadJson(IndexFile(trial));
  for (const Json& t : index["tensor_payload"]) {
    if (t["tensorname"] == "gradient/w") return {t["start_idx"].get<uint64_t>(), t["length"].get<uint64_t>()};
  }
  ADD_FAILURE() << "no gradient/w in " << IndexFile(trial);
  return {0, 0};
}

void FlipBit(const fs::path& file, uint64_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char byte = 0;
  f.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x10);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&byte, 1);
}

struct Damage {
  const char* name;
  std::function<void(const fs::path& trial)> apply;
};

std::vector<Damage> Gallery() {
  return {
      {"truncated event file",
       [](const fs::path& t) { fs::resize_file(EventFile(t), fs::file_size(EventFile(t)) / 2); }},
      {"deleted event file", [](const fs::path& t) { fs::remove(EventFile(t)); }},
      {"index entry past the end of its file",
       [](const fs::path& t) {
         Json index = ReadJson(IndexFile(t));
         for (Json& e : index["tensor_payload"]) e["start_idx"] = e["start_idx"].get<uint64_t>() + 1000000;
         std::ofstream(IndexFile(t)) << index.dump();
       }},
      {"bit flip in the record's length", [](const fs::path& t) { FlipBit(EventFile(t), Record(t).first + 1); }},
      {"bit flip in the protobuf payload", [](const fs::path& t) { FlipBit(EventFile(t), Record(t).first + 16); }},
      {"bit flip in the tensor data",
       [](const fs::path& t) {
         const auto [start, length] = Record(t);
         FlipBit(EventFile(t), start + length - 4 - 64);  // inside the floats, before the payload CRC
       }},
  };
}

ProcessResult RunExploding(const fs::path& trial, const fs::path& out, std::vector<std::string> extra = {},
                           std::vector<std::pair<std::string, std::string>> env = kFastEnd) {
  std::vector<std::string> args = {"--trial", trial.string(), "--rule", "ExplodingTensor"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunProcess(RunArgsInto(out, args), env, std::chrono::seconds(60));
}

TEST(RunDamaged, AnUndamagedTrialFiresAtTheInfinity) {
  TempDir trial, out;
  WriteTrial(trial.str());
  const ProcessResult result = RunExploding(trial.path(), out.path());
  EXPECT_EQ(result.exit_code, 1) << result.err;
}

TEST(RunDamaged, EveryKindOfDamageIsAClientErrorNamingWhere) {
  for (const Damage& damage : Gallery()) {
    SCOPED_TRACE(damage.name);
    TempDir trial, out;
    WriteTrial(trial.str());
    damage.apply(trial.path());
    const ProcessResult result = RunExploding(trial.path(), out.path());
    EXPECT_EQ(result.exit_code, 2) << result.err;
    const std::string message = ReadJson(out.path() / "status.json")["StatusDetails"];
    EXPECT_THAT(message, HasSubstr("ClientError")) << message;
    EXPECT_THAT(message, HasSubstr(EventFile(trial.path()).filename().string())) << message;
    EXPECT_THAT(result.err, HasSubstr("litmus: error: ")) << result.err;
    EXPECT_EQ(ReadJson(out.path() / "status.json")["RuleEvaluationStatus"], "Error");
    EXPECT_EQ(ReadJson(out.path() / "status.json")["exit_code"], 2);
    std::ifstream message_file(out.path() / "message");
    std::string line;
    std::getline(message_file, line);
    EXPECT_THAT(line, HasSubstr("ClientError: ")) << line;
    if (std::string(damage.name).find("bit flip") == std::string::npos) {
      // What the index names and the file does not hold: the message says which record.
      for (const char* part : {"damaged trial", "tensor 'gradient/w'", "step 3", "worker 'worker_0'", "offset "}) {
        EXPECT_THAT(message, HasSubstr(part)) << message;
      }
    }

    // --skip-damaged: the step is skipped, with a warning in status.json and the report.
    TempDir skipped;
    const ProcessResult skip = RunExploding(trial.path(), skipped.path(), {"--skip-damaged"});
    EXPECT_EQ(skip.exit_code, 0) << skip.err;
    const Json report = ReadJson(skipped.path() / "rule-reports" / "ExplodingTensor.json");
    EXPECT_EQ(report["DamagedStepsSkipped"], 1);
    EXPECT_EQ(report["Datapoints"], 5);
    const Json warnings = ReadJson(skipped.path() / "status.json")["Warnings"];
    ASSERT_FALSE(warnings.empty());
    EXPECT_THAT(warnings.back().get<std::string>(), HasSubstr("step 3 skipped (--skip-damaged)"));

    // inspect lists the damage and exits 2.
    const ProcessResult inspect = RunProcess({LitmusBinary(), "inspect", trial.str()});
    EXPECT_EQ(inspect.exit_code, 2) << inspect.err;
    EXPECT_THAT(inspect.err, HasSubstr("1 damaged record in trial")) << inspect.err;
    EXPECT_THAT(inspect.err, HasSubstr(EventFile(trial.path()).filename().string())) << inspect.err;
  }
}

// A rule that reads the damaged record itself, without requiring it (so the fetch never checked
// it), and fails on it: the same ClientError (exit 2) naming the record, not a rule failure
// (exit 3); --skip-damaged skips that step too. In both isolation modes (in a worker the read
// travels to the runner as a query).
TEST(RunDamaged, ADamagedRecordTheRuleReadsItselfIsAClientError) {
  TempDir trial;
  WriteTrial(trial.str());
  fs::resize_file(EventFile(trial.path()), fs::file_size(EventFile(trial.path())) / 2);
  for (const char* isolation : {"process", "none"}) {
    SCOPED_TRACE(isolation);
    TempDir out;
    const std::vector<std::string> job = {"--trial", trial.str(), "--plugin", LITMUS_TEST_RULES_PLUGIN, "--rule",
                                          "FireAtStep", "--param", "fire_at_step=100", "--param", "read=gradient/w",
                                          "--isolation", isolation};
    const ProcessResult result = RunProcess(RunArgsInto(out.path(), job), kFastEnd, std::chrono::seconds(60));
    EXPECT_EQ(result.exit_code, 2) << result.err;
    const Json status = ReadJson(out.path() / "status.json");
    EXPECT_EQ(status["RuleEvaluationStatus"], "Error");
    const std::string message = status["StatusDetails"];
    EXPECT_THAT(message, HasSubstr("ClientError")) << message;
    EXPECT_THAT(message, HasSubstr("read damaged data")) << message;
    EXPECT_THAT(message, HasSubstr(EventFile(trial.path()).filename().string())) << message;
    EXPECT_THAT(message, HasSubstr("step 3")) << message;

    TempDir skipped;
    std::vector<std::string> skip_job = job;
    skip_job.push_back("--skip-damaged");
    const ProcessResult skip = RunProcess(RunArgsInto(skipped.path(), skip_job), kFastEnd, std::chrono::seconds(60));
    EXPECT_EQ(skip.exit_code, 0) << skip.err;
    const Json report = ReadJson(skipped.path() / "rule-reports" / "FireAtStep.json");
    EXPECT_EQ(report["DamagedStepsSkipped"], 1);
    EXPECT_EQ(report["Datapoints"], 5);
  }
}

TEST(RunDamaged, ALiveTrialWaitsForAMissingRecordWithinTheRetryBudget) {
  TempDir trial, out;
  WriteTrial(trial.str(), /*finished=*/false);
  fs::remove(EventFile(trial.path()));
  const ProcessResult result =
      RunExploding(trial.path(), out.path(), {},
                   {{"SMDEBUG_TRAINING_END_DELAY_REFRESH", "0"}, {"SMDEBUG_MISSING_EVENT_FILE_RETRY_LIMIT", "5"}});
  ASSERT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_THAT(result.err, HasSubstr("still missing after 5 polls")) << result.err;
}

// Mounts a tiny tmpfs in a private mount namespace (unshare -m; root only) and runs `script`
// there with $D the mount point. Empty optional when that is not possible here.
std::optional<ProcessResult> InTinyTmpfs(const std::string& script, bool read_only) {
  if (geteuid() != 0 || access("/usr/bin/unshare", X_OK) != 0) return std::nullopt;
  TempDir mount_point;
  const std::string remount = read_only ? "mkdir -p \"$D/out/rule-reports\" && mount -o remount,ro \"$D\" && " : "";
  const ProcessResult probe = RunProcess({"/usr/bin/unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs " +
                                                                                     mount_point.str()});
  if (probe.exit_code != 0) return std::nullopt;
  return RunProcess({"/usr/bin/unshare", "-m", "sh", "-c",
                     "D=" + mount_point.str() + " && mount -t tmpfs -o size=64k tmpfs \"$D\" && " + remount + script},
                    kFastEnd);
}

TEST(RunDamaged, AFullOrReadOnlyOutputFolderIsExitThree) {
  TempDir trial;
  WriteTrial(trial.str());
  // (Appended piece by piece: GCC 12's -Wrestrict misfires on "'" + std::string.)
  std::string run = "'";
  run += LitmusBinary();
  run += "' run --trial '";
  run += trial.str();
  run += "' --rule ExplodingTensor --output-dir \"$D/out\"";
  // Full from the start: the folder exists, nothing more fits.
  auto full = InTinyTmpfs("mkdir -p \"$D/out/rule-reports\" && (dd if=/dev/zero of=\"$D/fill\" bs=1k 2>/dev/null; "
                          "true) && " + run, /*read_only=*/false);
  if (!full) GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace here (needs root and unshare)";
  EXPECT_EQ(full->exit_code, 3) << full->err;
  EXPECT_THAT(full->err, HasSubstr("No space left on device")) << full->err;
  auto read_only = InTinyTmpfs(run, /*read_only=*/true);
  ASSERT_TRUE(read_only.has_value());
  EXPECT_EQ(read_only->exit_code, 3) << read_only->err;
  EXPECT_THAT(read_only->err, HasSubstr("Read-only file system")) << read_only->err;
}

// The job's last files written at the end (the series files, with the report made meanwhile)
// fail on a full disk: exit 3, and the report, written elsewhere, says so (it is made again once
// the failure is known). The output folder has room for the job's small files, not for the
// series of 40 tensors x 100 steps (two series each, ~0.5 MB of JSON).
TEST(RunDamaged, FilesThatCannotBeWrittenAtTheEndAreInTheReport) {
  TempDir trial, elsewhere;
  {
    writer::WriterOptions options;
    options.save_config = writer::SaveConfig::Every(1);
    auto w = writer::Writer::Open(trial.str(), options);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    for (int64_t step = 0; step < 100; ++step) {
      ASSERT_TRUE((*w)->BeginStep().ok());
      for (int t = 0; t < 40; ++t) {
        ASSERT_TRUE((*w)->SaveTensor("gradient/w" + std::to_string(t), std::vector<float>(4, 0.5f), {4}).ok());
      }
      ASSERT_TRUE((*w)->EndStep().ok());
    }
    ASSERT_TRUE((*w)->Close().ok());
  }
  const fs::path report = elsewhere.path() / "report.html";
  std::string run = "'";
  run += LitmusBinary();
  run += "' run --trial '";
  run += trial.str();
  run += "' --rule ExplodingTensor --keep-going --output-dir \"$D/out\" --report '";
  run += report.string();
  run += "'";
  auto result = InTinyTmpfs(run, /*read_only=*/false);
  if (!result) GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace here (needs root and unshare)";
  EXPECT_EQ(result->exit_code, 3) << result->err;
  EXPECT_THAT(result->err, HasSubstr("ExplodingTensor.series.json: No space left on device")) << result->err;
  ASSERT_TRUE(fs::exists(report)) << result->err;
  const std::string page = ReadWholeFile(report);
  EXPECT_NE(page.find("finished, exit code 3"), std::string::npos) << "the report's job line: "
                                                                  << page.substr(page.find("<h1>"), 200);
}

}  // namespace
}  // namespace litmus::testing
