// Trial's catalog queries on every vendored smdebug fixture, compared with what smdebug's own
// trial API returned (<trial>.expected.json): steps, modes, workers, completeness, tensor names
// by step/mode/collection, per-tensor steps and per-step mode/workers.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "litmus/engine/trial.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using Json = nlohmann::json;
using testing::FixturePath;

Json LoadExpected(const std::string& trial) {
  std::ifstream in(FixturePath(trial).string() + ".expected.json");
  return Json::parse(in);
}

std::vector<int64_t> Ints(const Json& j) { return j.get<std::vector<int64_t>>(); }
std::vector<std::string> Strings(const Json& j) { return j.get<std::vector<std::string>>(); }

class TrialFixtureTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    expected_ = LoadExpected(GetParam());
    TrialOptions options;
    options.training_end_delay_refresh_s = 0;
    StatusOr<std::unique_ptr<Trial>> trial = Trial::Open(Env::Default(), FixturePath(GetParam()).string(), options);
    ASSERT_TRUE(trial.ok()) << trial.status().ToString();
    trial_ = std::move(trial).value();
  }

  Json expected_;
  std::unique_ptr<Trial> trial_;
};

TEST_P(TrialFixtureTest, TrialLevel) {
  EXPECT_TRUE(trial_->collections_ready());
  EXPECT_EQ(trial_->end_marker_seen(), expected_["training_job_end_marker_present"].get<bool>());
  EXPECT_EQ(trial_->Steps(), Ints(expected_["steps"]));
  EXPECT_EQ(trial_->Steps(Mode::kGlobal, true), Ints(expected_["steps_including_incomplete"]));
  EXPECT_EQ(trial_->loaded_all_steps(), expected_["loaded_all_steps"].get<bool>());
  EXPECT_EQ(trial_->workers(), Strings(expected_["workers"]));
  EXPECT_EQ(trial_->num_workers(), expected_["num_workers_from_collections"].get<int64_t>());
  EXPECT_EQ(trial_->last_complete_step(), expected_["last_complete_step"].get<int64_t>());
  EXPECT_TRUE(trial_->warnings().empty());
}

TEST_P(TrialFixtureTest, Modes) {
  for (const Mode mode : kAllModes) {
    const std::string name(ModeName(mode));
    SCOPED_TRACE(name);
    const Json& m = expected_["modes"][name];
    const std::vector<int64_t> steps = trial_->Steps(mode);
    EXPECT_EQ(steps, Ints(m["mode_steps"]));
    EXPECT_EQ(trial_->Steps(mode, true), Ints(m["mode_steps_including_incomplete"]));
    std::vector<int64_t> globals;
    for (const int64_t s : steps) {
      const std::optional<int64_t> g = trial_->GlobalStep(mode, s);
      ASSERT_TRUE(g.has_value()) << s;
      globals.push_back(*g);
    }
    EXPECT_EQ(globals, Ints(m["global_steps"]));
  }
  std::map<std::string, Json> ours;
  for (const int64_t g : trial_->Steps(Mode::kGlobal, true)) {
    const auto mode = trial_->ModeOfGlobalStep(g);
    ASSERT_TRUE(mode.has_value()) << g;
    ours[std::to_string(g)] = Json::array({std::string(ModeName(mode->first)), mode->second});
  }
  EXPECT_EQ(Json(ours), expected_["global_step_to_mode"]);
  EXPECT_FALSE(trial_->ModeOfGlobalStep(1'000'000).has_value());
}

TEST_P(TrialFixtureTest, TensorNames) {
  EXPECT_EQ(trial_->TensorNames(), Strings(expected_["tensor_names"]));
  for (const Mode mode : kAllModes) {
    const std::string name(ModeName(mode));
    SCOPED_TRACE(name);
    const Json& e = expected_["tensor_names_by_mode"][name];
    if (e.is_object()) {
      EXPECT_EQ(e["error"], "KeyError");
      EXPECT_FALSE(trial_->HasMode(mode));
      EXPECT_TRUE(trial_->TensorNamesForMode(mode).empty());
    } else {
      EXPECT_TRUE(trial_->HasMode(mode));
      EXPECT_EQ(trial_->TensorNamesForMode(mode), Strings(e));
    }
  }
  const Json& by_step = expected_["tensor_names_by_step"];
  EXPECT_EQ(by_step.size(), trial_->Steps(Mode::kGlobal, true).size());
  for (const auto& [step, names] : by_step.items()) {
    EXPECT_EQ(trial_->TensorNamesAtStep(std::stoll(step)), Strings(names)) << step;
  }
  for (const std::string& name : trial_->TensorNames()) EXPECT_TRUE(trial_->HasTensor(name));
  EXPECT_FALSE(trial_->HasTensor("no/such/tensor"));
}

TEST_P(TrialFixtureTest, Collections) {
  const Json& expected = expected_["collections"];
  EXPECT_EQ(trial_->collections().size(), expected.size());
  for (const auto& [name, e] : expected.items()) {
    SCOPED_TRACE(name);
    const auto it = trial_->collections().find(name);
    ASSERT_NE(it, trial_->collections().end());
    EXPECT_EQ(it->second.include_regex, Strings(e["include_regex"]));
    EXPECT_EQ(it->second.tensor_names, Strings(e["tensor_names"]));
    EXPECT_EQ(it->second.compiled_regex.size(), it->second.include_regex.size());
    if (e["reduction_config"].is_null()) {
      EXPECT_FALSE(it->second.reduction_config.has_value());
    } else {
      ASSERT_TRUE(it->second.reduction_config.has_value());
      EXPECT_EQ(it->second.reduction_config->save_raw_tensor, e["reduction_config"]["save_raw_tensor"].get<bool>());
      EXPECT_EQ(it->second.reduction_config->reductions, e["reduction_config"]["reductions"].get<std::string>());
    }
    LITMUS_ASSERT_OK_AND_ASSIGN(std::vector<std::string> members, trial_->TensorNamesInCollection(name));
    EXPECT_EQ(members, Strings(e["trial_tensor_names"]));
  }
  EXPECT_EQ(trial_->TensorNamesInCollection("no_such_collection").status().code(), StatusCode::kNotFound);
}

TEST_P(TrialFixtureTest, PerTensorSteps) {
  const Json& tensors = expected_["tensors"];
  EXPECT_EQ(tensors.size(), trial_->TensorNames().size());
  for (const auto& [name, t] : tensors.items()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(trial_->TensorSteps(name), Ints(t["steps"]));
    EXPECT_EQ(trial_->TensorSteps(name, true), Ints(t["steps_including_incomplete"]));
    for (const Mode mode : {Mode::kTrain, Mode::kEval, Mode::kPredict}) {
      const std::string mode_name(ModeName(mode));
      Json pairs = Json::array();
      for (const int64_t s : trial_->TensorSteps(name, mode)) {
        pairs.push_back(Json::array({s, trial_->GlobalStep(mode, s).value_or(-1)}));
      }
      const Json& steps_by_mode = t["steps_by_mode"];
      if (steps_by_mode.contains(mode_name)) {
        EXPECT_EQ(pairs, steps_by_mode[mode_name]) << mode_name;
      } else {
        EXPECT_TRUE(pairs.empty()) << mode_name << ": " << pairs.dump();
      }
    }
    EXPECT_EQ(trial_->TensorSteps(name, Mode::kGlobal), Ints(t["steps"]));
    for (const auto& [step, per_step] : t["per_step"].items()) {
      SCOPED_TRACE(step);
      const int64_t g = std::stoll(step);
      const std::vector<TensorEntry> entries = trial_->Entries(name, g);
      ASSERT_FALSE(entries.empty());
      std::vector<std::string> workers;
      for (const TensorEntry& e : entries) {
        workers.push_back(e.worker);
        EXPECT_EQ(std::string(ModeName(e.mode)), per_step["mode"].get<std::string>());
        EXPECT_EQ(e.mode_step, per_step["mode_step"].get<int64_t>());
        EXPECT_TRUE(e.location.has_value());
        EXPECT_TRUE(e.stored_reductions.empty());
        EXPECT_FALSE(e.shape.has_value());
      }
      std::vector<std::string> expected_workers = Strings(per_step["workers"]);
      std::sort(expected_workers.begin(), expected_workers.end());
      EXPECT_EQ(workers, expected_workers);
    }
    EXPECT_EQ(t["per_step"].size(), trial_->TensorSteps(name, true).size());
  }
}

TEST_P(TrialFixtureTest, RefreshAfterOpenParsesNothingNew) {
  const int64_t parsed = trial_->index_files_parsed();
  EXPECT_EQ(parsed, static_cast<int64_t>(trial_->Steps(Mode::kGlobal, true).size() * trial_->workers().size()));
  LITMUS_ASSERT_OK(trial_->Refresh());
  LITMUS_ASSERT_OK(trial_->Refresh());
  EXPECT_EQ(trial_->index_files_parsed(), parsed);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TrialFixtureTest,
                         ::testing::Values("pt_exploding", "pt_ddp_two_workers", "pt_run_partial",
                                           "pt_run_complete", "synthetic_dtypes"));

TEST(TrialOpenTest, MissingRootAndFileRoot) {
  testing::TempDir dir;
  StatusOr<std::unique_ptr<Trial>> missing = Trial::Open(Env::Default(), dir.str() + "/nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  dir.WriteFile("file", "x");
  StatusOr<std::unique_ptr<Trial>> file = Trial::Open(Env::Default(), dir.str() + "/file");
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidArgument) << file.status().ToString();
}

TEST(TrialOpenTest, FolderWithoutCollectionsOpensEmpty) {
  testing::TempDir dir;
  // An index file without any collections file: not visible until collections appear.
  testing::CopyTree(FixturePath("pt_exploding") / "index", dir.path() / "index");
  LITMUS_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Trial> trial, Trial::Open(Env::Default(), dir.str()));
  EXPECT_FALSE(trial->collections_ready());
  EXPECT_EQ(trial->num_workers(), 0);
  EXPECT_TRUE(trial->workers().empty());
  EXPECT_TRUE(trial->Steps(Mode::kGlobal, true).empty());
  EXPECT_TRUE(trial->collections().empty());
  EXPECT_EQ(trial->StepAvailability(0), StepState::kNotYetAvailable);
  EXPECT_EQ(trial->index_files_parsed(), 0);
  testing::CopyTree(FixturePath("pt_exploding") / "collections", dir.path() / "collections");
  LITMUS_ASSERT_OK(trial->Refresh());
  EXPECT_TRUE(trial->collections_ready());
  EXPECT_EQ(trial->Steps().size(), 16u);
  EXPECT_FALSE(trial->loaded_all_steps());
}

TEST(TrialOptionsTest, FromEnvironment) {
  setenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "12", 1);
  setenv("SMDEBUG_TRAINING_END_DELAY_REFRESH", "0", 1);
  TrialOptions options = TrialOptions::FromEnvironment();
  EXPECT_EQ(options.incomplete_step_wait_window, 12);
  EXPECT_EQ(options.training_end_delay_refresh_s, 0.0);
  setenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "lots", 1);
  setenv("SMDEBUG_TRAINING_END_DELAY_REFRESH", "-3", 1);
  options = TrialOptions::FromEnvironment();
  EXPECT_EQ(options.incomplete_step_wait_window, 1000);
  EXPECT_EQ(options.training_end_delay_refresh_s, 1.0);
  setenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "12x", 1);
  setenv("SMDEBUG_TRAINING_END_DELAY_REFRESH", "2.5", 1);
  options = TrialOptions::FromEnvironment();
  EXPECT_EQ(options.incomplete_step_wait_window, 1000);
  EXPECT_EQ(options.training_end_delay_refresh_s, 2.5);
  unsetenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW");
  unsetenv("SMDEBUG_TRAINING_END_DELAY_REFRESH");
  options = TrialOptions::FromEnvironment();
  EXPECT_EQ(options.incomplete_step_wait_window, 1000);
  EXPECT_EQ(options.training_end_delay_refresh_s, 1.0);
}

}  // namespace
}  // namespace litmus
