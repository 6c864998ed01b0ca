// AppendJsonString against nlohmann::json's own dump (error_handler_t::replace), which the
// project's other JSON output uses: the same bytes for plain text, escapes, control characters,
// UTF-8 and invalid UTF-8.
#include "json_string.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace litmus {
namespace {

TEST(JsonString, WritesWhatNlohmannWrites) {
  const std::string cases[] = {
      "",
      "gradient/MLP_fc1.weight",
      "Evaluation of the rule AllZero at step 0 resulted in the condition being met",
      "say \"hi\"",
      "back\\slash",
      "tab\there\nnewline",
      std::string("nul\0byte", 8),
      "\x7f delete",
      "\x01\x1f controls",
      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
      "bad \xff utf-8 \xc3",
      "/ slash stays",
  };
  for (const std::string& s : cases) {
    std::string out = "x";
    AppendJsonString(out, s);
    EXPECT_EQ(out, "x" + nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) << s;
  }
}

}  // namespace
}  // namespace litmus
