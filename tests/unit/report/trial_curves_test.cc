// TrialCurves on a trial that grows while it is read (litmus::writer keeps writing between two
// Updates): every loss step read exactly once, by mode; a watched tensor read at every step up to
// kFullSteps of its steps and then at a doubling stride; the curves bounded to 1024 buckets with
// the extremes and the NaN counts kept.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "litmus/writer/writer.h"
#include "support/temp_dir.h"
#include "trial_curves.h"

namespace litmus::report {
namespace {

const SeriesStore::Series* Find(const SeriesStore& store, const std::string& name, const std::string& tensor) {
  for (const SeriesStore::Series& s : store.series()) {
    if (s.name == name && s.tensor == tensor) return &s;
  }
  return nullptr;
}

// Steps [from, to): a TRAIN step, every 10th an EVAL one; the loss is the step; w holds the step
// (and one NaN at step 10).
void WriteSteps(writer::Writer& w, int from, int to) {
  for (int step = from; step < to; ++step) {
    ASSERT_TRUE(w.SetMode(step % 10 == 9 ? Mode::kEval : Mode::kTrain).ok());
    ASSERT_TRUE(w.BeginStep().ok());
    const std::vector<float> loss = {static_cast<float>(step)};
    ASSERT_TRUE(w.SaveTensor("MSELoss_output_0", std::span<const float>(loss), std::vector<int64_t>{}).ok());
    std::vector<float> values = {static_cast<float>(step), -static_cast<float>(step), 0.0f, 1.0f};
    if (step == 10) values[2] = std::numeric_limits<float>::quiet_NaN();
    ASSERT_TRUE(w.SaveTensor("layer/w", std::span<const float>(values), std::vector<int64_t>{4}).ok());
    ASSERT_TRUE(w.EndStep().ok());
  }
}

void ExpectSameCurves(const TrialCurves& own, const TrialCurves& borrowed);

// A trial written while it is read: every step saved, no end marker, reopened to add steps.
writer::WriterOptions GrowingTrialOptions() {
  writer::WriterOptions options;
  options.save_config = writer::SaveConfig::Every(1);
  options.end_marker = writer::EndMarkerPolicy::kNever;
  options.overwrite_existing = true;
  return options;
}

TEST(TrialCurves, IncrementalStridedAndBounded) {
  testing::TempDir trial;
  auto w = writer::Writer::Open(trial.str(), GrowingTrialOptions());
  ASSERT_TRUE(w.ok()) << w.status().ToString();

  TrialCurves curves(Env::Default(), trial.str());
  curves.Watch({"layer/w", "not/in/the/trial"});
  WriteSteps(**w, 0, 2000);
  curves.Update();
  ASSERT_TRUE(curves.info().open) << curves.info().error;
  EXPECT_EQ(curves.info().steps, 2000);
  EXPECT_EQ(curves.info().steps_by_mode.at("EVAL"), 200);
  EXPECT_EQ(curves.stride("layer/w"), 2);
  WriteSteps(**w, 2000, 3000);
  curves.Update();
  ASSERT_TRUE((*w)->Close().ok());

  // Losses: every step once (TRAIN and EVAL apart), bounded, extremes kept.
  const SeriesStore::Series* train = Find(curves.losses(), "TRAIN", "MSELoss_output_0");
  const SeriesStore::Series* eval = Find(curves.losses(), "EVAL", "MSELoss_output_0");
  ASSERT_NE(train, nullptr);
  ASSERT_NE(eval, nullptr);
  EXPECT_EQ(train->total_points, 2700);
  EXPECT_EQ(eval->total_points, 300);
  EXPECT_LE(train->buckets.size(), SeriesStore::kMaxBuckets);
  EXPECT_EQ(train->buckets.front().min, 0);
  EXPECT_EQ(train->buckets.back().max, 2998);
  // The watched tensor: 1024 steps, then every 2nd up to 2048, then every 4th: 1024 + 512 + 238.
  EXPECT_EQ(curves.stride("layer/w"), 4);
  const SeriesStore::Series* mean = Find(curves.stats(), TrialCurves::kMean, "layer/w");
  const SeriesStore::Series* max = Find(curves.stats(), TrialCurves::kMax, "layer/w");
  const SeriesStore::Series* nan = Find(curves.stats(), TrialCurves::kNan, "layer/w");
  ASSERT_NE(mean, nullptr);
  ASSERT_NE(max, nullptr);
  ASSERT_NE(nan, nullptr);
  EXPECT_EQ(mean->total_points, 1024 + 512 + 238);
  EXPECT_LE(mean->buckets.size(), SeriesStore::kMaxBuckets);
  EXPECT_EQ(max->buckets.back().max, 2996);  // the last step read (every 4th from 2048)
  double nan_seen = 0;
  for (const SeriesStore::Bucket& b : nan->buckets) nan_seen = std::max(nan_seen, b.max);
  EXPECT_EQ(nan_seen, 1);
  EXPECT_EQ(Find(curves.stats(), TrialCurves::kMean, "not/in/the/trial"), nullptr);
  EXPECT_EQ(curves.watched().size(), 2u);
}

// `litmus run --report` reads the curves through the runner's own Trial: the same curves as a
// TrialCurves that opens the trial itself, and the borrowed Trial is refreshed only by its owner.
TEST(TrialCurves, ThroughTheRunnersTrialTheSameCurvesAndNoRefresh) {
  testing::TempDir trial;
  auto w = writer::Writer::Open(trial.str(), GrowingTrialOptions());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  WriteSteps(**w, 0, 1500);
  StatusOr<std::unique_ptr<Trial>> runners = Trial::Open(Env::Default(), trial.str());
  ASSERT_TRUE(runners.ok()) << runners.status().ToString();
  TrialCurves borrowed(runners->get());
  borrowed.Watch({"layer/w"});
  borrowed.Update();
  ASSERT_TRUE(borrowed.info().open) << borrowed.info().error;
  EXPECT_EQ(borrowed.info().steps, 1500);
  WriteSteps(**w, 1500, 3000);
  ASSERT_TRUE((*w)->Close().ok());
  borrowed.Update();
  EXPECT_EQ(borrowed.info().steps, 1500);  // not refreshed by the curves
  ASSERT_TRUE((*runners)->Refresh().ok());
  borrowed.Update();
  EXPECT_EQ(borrowed.info().steps, 3000);

  TrialCurves own(Env::Default(), trial.str());
  own.Watch({"layer/w"});
  own.Update();
  EXPECT_EQ(own.info().steps, 3000);
  ExpectSameCurves(own, borrowed);
}

// `litmus run --report`: the statistics of the values the runner's prefetch reads are collected
// by the trial as it decodes them (Trial::CollectStatistics) and taken by the curves, which read
// again only what the runner did not read: the same curves (NaN counts included) as a
// TrialCurves that reads every value itself, without reading the values the runner read.
TEST(TrialCurves, StatisticsCollectedFromTheRunnersReadsAreTheSameWithoutASecondRead) {
  testing::TempDir trial;
  auto w = writer::Writer::Open(trial.str(), GrowingTrialOptions());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  WriteSteps(**w, 0, 2500);
  ASSERT_TRUE((*w)->Close().ok());
  TrialCurves own(Env::Default(), trial.str());
  own.Watch({"layer/w"});
  own.Update();
  ASSERT_EQ(own.values_read(), 1024 + 512 + 113);  // every value it charts
  // skip: the steps the "runner" does not read (a rule that skips them).
  for (const int skip : {0, 7}) {
    SCOPED_TRACE("runner skips every " + std::to_string(skip) + "th step");
    StatusOr<std::unique_ptr<Trial>> runners = Trial::Open(Env::Default(), trial.str());
    ASSERT_TRUE(runners.ok()) << runners.status().ToString();
    (*runners)->CollectStatistics(std::nullopt);  // (ReportObserver::TrialOpened)
    TrialCurves collected(runners->get(), /*collected=*/true);
    for (int64_t step = 0; step < 2500; ++step) {
      if (skip == 0 || step % skip != 3) {
        const std::vector<Trial::StepTensor> keys = {{"MSELoss_output_0", step}, {"layer/w", step}};
        (*runners)->Prefetch(keys);
        (*runners)->Release(keys);
      }
      if (step % 100 == 1) {  // the runner's FilesWritten, after the step was evaluated
        collected.Watch({"layer/w"});
        collected.Update(step);
      }
    }
    collected.Update();  // (FilesWritten(true))
    ExpectSameCurves(own, collected);
    EXPECT_EQ(collected.statistics_collected() + collected.values_read(), own.values_read());
    if (skip == 0) {
      EXPECT_EQ(collected.values_read(), 0);
    } else {
      EXPECT_GT(collected.values_read(), 0);
      EXPECT_LT(collected.values_read(), own.values_read() / 5);
    }
    // Once narrowed to the watched tensors, nothing else is collected. (What is there now are
    // the values the curves read themselves, at the end.)
    for (const Trial::CollectedStatistics& c : (*runners)->TakeStatistics()) EXPECT_EQ(c.name, "layer/w");
    (*runners)->Prefetch({{"MSELoss_output_0", 5}});
    EXPECT_TRUE((*runners)->TakeStatistics().empty());
  }
  // As `litmus run --report` does between rewrites (TakeCollectedStatistics every few hundred
  // evaluations, keeping only the planned steps'): with no rewrite until the end, the same
  // curves, nothing read again.
  StatusOr<std::unique_ptr<Trial>> runners = Trial::Open(Env::Default(), trial.str());
  ASSERT_TRUE(runners.ok()) << runners.status().ToString();
  (*runners)->CollectStatistics(std::nullopt);
  TrialCurves taken(runners->get(), /*collected=*/true);
  taken.Watch({"layer/w"});
  taken.Update(-1);  // (the first rewrite: it knows the watched tensors, no step evaluated yet)
  for (int64_t step = 0; step < 2500; ++step) {
    const std::vector<Trial::StepTensor> keys = {{"MSELoss_output_0", step}, {"layer/w", step}};
    (*runners)->Prefetch(keys);
    (*runners)->Release(keys);
    if (step % 100 == 99) taken.TakeCollectedStatistics();
  }
  taken.Update();
  ExpectSameCurves(own, taken);
  EXPECT_EQ(taken.values_read(), 0);
  EXPECT_EQ(taken.statistics_collected(), own.values_read());
}

// The plan the collected statistics are kept by is the cursor's: every step up to kFullSteps,
// then every 2nd up to twice that, every 4th, ...
TEST(TrialCurves, PlannedPositionsAreTheCursorsReads) {
  int64_t stride = 1;
  for (int64_t seen = 0; seen < 20 * TrialCurves::kFullSteps; ++seen) {
    while (seen >= TrialCurves::kFullSteps * stride) stride *= 2;
    ASSERT_EQ(TrialCurves::PlannedPosition(seen), seen % stride == 0) << seen;
  }
}

void ExpectSameCurves(const TrialCurves& own, const TrialCurves& borrowed) {
  EXPECT_EQ(own.stride("layer/w"), borrowed.stride("layer/w"));
  for (const auto& [store, other] : {std::pair{&own.losses(), &borrowed.losses()}, std::pair{&own.stats(), &borrowed.stats()}}) {
    ASSERT_EQ(store->series().size(), other->series().size());
    for (size_t i = 0; i < store->series().size(); ++i) {
      const SeriesStore::Series& a = store->series()[i];
      const SeriesStore::Series& b = other->series()[i];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.tensor, b.tensor);
      EXPECT_EQ(a.total_points, b.total_points);
      ASSERT_EQ(a.buckets.size(), b.buckets.size()) << a.name;
      for (size_t j = 0; j < a.buckets.size(); ++j) {
        EXPECT_EQ(a.buckets[j].first_step, b.buckets[j].first_step);
        EXPECT_EQ(a.buckets[j].count, b.buckets[j].count);
        EXPECT_EQ(a.buckets[j].min, b.buckets[j].min);
        EXPECT_EQ(a.buckets[j].max, b.buckets[j].max);
        EXPECT_EQ(a.buckets[j].sum, b.buckets[j].sum);
      }
    }
  }
}

TEST(TrialCurves, AMissingTrialIsReportedNotFatal) {
  testing::TempDir dir;
  TrialCurves curves(Env::Default(), (dir.path() / "nowhere").string());
  curves.Update();
  EXPECT_FALSE(curves.info().open);
  EXPECT_FALSE(curves.info().error.empty());
}

}  // namespace
}  // namespace litmus::report
