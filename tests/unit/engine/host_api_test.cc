// The host table, called directly with a litmus_ctx over the vendored smdebug fixture trials:
// catalog queries, borrowed tensor views, smdebug's exception texts, phase rules of
// require_tensor and report_*, and concurrent use by several contexts.
#include "plugin/host_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <thread>

#include "litmus/engine/trial.h"
#include "support/temp_dir.h"

namespace litmus {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<Trial> OpenFixture(const char* name) {
  TrialOptions options;
  options.training_end_delay_refresh_s = 0;
  auto trial = Trial::Open(Env::Default(), testing::FixturePath(name).string(), options);
  EXPECT_TRUE(trial.ok()) << trial.status().ToString();
  return trial.ok() ? std::move(trial).value() : nullptr;
}

nlohmann::json Expected(const char* name) {
  std::ifstream in(testing::FixturePath(std::string(name) + ".expected.json"));
  return nlohmann::json::parse(in);
}

litmus_str_t S(const char* text) { return {text, std::strlen(text)}; }
litmus_str_t S(const std::string& text) { return {text.data(), text.size()}; }
constexpr litmus_str_t kAnyWorker = {nullptr, 0};

std::vector<int64_t> Vec(const int64_t* data, size_t count) { return {data, data + count}; }
std::vector<std::string> Vec(const litmus_str_t* data, size_t count) {
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) out.emplace_back(data[i].data, data[i].size);
  return out;
}

class HostApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ddp_ = OpenFixture("pt_ddp_two_workers");
    ASSERT_NE(ddp_, nullptr);
    ctx_ = std::make_unique<litmus_ctx>("test-config", std::vector<Trial*>{ddp_.get()}, &report_);
    ctx_->BeginCall(PluginCallPhase::kInvoke);
  }

  litmus_tensor_view_t Value(const std::string& name, int64_t step, int32_t mode = LITMUS_MODE_GLOBAL,
                             litmus_str_t worker = kAnyWorker, litmus_status_t expect = LITMUS_OK) {
    litmus_tensor_view_t view{};
    view.struct_size = sizeof(view);
    EXPECT_EQ(host_->tensor_value(ctx(), 0, S(name), step, mode, worker, &view), expect) << ctx_->error;
    return view;
  }

  litmus_ctx_t* ctx() { return ctx_.get(); }

  const litmus_host_api_t* host_ = HostApi();
  std::unique_ptr<Trial> ddp_;
  RuleReport report_;
  std::unique_ptr<litmus_ctx> ctx_;
};

TEST_F(HostApiTest, TableHeader) {
  EXPECT_EQ(host_->struct_size, sizeof(litmus_host_api_t));
  EXPECT_EQ(host_->abi_major, 1u);
  EXPECT_EQ(host_->abi_minor, static_cast<uint32_t>(LITMUS_ABI_MINOR));
  EXPECT_EQ(host_->trial_count(ctx()), 1u);
  void* p = host_->alloc(100);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, 100);
  host_->free(p);
  host_->free(nullptr);
}

TEST_F(HostApiTest, StepsStepModeGlobalStepWorkers) {
  const int64_t* steps = nullptr;
  size_t count = 0;
  ASSERT_EQ(host_->steps(ctx(), 0, LITMUS_MODE_GLOBAL, &steps, &count), LITMUS_OK);
  EXPECT_THAT(Vec(steps, count), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13));
  const int64_t* eval = nullptr;
  ASSERT_EQ(host_->steps(ctx(), 0, LITMUS_MODE_EVAL, &eval, &count), LITMUS_OK);
  EXPECT_THAT(Vec(eval, count), ElementsAre(0, 1, 2, 3));
  // Borrowed results of earlier calls stay valid until the plugin call returns.
  EXPECT_THAT(Vec(steps, 14), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13));

  int32_t mode = 0;
  int64_t mode_step = -1;
  ASSERT_EQ(host_->step_mode(ctx(), 0, 7, &mode, &mode_step), LITMUS_OK);
  EXPECT_EQ(mode, LITMUS_MODE_TRAIN);
  EXPECT_EQ(mode_step, 5);
  ASSERT_EQ(host_->step_mode(ctx(), 0, 12, &mode, &mode_step), LITMUS_OK);
  EXPECT_EQ(mode, LITMUS_MODE_EVAL);
  EXPECT_EQ(mode_step, 2);
  EXPECT_EQ(host_->step_mode(ctx(), 0, 99, &mode, &mode_step), LITMUS_STEP_UNAVAILABLE);
  EXPECT_EQ(ctx_->error, "Step 99 of mode GLOBAL is not available as it was not saved");

  int64_t global = -1;
  ASSERT_EQ(host_->global_step(ctx(), 0, LITMUS_MODE_EVAL, 2, &global), LITMUS_OK);
  EXPECT_EQ(global, 12);
  ASSERT_EQ(host_->global_step(ctx(), 0, LITMUS_MODE_TRAIN, 5, &global), LITMUS_OK);
  EXPECT_EQ(global, 7);
  ASSERT_EQ(host_->global_step(ctx(), 0, LITMUS_MODE_GLOBAL, 3, &global), LITMUS_OK);
  EXPECT_EQ(global, 3);
  EXPECT_EQ(host_->global_step(ctx(), 0, LITMUS_MODE_EVAL, 4, &global), LITMUS_STEP_UNAVAILABLE);
  EXPECT_EQ(ctx_->error, "Step 4 of mode EVAL is not available as it was not saved");
  EXPECT_EQ(host_->global_step(ctx(), 0, LITMUS_MODE_GLOBAL, 14, &global), LITMUS_STEP_UNAVAILABLE);

  const litmus_str_t* workers = nullptr;
  ASSERT_EQ(host_->workers(ctx(), 0, &workers, &count), LITMUS_OK);
  EXPECT_THAT(Vec(workers, count), ElementsAre("worker_0", "worker_1"));
}

TEST_F(HostApiTest, OtherTrials) {
  auto synthetic = OpenFixture("synthetic_dtypes");
  ASSERT_NE(synthetic, nullptr);
  litmus_ctx two("two-trials", {ddp_.get(), synthetic.get()}, nullptr);
  two.BeginCall(PluginCallPhase::kInvoke);
  EXPECT_EQ(host_->trial_count(&two), 2u);
  const int64_t* steps = nullptr;
  size_t count = 0;
  ASSERT_EQ(host_->steps(&two, 1, LITMUS_MODE_GLOBAL, &steps, &count), LITMUS_OK);
  EXPECT_THAT(Vec(steps, count), ElementsAre(0, 1, 2, 5));
  ASSERT_EQ(host_->steps(&two, 0, LITMUS_MODE_GLOBAL, &steps, &count), LITMUS_OK);
  EXPECT_EQ(count, 14u);
  EXPECT_EQ(host_->steps(&two, 2, LITMUS_MODE_GLOBAL, &steps, &count), LITMUS_INVALID_ARGUMENT);
  EXPECT_THAT(two.error, HasSubstr("the rule has 2 trial(s)"));
}

TEST_F(HostApiTest, InvalidArguments) {
  const int64_t* steps = nullptr;
  size_t count = 0;
  EXPECT_EQ(host_->steps(ctx(), 0, 9, &steps, &count), LITMUS_INVALID_ARGUMENT);
  EXPECT_THAT(ctx_->error, HasSubstr("steps: invalid mode 9"));
  EXPECT_EQ(host_->steps(ctx(), 1, LITMUS_MODE_GLOBAL, &steps, &count), LITMUS_INVALID_ARGUMENT);
  EXPECT_THAT(ctx_->error, HasSubstr("steps: trial index 1 out of range (the rule has 1 trial(s)"));
  EXPECT_EQ(host_->steps(ctx(), 0, LITMUS_MODE_GLOBAL, nullptr, &count), LITMUS_INVALID_ARGUMENT);
  EXPECT_EQ(host_->steps(nullptr, 0, LITMUS_MODE_GLOBAL, &steps, &count), LITMUS_INVALID_ARGUMENT);
  litmus_tensor_view_t view{};
  view.struct_size = sizeof(view);
  const litmus_str_t bad{nullptr, 3};
  EXPECT_EQ(host_->tensor_value(ctx(), 0, bad, 0, LITMUS_MODE_GLOBAL, kAnyWorker, &view), LITMUS_INVALID_ARGUMENT);
  EXPECT_THAT(ctx_->error, HasSubstr("tensor_value: name has NULL data and size 3"));
  double out = 0;
  EXPECT_EQ(host_->tensor_reduction(ctx(), 0, S("Net_fc1.bias"), 0, LITMUS_MODE_GLOBAL, 9, 0, kAnyWorker, &out),
            LITMUS_INVALID_ARGUMENT);
  EXPECT_THAT(ctx_->error, HasSubstr("invalid reduction 9"));
}

TEST_F(HostApiTest, TensorNamesByQuery) {
  auto names = [&](litmus_tensor_query_t query, litmus_status_t expect = LITMUS_OK) {
    query.struct_size = query.struct_size == 0 ? sizeof(query) : query.struct_size;
    const litmus_str_t* out = nullptr;
    size_t count = 0;
    EXPECT_EQ(host_->tensor_names(ctx(), 0, &query, &out, &count), expect) << ctx_->error;
    return Vec(out, count);
  };
  litmus_tensor_query_t all{};
  all.step = -1;
  EXPECT_EQ(names(all), ddp_->TensorNames());
  EXPECT_EQ(names(all).size(), 9u);
  const litmus_str_t* out = nullptr;
  size_t count = 0;
  ASSERT_EQ(host_->tensor_names(ctx(), 0, nullptr, &out, &count), LITMUS_OK);  // NULL query: everything
  EXPECT_EQ(count, 9u);

  litmus_tensor_query_t gradients = all;
  gradients.collection = S("gradients");
  EXPECT_THAT(names(gradients), ElementsAre("gradient/Net_fc1.bias", "gradient/Net_fc1.weight", "gradient/Net_fc2.bias",
                                            "gradient/Net_fc2.weight"));
  litmus_tensor_query_t fc1 = all;
  fc1.regex = S("fc1");
  EXPECT_THAT(names(fc1),
              ElementsAre("Net_fc1.bias", "Net_fc1.weight", "gradient/Net_fc1.bias", "gradient/Net_fc1.weight"));
  litmus_tensor_query_t both = gradients;
  both.regex = S("fc1");
  EXPECT_THAT(names(both), ElementsAre("gradient/Net_fc1.bias", "gradient/Net_fc1.weight"));

  litmus_tensor_query_t at_eval_step = all;
  at_eval_step.step = 5;
  EXPECT_THAT(names(at_eval_step), ElementsAre("CrossEntropyLoss_output_0", "Net_fc1.bias", "Net_fc1.weight",
                                               "Net_fc2.bias", "Net_fc2.weight"));
  // A collection at a step: its members saved at that step (rules ask so at every step).
  for (const int64_t step : {0, 5, 7, 1000}) {
    litmus_tensor_query_t at_step = all;
    at_step.step = step;
    litmus_tensor_query_t gradients_at_step = gradients;
    gradients_at_step.step = step;
    std::vector<std::string> expected;
    const std::vector<std::string> members = names(gradients);
    const std::vector<std::string> saved = names(at_step);
    std::set_intersection(members.begin(), members.end(), saved.begin(), saved.end(), std::back_inserter(expected));
    EXPECT_EQ(names(gradients_at_step), expected) << "step " << step;
    gradients_at_step.mode = LITMUS_MODE_GLOBAL;  // every mode: the same
    EXPECT_EQ(names(gradients_at_step), expected) << "step " << step;
    litmus_tensor_query_t unknown_at_step = at_step;
    unknown_at_step.collection = S("no_such_collection");
    EXPECT_TRUE(names(unknown_at_step).empty()) << "step " << step;
    // Every other filter at a step: what the filter selects, saved at that step.
    const auto intersection = [](std::vector<std::string> a, const std::vector<std::string>& b) {
      std::vector<std::string> out;
      std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
      return out;
    };
    litmus_tensor_query_t eval_only = all;
    eval_only.mode = LITMUS_MODE_EVAL;
    litmus_tensor_query_t train_fc1 = fc1;
    train_fc1.mode = LITMUS_MODE_TRAIN;
    for (const litmus_tensor_query_t& filter : {fc1, both, eval_only, train_fc1}) {
      litmus_tensor_query_t filter_at_step = filter;
      filter_at_step.step = step;
      EXPECT_EQ(names(filter_at_step), intersection(names(filter), saved)) << "step " << step;
    }
  }
  litmus_tensor_query_t train_fc1_anywhere = fc1;
  train_fc1_anywhere.mode = LITMUS_MODE_TRAIN;
  EXPECT_THAT(names(train_fc1_anywhere),
              ElementsAre("Net_fc1.bias", "Net_fc1.weight", "gradient/Net_fc1.bias", "gradient/Net_fc1.weight"));
  litmus_tensor_query_t eval_gradients = gradients;
  eval_gradients.mode = LITMUS_MODE_EVAL;  // gradients are saved in TRAIN steps only
  EXPECT_TRUE(names(eval_gradients).empty());
  litmus_tensor_query_t fc1_at_eval_step = fc1;
  fc1_at_eval_step.step = 5;
  EXPECT_THAT(names(fc1_at_eval_step), ElementsAre("Net_fc1.bias", "Net_fc1.weight"));
  litmus_tensor_query_t gradients_at_0 = gradients;
  gradients_at_0.step = 0;
  EXPECT_EQ(names(gradients_at_0).size(), 4u);
  litmus_tensor_query_t gradients_at_5 = gradients;
  gradients_at_5.step = 5;  // an EVAL step: no gradients saved
  EXPECT_TRUE(names(gradients_at_5).empty());
  litmus_tensor_query_t nothing_at_1000 = all;
  nothing_at_1000.step = 1000;  // not a step of the trial
  EXPECT_TRUE(names(nothing_at_1000).empty());

  litmus_tensor_query_t eval = all;
  eval.mode = LITMUS_MODE_EVAL;
  EXPECT_EQ(names(eval), ddp_->TensorNamesForMode(Mode::kEval));
  EXPECT_EQ(names(eval).size(), 5u);
  litmus_tensor_query_t global = all;
  global.mode = LITMUS_MODE_GLOBAL;  // every mode, as smdebug's default
  EXPECT_EQ(names(global).size(), 9u);

  litmus_tensor_query_t unknown = all;
  unknown.collection = S("no_such_collection");
  EXPECT_TRUE(names(unknown).empty());
  litmus_tensor_query_t bad_regex = all;
  bad_regex.regex = S("(unclosed");
  names(bad_regex, LITMUS_INVALID_ARGUMENT);
  EXPECT_THAT(ctx_->error, HasSubstr("tensor_names: "));

  // An older/smaller query struct: fields beyond its struct_size do not filter.
  litmus_tensor_query_t short_query = both;
  short_query.struct_size = offsetof(litmus_tensor_query_t, regex) + sizeof(litmus_str_t) - 1;
  EXPECT_EQ(names(short_query).size(), 4u);  // collection only
}

TEST_F(HostApiTest, TensorSteps) {
  const int64_t* steps = nullptr;
  size_t count = 0;
  ASSERT_EQ(host_->tensor_steps(ctx(), 0, S("gradient/Net_fc1.weight"), LITMUS_MODE_GLOBAL, &steps, &count), LITMUS_OK);
  EXPECT_THAT(Vec(steps, count), ElementsAre(0, 1, 2, 3, 4, 7, 8, 9, 10, 11));
  ASSERT_EQ(host_->tensor_steps(ctx(), 0, S("gradient/Net_fc1.weight"), LITMUS_MODE_TRAIN, &steps, &count), LITMUS_OK);
  EXPECT_THAT(Vec(steps, count), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));
  ASSERT_EQ(host_->tensor_steps(ctx(), 0, S("gradient/Net_fc1.weight"), LITMUS_MODE_EVAL, &steps, &count), LITMUS_OK);
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(host_->tensor_steps(ctx(), 0, S("nope"), LITMUS_MODE_GLOBAL, &steps, &count), LITMUS_TENSOR_UNAVAILABLE);
  EXPECT_EQ(ctx_->error, "Tensor nope was not saved.");
}

TEST_F(HostApiTest, TensorValueView) {
  const nlohmann::json expected = Expected("pt_ddp_two_workers");
  const litmus_tensor_view_t view = Value("Net_fc2.bias", 7);
  EXPECT_EQ(view.struct_size, sizeof(litmus_tensor_view_t));
  EXPECT_EQ(view.dtype, LITMUS_DTYPE_FLOAT32);
  ASSERT_EQ(view.rank, 1u);
  EXPECT_EQ(view.shape[0], 4);
  EXPECT_EQ(view.num_elements, 4);
  EXPECT_EQ(view.byte_size, 16u);
  EXPECT_EQ(view.strings, nullptr);
  EXPECT_EQ(view.step, 7);
  EXPECT_EQ(view.mode, LITMUS_MODE_TRAIN);
  EXPECT_EQ(view.mode_step, 5);
  ASSERT_NE(view.data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(view.data) % alignof(float), 0u);
  const auto& values = expected["tensors"]["Net_fc2.bias"]["per_step"]["7"]["by_worker"]["worker_0"]["value"]["values"];
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(static_cast<const float*>(view.data)[i], static_cast<float>(values[i].get<double>())) << i;
  }
  // Zero copy: the view points into the tensor the trial decoded (kept alive by the context).
  auto direct = ddp_->Value("Net_fc2.bias", 7);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(view.data, (*direct)->bytes().data());

  // A mode step of TRAIN reads the same global step.
  const litmus_tensor_view_t by_mode = Value("Net_fc2.bias", 5, LITMUS_MODE_TRAIN);
  EXPECT_EQ(by_mode.step, 7);
  EXPECT_EQ(by_mode.data, view.data);

  // Workers: gradients are each worker's own.
  const litmus_tensor_view_t w0 = Value("gradient/Net_fc1.weight", 0, LITMUS_MODE_GLOBAL, S("worker_0"));
  const litmus_tensor_view_t w1 = Value("gradient/Net_fc1.weight", 0, LITMUS_MODE_GLOBAL, S("worker_1"));
  const litmus_tensor_view_t first = Value("gradient/Net_fc1.weight", 0);
  ASSERT_EQ(w0.byte_size, 32u * 16u * 4u);
  EXPECT_EQ(first.data, w0.data);
  EXPECT_NE(std::memcmp(w0.data, w1.data, w0.byte_size), 0);
  Value("gradient/Net_fc1.weight", 0, LITMUS_MODE_GLOBAL, S("worker_9"), LITMUS_INVALID_WORKER);
  EXPECT_EQ(ctx_->error, "Invalid Worker: worker_9");
}

TEST_F(HostApiTest, TensorValueWritesNoMoreThanTheCallersStructSize) {
  constexpr uint32_t kShort = offsetof(litmus_tensor_view_t, rank);
  litmus_tensor_view_t view;
  std::memset(&view, 0xAB, sizeof(view));
  view.struct_size = kShort;
  ASSERT_EQ(host_->tensor_value(ctx(), 0, S("Net_fc2.bias"), 7, LITMUS_MODE_GLOBAL, kAnyWorker, &view), LITMUS_OK);
  EXPECT_EQ(view.struct_size, kShort);
  EXPECT_EQ(view.dtype, LITMUS_DTYPE_FLOAT32);
  EXPECT_EQ(view.shape[0], 4);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&view);
  for (size_t i = kShort; i < sizeof(view); ++i) EXPECT_EQ(bytes[i], 0xAB) << "byte " << i;
}

TEST_F(HostApiTest, SmdebugErrorTexts) {
  // Gradients are saved in TRAIN steps only: global step 5 is EVAL.
  Value("gradient/Net_fc1.weight", 5, LITMUS_MODE_GLOBAL, kAnyWorker, LITMUS_TENSOR_UNAVAILABLE_FOR_STEP);
  EXPECT_EQ(
      ctx_->error,
      "Value for tensor gradient/Net_fc1.weight is not available for step 5 with mode GLOBAL as it was not saved.");
  Value("gradient/Net_fc1.weight", 0, LITMUS_MODE_EVAL, kAnyWorker, LITMUS_TENSOR_UNAVAILABLE_FOR_STEP);
  EXPECT_EQ(ctx_->error,
            "Value for tensor gradient/Net_fc1.weight is not available for step 0 with mode EVAL as it was not saved.");
  Value("nope", 0, LITMUS_MODE_GLOBAL, kAnyWorker, LITMUS_TENSOR_UNAVAILABLE);
  EXPECT_EQ(ctx_->error, "Tensor nope was not saved.");
  Value("Net_fc1.bias", 100, LITMUS_MODE_GLOBAL, kAnyWorker, LITMUS_NO_MORE_DATA);
  EXPECT_EQ(ctx_->error, "Looking for step 100 of mode GLOBAL and reached end of training. Max step available is 13");

  double out = 0;
  EXPECT_EQ(host_->tensor_reduction(ctx(), 0, S("gradient/Net_fc1.weight"), 5, LITMUS_MODE_GLOBAL,
                                    LITMUS_REDUCTION_MEAN, 1, kAnyWorker, &out),
            LITMUS_TENSOR_UNAVAILABLE_FOR_STEP);
  const int64_t* shape = nullptr;
  uint32_t rank = 0;
  EXPECT_EQ(host_->tensor_shape(ctx(), 0, S("nope"), 0, LITMUS_MODE_GLOBAL, kAnyWorker, &shape, &rank),
            LITMUS_TENSOR_UNAVAILABLE);

  // synthetic_dtypes saved steps 0, 1, 2 and 5: step 3 was skipped.
  auto synthetic = OpenFixture("synthetic_dtypes");
  ASSERT_NE(synthetic, nullptr);
  litmus_ctx other("synthetic", {synthetic.get()}, nullptr);
  other.BeginCall(PluginCallPhase::kInvoke);
  litmus_tensor_view_t view{};
  view.struct_size = sizeof(view);
  EXPECT_EQ(host_->tensor_value(&other, 0, S("dtypes/float32"), 3, LITMUS_MODE_GLOBAL, kAnyWorker, &view),
            LITMUS_STEP_UNAVAILABLE);
  EXPECT_EQ(other.error, "Step 3 of mode GLOBAL is not available as it was not saved");

  // An in-progress trial: step 9 is still being written.
  auto partial = OpenFixture("pt_run_partial");
  ASSERT_NE(partial, nullptr);
  litmus_ctx running("partial", {partial.get()}, nullptr);
  running.BeginCall(PluginCallPhase::kInvoke);
  EXPECT_EQ(host_->tensor_value(&running, 0, S("MLP_fc1.bias"), 9, LITMUS_MODE_GLOBAL, kAnyWorker, &view),
            LITMUS_NOT_YET_AVAILABLE);
  EXPECT_EQ(running.error, "Step 9 of mode GLOBAL not yet available");
}

TEST_F(HostApiTest, StringTensor) {
  auto synthetic = OpenFixture("synthetic_dtypes");
  ASSERT_NE(synthetic, nullptr);
  litmus_ctx ctx("synthetic", {synthetic.get()}, nullptr);
  ctx.BeginCall(PluginCallPhase::kInvoke);
  litmus_tensor_view_t view{};
  view.struct_size = sizeof(view);
  ASSERT_EQ(host_->tensor_value(&ctx, 0, S("exotic/string"), 0, LITMUS_MODE_GLOBAL, kAnyWorker, &view), LITMUS_OK)
      << ctx.error;
  EXPECT_EQ(view.dtype, LITMUS_DTYPE_STRING);
  EXPECT_EQ(view.data, nullptr);
  ASSERT_EQ(view.num_elements, 3);
  ASSERT_NE(view.strings, nullptr);
  EXPECT_THAT(Vec(view.strings, 3), ElementsAre("alpha", "beta", "gamma delta"));
}

TEST_F(HostApiTest, ReductionAndShape) {
  const nlohmann::json expected = Expected("pt_ddp_two_workers");
  const auto& by_worker = expected["tensors"]["gradient/Net_fc1.weight"]["per_step"]["0"]["by_worker"];
  for (const char* worker : {"worker_0", "worker_1"}) {
    double out = 0;
    ASSERT_EQ(host_->tensor_reduction(ctx(), 0, S("gradient/Net_fc1.weight"), 0, LITMUS_MODE_GLOBAL,
                                      LITMUS_REDUCTION_MEAN, 1, S(worker), &out),
              LITMUS_OK)
        << ctx_->error;
    const double want = by_worker[worker]["reductions"]["abs_mean"]["value"].get<double>();
    EXPECT_NEAR(out, want, 1e-6 * std::abs(want)) << worker;
  }
  const int64_t* shape = nullptr;
  uint32_t rank = 0;
  ASSERT_EQ(
      host_->tensor_shape(ctx(), 0, S("gradient/Net_fc1.weight"), 0, LITMUS_MODE_GLOBAL, kAnyWorker, &shape, &rank),
      LITMUS_OK);
  ASSERT_EQ(rank, 2u);
  EXPECT_EQ(shape[0], 32);
  EXPECT_EQ(shape[1], 16);
}

TEST_F(HostApiTest, RequireTensorOnlyInsideSetRequiredTensors) {
  const int64_t steps[] = {3, 1, 3};
  EXPECT_EQ(host_->require_tensor(ctx(), 0, S("Net_fc1.bias"), steps, 3, 0), LITMUS_INVALID_ARGUMENT);
  EXPECT_EQ(ctx_->error, "require_tensor is only valid inside set_required_tensors");

  std::vector<TensorRequirement> reqs;
  ctx_->BeginCall(PluginCallPhase::kSetRequiredTensors, &reqs);
  ASSERT_EQ(host_->require_tensor(ctx(), 0, S("Net_fc1.bias"), steps, 3, 0), LITMUS_OK);
  const int64_t more[] = {0};
  ASSERT_EQ(host_->require_tensor(ctx(), 0, S("Net_fc1.bias"), more, 1, 0), LITMUS_OK);
  ASSERT_EQ(host_->require_tensor(ctx(), 0, S("^gradient/.*bias$"), more, 1, 1), LITMUS_OK);
  ASSERT_EQ(host_->require_tensor(ctx(), 0, S("matches_nothing"), more, 1, 1), LITMUS_OK);
  EXPECT_EQ(host_->require_tensor(ctx(), 0, S("nope"), more, 1, 0), LITMUS_TENSOR_UNAVAILABLE);
  EXPECT_EQ(ctx_->error, "Tensor nope was not saved.");
  EXPECT_EQ(host_->require_tensor(ctx(), 0, S("(bad"), more, 1, 1), LITMUS_INVALID_ARGUMENT);
  EXPECT_EQ(host_->require_tensor(ctx(), 1, S("Net_fc1.bias"), more, 1, 0), LITMUS_INVALID_ARGUMENT);
  EXPECT_EQ(host_->require_tensor(ctx(), 0, S("Net_fc1.bias"), nullptr, 2, 0), LITMUS_INVALID_ARGUMENT);
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].trial, 0u);
  EXPECT_EQ(reqs[0].name, "Net_fc1.bias");
  EXPECT_THAT(reqs[0].steps, ElementsAre(0, 1, 3));
  EXPECT_EQ(reqs[1].name, "gradient/Net_fc1.bias");
  EXPECT_EQ(reqs[2].name, "gradient/Net_fc2.bias");
  EXPECT_THAT(reqs[2].steps, ElementsAre(0));

  // report_* are ignored outside invoke_at_step.
  host_->report_violations(ctx(), 5);
  EXPECT_EQ(report_.violations, 0);
  ctx_->EndCall();
  EXPECT_EQ(host_->require_tensor(ctx(), 0, S("Net_fc1.bias"), more, 1, 0), LITMUS_INVALID_ARGUMENT);
}

// A call that requires many tensors of two trials lists each (trial, name) once, with all its
// steps.
TEST_F(HostApiTest, ManyRequirementsListEachTensorOnce) {
  std::vector<std::string> names;
  for (int i = 0; i < 50; ++i) names.push_back("tensor_" + std::to_string(i));
  std::vector<TensorRequirement> reqs;
  ctx_->BeginCall(PluginCallPhase::kSetRequiredTensors, &reqs);
  for (const int64_t step : {5, 2, 5}) {
    for (const uint32_t trial : {0u, 1u}) {
      for (const std::string& name : names) RecordRequirement(ctx_.get(), trial, name, &step, 1, false);
    }
  }
  ctx_->EndCall();
  ASSERT_EQ(reqs.size(), 100u);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(reqs[i].trial, i < 50 ? 0u : 1u);
    EXPECT_EQ(reqs[i].name, names[i % 50]);
    EXPECT_THAT(reqs[i].steps, ElementsAre(2, 5)) << reqs[i].name;
  }
  // The next call starts from nothing (the index forgets the last call's positions).
  std::vector<TensorRequirement> next;
  ctx_->BeginCall(PluginCallPhase::kSetRequiredTensors, &next);
  const int64_t step = 7;
  for (const size_t i : {40u, 3u, 40u}) RecordRequirement(ctx_.get(), 1, names[i], &step, 1, false);
  ctx_->EndCall();
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].name, names[40]);
  EXPECT_EQ(next[1].name, names[3]);
  EXPECT_THAT(next[0].steps, ElementsAre(7));
}

// ABI 1.2: require_tensor_ex's flags. A name required both with and without reductions_only
// needs its raw value; unknown flags are refused.
TEST_F(HostApiTest, RequireTensorExFlags) {
  const int64_t step[] = {1};
  std::vector<TensorRequirement> reqs;
  ctx_->BeginCall(PluginCallPhase::kSetRequiredTensors, &reqs);
  ASSERT_EQ(host_->require_tensor_ex(ctx(), 0, S("Net_fc1.bias"), step, 1, LITMUS_REQUIRE_REDUCTIONS_ONLY), LITMUS_OK);
  ASSERT_EQ(host_->require_tensor_ex(ctx(), 0, S("^gradient/.*bias$"), step, 1,
                                     LITMUS_REQUIRE_REGEX | LITMUS_REQUIRE_REDUCTIONS_ONLY),
            LITMUS_OK);
  ASSERT_EQ(host_->require_tensor_ex(ctx(), 0, S("gradient/Net_fc2.bias"), step, 1, 0), LITMUS_OK);
  EXPECT_EQ(host_->require_tensor_ex(ctx(), 0, S("Net_fc1.bias"), step, 1, 4), LITMUS_INVALID_ARGUMENT);
  EXPECT_EQ(ctx_->error, "require_tensor_ex: unknown flags 4");
  EXPECT_EQ(host_->require_tensor_ex(ctx(), 0, S("nope"), step, 1, LITMUS_REQUIRE_REDUCTIONS_ONLY),
            LITMUS_TENSOR_UNAVAILABLE);
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].name, "Net_fc1.bias");
  EXPECT_TRUE(reqs[0].reductions_only);
  EXPECT_EQ(reqs[1].name, "gradient/Net_fc1.bias");
  EXPECT_TRUE(reqs[1].reductions_only);
  EXPECT_EQ(reqs[2].name, "gradient/Net_fc2.bias");
  EXPECT_FALSE(reqs[2].reductions_only) << "required by regex with the flag, then by name without it";
  // require_tensor never asks for reductions only.
  std::vector<TensorRequirement> plain;
  ctx_->EndCall();
  ctx_->BeginCall(PluginCallPhase::kSetRequiredTensors, &plain);
  ASSERT_EQ(host_->require_tensor(ctx(), 0, S("Net_fc1.bias"), step, 1, 0), LITMUS_OK);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_FALSE(plain[0].reductions_only);
  ctx_->EndCall();
}

TEST_F(HostApiTest, ReportAndSetError) {
  host_->report_violations(ctx(), 2);
  host_->report_violations(ctx(), 3);
  host_->report_violations(ctx(), -1);  // ignored
  EXPECT_EQ(report_.violations, 5);
  host_->report_detail(ctx(), S("number"), S(" 1.5 "));
  host_->report_detail(ctx(), S("object"), S("{\"a\": [1, 2]}"));
  host_->report_detail(ctx(), S("text"), S("not json"));
  host_->report_detail(ctx(), S("number"), S("2"));  // replaces
  EXPECT_EQ(report_.details.Json().at("number"), "2");
  EXPECT_EQ(report_.details.Json().at("object"), "{\"a\":[1,2]}");
  EXPECT_EQ(report_.details.Json().at("text"), "\"not json\"");

  host_->set_error(ctx(), "first", 5);
  host_->set_error(ctx(), "second text", 6);
  EXPECT_TRUE(ctx_->has_error);
  EXPECT_EQ(ctx_->error, "second");
  host_->log(ctx(), LITMUS_LOG_DEBUG, "a log line", 10);
  host_->log(ctx(), 99, "level out of range", 18);
  ctx_->EndCall();  // a new call starts clean
  EXPECT_FALSE(ctx_->has_error);
  EXPECT_TRUE(ctx_->error.empty());
}

// ABI 1.1.
TEST_F(HostApiTest, AddActionOnlyInsideCreateAndOnlyJsonObjects) {
  const std::string stop = R"({"name": "stoptraining", "training_job_prefix": "job-1"})";
  const std::string both = R"([{"name": "email", "endpoint": "a@b.cd"}, {"name": "sms", "endpoint": "+1"}])";
  EXPECT_EQ(host_->add_action(ctx(), S(stop)), LITMUS_INVALID_ARGUMENT);  // SetUp's phase: invoke
  EXPECT_EQ(ctx_->error, "add_action is only valid inside create");
  ctx_->BeginCall(PluginCallPhase::kCreate);
  EXPECT_EQ(host_->add_action(ctx(), S(stop)), LITMUS_OK) << ctx_->error;
  EXPECT_EQ(host_->add_action(ctx(), S(both)), LITMUS_OK) << ctx_->error;
  for (const char* bad : {"stoptraining", "[]", "[1]", "{\"name\": ", "\"text\""}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(host_->add_action(ctx(), S(bad)), LITMUS_INVALID_ARGUMENT);
    EXPECT_THAT(ctx_->error, HasSubstr("add_action: expected a JSON object"));
  }
  const litmus_str_t null_data = {nullptr, 3};
  EXPECT_EQ(host_->add_action(ctx(), null_data), LITMUS_INVALID_ARGUMENT);
  ctx_->EndCall();  // the actions outlive the call
  EXPECT_THAT(ctx_->added_actions, ElementsAre(stop, both));
}

TEST_F(HostApiTest, ReportInsideOnPollButNotInSetRequiredTensors) {
  ctx_->BeginCall(PluginCallPhase::kPoll);
  host_->report_violations(ctx(), 1);
  host_->report_detail(ctx(), S("seconds"), S("3"));
  std::vector<TensorRequirement> requirements;
  ctx_->BeginCall(PluginCallPhase::kSetRequiredTensors, &requirements);
  host_->report_violations(ctx(), 10);  // ignored with a warning
  EXPECT_EQ(report_.violations, 1);
  EXPECT_EQ(report_.details.Json().at("seconds"), "3");
}

// ABI 1.3: what a rule watched, with the mode of each step from the rule's base trial.
TEST_F(HostApiTest, ReportSeriesThresholdAndRecommendation) {
  host_->report_series(ctx(), S("mean |g|"), S("gradient/a"), 0, 0.5);
  host_->report_series(ctx(), S("mean |g|"), S("gradient/a"), 1, 0.25);
  host_->report_series(ctx(), S("loss change"), {nullptr, 0}, 1, -3.0);
  host_->report_series(ctx(), S(""), S("t"), 1, 1.0);          // no series name: ignored
  host_->report_series(ctx(), S("x"), {nullptr, 2}, 1, 1.0);   // NULL tensor with a size: ignored
  host_->report_threshold(ctx(), S("mean |g|"), 1e-7, LITMUS_FIRES_BELOW);
  host_->report_threshold(ctx(), S("mean |g|"), 1e-6, LITMUS_FIRES_BELOW);  // replaces that side
  host_->report_threshold(ctx(), S("mean |g|"), 10, LITMUS_FIRES_ABOVE);
  host_->report_threshold(ctx(), S("mean |g|"), 5, 42);  // unknown side: ignored
  host_->report_recommendation(ctx(), S("Lower the learning rate."));
  host_->report_recommendation(ctx(), S("Lower the learning rate."));  // kept once
  const SeriesStore& series = report_.series;
  ASSERT_EQ(series.series().size(), 2u);
  const SeriesStore::Series& g = series.series()[0];
  EXPECT_EQ(g.name, "mean |g|");
  EXPECT_EQ(g.tensor, "gradient/a");
  ASSERT_EQ(g.buckets.size(), 2u);
  EXPECT_EQ(g.buckets[1].first_step, 1);
  EXPECT_EQ(g.buckets[1].first_value, 0.25);
  EXPECT_EQ(g.buckets[0].mode, LITMUS_MODE_TRAIN);  // pt_ddp_two_workers: TRAIN steps
  EXPECT_EQ(series.series()[1].tensor, "");
  const auto& sides = series.thresholds().at("mean |g|");
  ASSERT_EQ(sides.size(), 2u);
  EXPECT_EQ(sides[0].fires_when, LITMUS_FIRES_ABOVE);
  EXPECT_EQ(sides[0].value, 10);
  EXPECT_EQ(sides[1].value, 1e-6);
  EXPECT_THAT(series.recommendations(), ElementsAre("Lower the learning rate."));

  // Thresholds and recommendations also in create; series only in invoke_at_step and on_poll.
  ctx_->BeginCall(PluginCallPhase::kCreate);
  host_->report_threshold(ctx(), S("ratio"), 0.1, LITMUS_FIRES_ABOVE);
  host_->report_series(ctx(), S("ratio"), {nullptr, 0}, 0, 1.0);  // ignored with a warning
  EXPECT_TRUE(series.thresholds().contains("ratio"));
  EXPECT_EQ(series.series().size(), 2u);
  std::vector<TensorRequirement> requirements;
  ctx_->BeginCall(PluginCallPhase::kSetRequiredTensors, &requirements);
  host_->report_recommendation(ctx(), S("ignored"));
  EXPECT_EQ(series.recommendations().size(), 1u);
}

TEST_F(HostApiTest, ContextsOfDifferentInstancesRunConcurrently) {
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      litmus_ctx ctx("thread", {ddp_.get()}, nullptr);
      for (int round = 0; round < 20; ++round) {
        ctx.BeginCall(PluginCallPhase::kInvoke);
        for (int64_t step = 0; step < 14; ++step) {
          litmus_tensor_view_t view{};
          view.struct_size = sizeof(view);
          const litmus_status_t s =
              host_->tensor_value(&ctx, 0, S("Net_fc1.weight"), step, LITMUS_MODE_GLOBAL, kAnyWorker, &view);
          if (s != LITMUS_OK || view.num_elements != 32 * 16) ++failures[t];
          const litmus_str_t* names = nullptr;
          size_t count = 0;
          if (host_->tensor_names(&ctx, 0, nullptr, &names, &count) != LITMUS_OK || count != 9) ++failures[t];
        }
        ctx.EndCall();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_THAT(failures, ::testing::Each(0));
}

}  // namespace
}  // namespace litmus
