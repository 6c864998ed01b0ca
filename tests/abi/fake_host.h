// fake_host.h — an in-memory implementation of the litmus host table (litmus_host_api_t) for SDK
// and plugin tests: trials with steps, workers, tensors and collections (listed names only), plus
// records of what the plugin did (errors, logs, requirements, report calls, actions added, which
// host functions it called). Regexes are literals with an optional leading '^'.
// Thread-safety: none; one test thread.
#ifndef LITMUS_TESTS_ABI_FAKE_HOST_H_
#define LITMUS_TESTS_ABI_FAKE_HOST_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "litmus/rule_abi.h"

namespace litmus::testing {

struct FakeValue {
  int32_t dtype = LITMUS_DTYPE_FLOAT32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;  // little-endian elements (operator new aligns them)
  std::vector<std::string> strings;  // LITMUS_DTYPE_STRING only
  bool has_value = true;             // false: only reductions were saved
  std::map<std::pair<int32_t, bool>, double> saved_reductions;  // (reduction, abs) -> value
};

FakeValue Floats(const std::vector<float>& values);
FakeValue Doubles(const std::vector<double>& values);
FakeValue ReductionOnly(int32_t reduction, bool abs, double value);

struct FakeStep {
  int32_t mode = LITMUS_MODE_TRAIN;
  int64_t mode_step = 0;
  std::map<std::string, std::map<std::string, FakeValue>> workers;  // worker -> tensor -> value
};

struct FakeTrial {
  std::map<int64_t, FakeStep> steps;                                // by global step
  std::map<std::string, std::vector<std::string>> collections;      // name -> listed tensors
  bool ended = false;                                               // training_job_end.ts seen

  // Saves a value; the step's mode step is the global step unless set otherwise.
  void Put(int64_t step, const std::string& tensor, FakeValue value,
           const std::string& worker = "worker_0");
};

struct FakeRequirement {
  uint32_t trial;
  std::string name;
  std::vector<int64_t> steps;
  bool regex;
  bool reductions_only = false;  // require_tensor_ex with LITMUS_REQUIRE_REDUCTIONS_ONLY (1.2)
};

class FakeHost;

}  // namespace litmus::testing

// The ABI's opaque per-call context, completed here: one per host call.
struct litmus_ctx {
  litmus::testing::FakeHost* host = nullptr;
  bool in_set_required_tensors = false;
  bool in_invoke = false;
  bool in_poll = false;  // add_action refuses a ctx marked with any of these three (not create)
  bool error_set = false;
  std::string error;
  // Arrays handed out during the call stay valid until the call ends (the ABI's borrow rule).
  std::deque<std::vector<int64_t>> int_arrays;
  std::deque<std::vector<litmus_str_t>> str_arrays;
};

namespace litmus::testing {

class FakeHost {
 public:
  FakeHost();
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;

  // The table handed to plugins; tests may shrink struct_size or change the ABI version.
  litmus_host_api_t& table() { return table_; }
  litmus_ctx NewCtx() { litmus_ctx ctx; ctx.host = this; return ctx; }

  std::vector<FakeTrial> trials = std::vector<FakeTrial>(1);
  std::vector<std::pair<int32_t, std::string>> logs;
  std::vector<FakeRequirement> requirements;
  int64_t violations = 0;
  std::map<std::string, std::string> details;
  // ABI 1.3: (series, tensor, step, value) in call order; series -> (fires_when -> threshold);
  // recommendations in call order.
  struct SeriesPoint {
    std::string series;
    std::string tensor;
    int64_t step = 0;
    double value = 0;
  };
  std::vector<SeriesPoint> series;
  std::map<std::string, std::map<int32_t, double>> thresholds;
  std::vector<std::string> recommendations;
  std::vector<std::string> actions;  // add_action texts
  std::map<std::string, int> calls;  // host function name -> number of calls

 private:
  litmus_host_api_t table_;
};

// Loads a plugin with dlopen (RTLD_NOW | RTLD_LOCAL) and calls its entry; the handle is never
// closed, as in the engine. Returns the entry's status; *api is set on success.
litmus_status_t LoadPlugin(const std::string& path, FakeHost& host, litmus_ctx* ctx,
                           const litmus_plugin_api_t** api, std::string* dl_error);

// The descriptor of a rule by name, or nullptr.
const litmus_rule_descriptor_t* FindRule(const litmus_plugin_api_t* api, std::string_view name);

std::string_view View(litmus_str_t text);

}  // namespace litmus::testing

#endif  // LITMUS_TESTS_ABI_FAKE_HOST_H_
