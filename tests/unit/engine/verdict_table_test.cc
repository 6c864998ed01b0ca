// Unit tests of FormatVerdictTable: aligned columns, "-" for no firing, times, nothing for no rows.
#include "run/verdict_table.h"

#include <gtest/gtest.h>

namespace litmus {
namespace {

TEST(VerdictTable, AlignedColumns) {
  const std::string table = FormatVerdictTable({
      {.rule = "VanishingGradient", .status = "NoIssuesFound", .first_firing = std::nullopt, .firings = 0,
       .datapoints = 40, .seconds = 0.012},
      {.rule = "Overfit", .status = "IssuesFound", .first_firing = 1200, .firings = 3, .datapoints = 1500,
       .seconds = 75.4},
  });
  EXPECT_EQ(table,
            "rule               status         first firing  firings  datapoints   time\n"
            "VanishingGradient  NoIssuesFound             -        0          40  0.01s\n"
            "Overfit            IssuesFound            1200        3        1500  1m15s\n");
  EXPECT_EQ(FormatVerdictTable({}), "");
}

}  // namespace
}  // namespace litmus
