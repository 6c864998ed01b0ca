// Unit tests of EndMarkerWatch: a wait ends when the end-of-training marker is renamed into a
// watched root, not at its timeout; after Release a wait sleeps its whole time (nothing is
// watched), and a later Watch watches again.
#include "run/end_marker_watch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "litmus/format/env.h"
#include "litmus/format/trial_layout.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using std::chrono::milliseconds;

// Writes the marker as the writer does (a temporary file renamed into place) after `delay`.
std::thread MarkerAfter(const std::filesystem::path& root, milliseconds delay) {
  return std::thread([root, delay] {
    std::this_thread::sleep_for(delay);
    const std::filesystem::path tmp = root / (std::string(layout::kEndOfJobFile) + ".tmp");
    std::ofstream(tmp) << "{}";
    std::filesystem::rename(tmp, root / layout::kEndOfJobFile);
  });
}

// (Wall-clock bounds here are far apart on purpose: a wait that ends on the marker ends long
// before its 60 s timeout on any machine; one that must sleep its whole 400 ms is not over at
// 300 ms, whatever the marker written at 20 ms.)
TEST(EndMarkerWatch, TheMarkerEndsAWaitAndReleaseEndsTheWatch) {
  testing::TempDir root;
  StopSignal stop(Env::Default(), root.str(), std::nullopt, 0);
  EndMarkerWatch watch;
  watch.Watch(root.str());
  std::thread writer = MarkerAfter(root.path(), milliseconds(50));
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(watch.SleepFor(stop, milliseconds(60000)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  writer.join();

  watch.Release();
  watch.Release();  // (nothing left to release)
  std::filesystem::remove(root.path() / layout::kEndOfJobFile);
  writer = MarkerAfter(root.path(), milliseconds(20));
  start = std::chrono::steady_clock::now();
  EXPECT_FALSE(watch.SleepFor(stop, milliseconds(400)));  // no watch: not woken by the marker
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(300));
  writer.join();

  // Watched again after a release.
  std::filesystem::remove(root.path() / layout::kEndOfJobFile);
  watch.Watch(root.str());
  writer = MarkerAfter(root.path(), milliseconds(50));
  start = std::chrono::steady_clock::now();
  EXPECT_FALSE(watch.SleepFor(stop, milliseconds(60000)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  writer.join();
  watch.Release();
}

// A trial that has ended when the job starts is not watched (its marker stays): no inotify
// instance, whose close waits for an RCU grace period on the job's way out. One without its
// marker yet is; S3 trials never are.
TEST(EndMarkerWatch, AnEndedTrialIsNotWatched) {
  testing::TempDir ended, running;
  std::ofstream(ended.path() / layout::kEndOfJobFile) << "{}";
  EndMarkerWatch watch;
  watch.Watch(ended.str());
  EXPECT_FALSE(watch.watching());
  watch.Watch("s3://bucket/trial");
  EXPECT_FALSE(watch.watching());
  watch.Watch(running.str());
  EXPECT_TRUE(watch.watching());
  watch.Release();
  EXPECT_FALSE(watch.watching());
}

}  // namespace
}  // namespace litmus
