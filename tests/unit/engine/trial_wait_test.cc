// Unit tests of the trial-wait pieces: a pending local folder opens as an empty trial and becomes
// the real one once created; folders of trials are found and named; the notice is due at once and
// then at every interval.
#include "run/trial_wait.h"

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace litmus {
namespace {

TEST(TrialWait, PendingFolderOpensAsAnEmptyTrial) {
  testing::TempDir root;
  const std::string path = (root.path() / "later").string();
  EXPECT_FALSE(Trial::Open(Env::Default(), path).ok());
  PendingFolderEnv env(Env::Default());
  ASSERT_TRUE(IsMissingLocalFolder(path));
  env.AddPendingFolder(path);
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  auto trial = Trial::Open(&env, path, options);
  ASSERT_TRUE(trial.ok()) << trial.status().ToString();
  EXPECT_FALSE((*trial)->collections_ready());
  EXPECT_EQ(TrialWaitState(**trial), "trial folder " + path + " does not exist yet: waiting for training to create it");
  testing::CopyTree(testing::FixturePath("pt_exploding"), path);
  ASSERT_TRUE((*trial)->Refresh().ok());
  EXPECT_TRUE((*trial)->collections_ready());
  EXPECT_EQ(TrialWaitState(**trial), std::nullopt);
  EXPECT_FALSE((*trial)->Steps().empty());
  EXPECT_FALSE(IsMissingLocalFolder(path));
  EXPECT_FALSE(IsMissingLocalFolder("s3://bucket/missing"));
}

TEST(TrialWait, FindsTheTrialsOfAFolder) {
  testing::TempDir parent;
  for (const char* name : {"b", "a", "c", "d"}) std::filesystem::create_directories(parent.path() / name / "index");
  std::filesystem::create_directories(parent.path() / "e");
  parent.WriteFile("f/training_job_end.ts", "");
  const NestedTrials nested = FindNestedTrials(parent.str(), 3);
  EXPECT_EQ(nested.names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(nested.total, 5u);
  EXPECT_EQ(NestedTrialsMessage(parent.str(), nested),
            "trial " + parent.str() + " is not a trial but holds trials: a, b, c (and 2 more); use e.g. --trial " +
                (parent.path() / "a").string());
  // A trial itself, a missing folder: none.
  EXPECT_TRUE(FindNestedTrials(testing::FixturePath("pt_exploding").string()).names.empty());
  EXPECT_TRUE(FindNestedTrials((parent.path() / "missing").string()).names.empty());
}

TEST(TrialWait, NoticeAtOnceThenEveryInterval) {
  WaitNotice hourly(std::chrono::hours(1));
  EXPECT_TRUE(hourly.Due());
  EXPECT_FALSE(hourly.Due());
  EXPECT_FALSE(hourly.Due());
  WaitNotice always(std::chrono::milliseconds(0));
  EXPECT_TRUE(always.Due());
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(always.Due());
}

}  // namespace
}  // namespace litmus
