// Interop: every smdebug reference trial, read by litmus from its local folder, compared with what
// smdebug's own reader returned (*.expected.json) by the shared comparison (fixture_comparer.h).
#include <gtest/gtest.h>

#include <cstdio>

#include "interop/fixture_comparer.h"
#include "litmus/engine/trial.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

class FixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureTest, DocumentMatchesSmdebugExpected) {
  const std::string fixture = GetParam();
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  LITMUS_ASSERT_OK_AND_ASSIGN(auto trial,
                              Trial::Open(Env::Default(), testing::FixturePath(fixture).string(), options));
  const testing::FixtureComparison result = testing::CompareFixtureWithExpected(fixture, *trial, Env::Default());
  EXPECT_GT(result.compared_values, 0);
  // Report which documented divergences this fixture exercised.
  for (const auto& [name, count] : result.divergences) {
    RecordProperty(name, count);
    std::printf("  %s: %s x%d\n", fixture.c_str(), name.c_str(), count);
  }
  std::printf("  %s: %d values and %d reductions compared with smdebug\n", fixture.c_str(),
              result.compared_values, result.compared_reductions);
}

INSTANTIATE_TEST_SUITE_P(Smdebug, FixtureTest,
                         ::testing::Values("pt_exploding", "synthetic_dtypes", "pt_ddp_two_workers",
                                           "pt_run_partial", "pt_run_complete"));

}  // namespace
}  // namespace litmus
