// series_rules: test rules that publish series (ABI 1.3 report_series) the way an isolated
// worker's interned names (isolation/protocol.h "Series points") must carry unchanged: many
// names, names with odd bytes (NUL, invalid UTF-8, quotes, newlines), names longer than the
// store keeps, a name the runner refuses, a changing order; and one that crashes mid-batch.
// Used by series_interning_test.cc only.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "litmus/rule.hpp"

namespace {

// (Built with +=: GCC 12 warns falsely (-Wrestrict) on `"literal" + std::string`.)
std::string SeriesName(int64_t i) {
  std::string name;
  switch (i % 5) {
    case 0: name = "plain "; break;
    case 1: name.assign("nul\0byte ", 9); break;
    case 2: name = "\xff\xfe not utf-8 "; break;
    case 3: name = "quote\" newline\n backslash\\ "; break;
    default: name.assign(3000, 'L'); break;  // truncated to SeriesStore::kMaxTextBytes
  }
  name += std::to_string(i);
  return name;
}

std::string TensorName(int64_t i) {
  std::string name;
  if (i % 2 != 0) {
    name = "layer_";
    name += std::to_string(i);
    name += "/weight:0";
  }
  return name;
}

double Value(int64_t i, int64_t step) {
  if ((i + step) % 7 == 0) return std::numeric_limits<double>::quiet_NaN();
  if ((i + step) % 11 == 0) return -std::numeric_limits<double>::infinity();
  return static_cast<double>(i) * 0.25 + static_cast<double>(step) / 3.0;
}

// Publishes `count` series at every step (in reverse order at odd steps), one the runner refuses
// (an empty series name), and fires at every third step.
class ManySeries : public litmus::Rule {
 public:
  explicit ManySeries(const litmus::RuleArgs& args) : Rule(args), count_(param_int("count")) {}
  bool invoke_at_step(int64_t step) override {
    for (int64_t k = 0; k < count_; ++k) {
      const int64_t i = step % 2 == 0 ? k : count_ - 1 - k;
      report_series(SeriesName(i), TensorName(i), step, Value(i, step));
    }
    report_series("", "refused", step, 1.0);
    return step % 3 == 0;
  }

 private:
  int64_t count_;
};

// Fires at its first step; from `at_step` on publishes 100 points and then crashes before the
// call's batch is sent.
class SeriesThenSegfault : public litmus::Rule {
 public:
  explicit SeriesThenSegfault(const litmus::RuleArgs& args) : Rule(args), at_step_(param_int("at_step")) {}
  bool invoke_at_step(int64_t step) override {
    for (int64_t i = 0; i < 100; ++i) report_series("s", std::to_string(i), step, static_cast<double>(step));
    report_detail("step " + std::to_string(step), step);
    report_violations(1);
    if (step >= at_step_) {
      log_error("about to crash at step ", step);
      volatile int* volatile target = nullptr;
      *target = 42;
    }
    return first_ ? !(first_ = false) : false;
  }

 private:
  int64_t at_step_;
  bool first_ = true;
};

}  // namespace

LITMUS_RULE_PLUGIN("series_rules", "1.0.0",
                   LITMUS_RULE(ManySeries, "ManySeries", "1.0.0", "publishes many oddly named series",
                               litmus::IntParam("count", "300", "series published at every step")),
                   LITMUS_RULE(SeriesThenSegfault, "SeriesThenSegfault", "1.0.0",
                               "publishes series, then crashes in the call",
                               litmus::IntParam("at_step", "2", "first global step that crashes")));
