// simulated_training: trains a tiny MLP on synthetic regression data and records the run as an
// smdebug-compatible trial with litmus::writer, the way smdebug's PyTorch hook names things
// (MLP_fc1.weight, gradient/MLP_fc1.weight, MSELoss_output_0). Scenarios make the training
// healthy, exploding (NaN/inf), vanishing (tiny gradients) or flat (loss does not decrease).
// With --workers N, N threads write N workers' files, as the ranks of a distributed job would.
// With --tensorboard the writer also exports TensorBoard summaries (loss scalars, histograms of
// weights, biases and gradients) to OUT_DIR/tensorboard or --tensorboard-dir. With
// --feed-all-rules each step also saves what the other built-in rules read (SaveRuleFeeds), so
// that one trial feeds all 20 (a benchmark shape, bench/run-bench.sh).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "litmus/writer/writer.h"
#include "mlp.h"

namespace {

using simulated_training::Activation;
using simulated_training::Mlp;

constexpr int kInputs = 16;
constexpr int kBatch = 32;

struct Scenario {
  Activation activation;
  float init_scale;     // multiplies the He-init standard deviation
  float learning_rate;
};

// exploding: a far too large learning rate makes MSE training diverge until float32 overflows
// (inf, then NaN). vanishing: sigmoid layers with tiny weights make the first layers' gradients
// ~1e-9. flat: a learning rate of 0, so the training loss only fluctuates with the batches and
// the validation loss stays the same. docs/examples.md lists what each scenario triggers.
const std::map<std::string, Scenario> kScenarios = {
    {"healthy", {Activation::kRelu, 1.0f, 0.01f}},
    {"exploding", {Activation::kRelu, 1.0f, 1.3f}},
    {"vanishing", {Activation::kSigmoid, 1e-3f, 0.001f}},
    {"flat", {Activation::kRelu, 1.0f, 0.0f}},
};

struct Config {
  std::string out_dir;
  std::string scenario = "healthy";
  int workers = 1;
  int steps = 60;        // TRAIN steps per worker (12 EVAL steps: LossNotDecreasing compares)
  int eval_every = 10;   // an EVAL phase after every this many TRAIN steps (0 = never)
  int eval_steps = 2;    // EVAL steps per phase
  unsigned seed = 1;
  bool tensorboard = false;
  std::string tensorboard_dir;  // "" = OUT_DIR/tensorboard
  bool feed_all_rules = false;
};

// The synthetic task: y = tanh(a.x) + 0.5 b.x + noise, with a and b fixed by the seed.
class Data {
 public:
  Data(unsigned task_seed, unsigned stream_seed) : rng_(stream_seed) {
    std::mt19937 task(task_seed);
    std::normal_distribution<float> n(0.0f, 1.0f / std::sqrt(static_cast<float>(kInputs)));
    for (int i = 0; i < kInputs; ++i) {
      a_.push_back(n(task));
      b_.push_back(n(task));
    }
  }
  // `tanh_input` (optional): each sample's a.x, the input of the task's own tanh.
  void Batch(std::vector<float>* x, std::vector<float>* y, std::vector<float>* tanh_input = nullptr) {
    std::normal_distribution<float> n(0.0f, 1.0f);
    x->resize(kBatch * kInputs);
    y->resize(kBatch);
    if (tanh_input != nullptr) tanh_input->resize(kBatch);
    for (int s = 0; s < kBatch; ++s) {
      float ax = 0, bx = 0;
      for (int i = 0; i < kInputs; ++i) {
        const float v = n(rng_);
        (*x)[s * kInputs + i] = v;
        ax += a_[i] * v;
        bx += b_[i] * v;
      }
      (*y)[s] = std::tanh(ax) + 0.5f * bx + 0.05f * n(rng_);
      if (tanh_input != nullptr) (*tanh_input)[s] = ax;
    }
  }

 private:
  std::mt19937 rng_;
  std::vector<float> a_, b_;
};

litmus::Status SaveParameters(litmus::writer::Writer& w, Mlp& model) {
  for (const auto& l : model.layers()) {
    const std::string prefix = "MLP_" + l.name;
    LITMUS_RETURN_IF_ERROR(w.SaveTensor(prefix + ".weight", std::span<const float>(l.weight),
                                        {l.out, l.in}));
    LITMUS_RETURN_IF_ERROR(w.SaveTensor(prefix + ".bias", std::span<const float>(l.bias), {l.out}));
  }
  return litmus::OkStatus();
}

// Gradients in backward order (last layer first), as PyTorch's hooks see them.
litmus::Status SaveGradients(litmus::writer::Writer& w, Mlp& model) {
  for (auto it = model.layers().rbegin(); it != model.layers().rend(); ++it) {
    const std::string prefix = "gradient/MLP_" + it->name;
    LITMUS_RETURN_IF_ERROR(w.SaveTensor(prefix + ".bias", std::span<const float>(it->grad_bias), {it->out}));
    LITMUS_RETURN_IF_ERROR(w.SaveTensor(prefix + ".weight", std::span<const float>(it->grad_weight),
                                        {it->out, it->in}));
  }
  return litmus::OkStatus();
}

// --feed-all-rules: what the built-in rules beyond weights, gradients and losses read, derived
// from this step's batch and model under the names their defaults match (docs/rules.md):
// the hidden layers' activation inputs and outputs (PoorWeightInitialization, SaturatedActivation,
// DeadRelu: MLP_fc1_relu_input_0, MLP_fc1_relu_output_0, ... or MLP_fc1_sigmoid_...), the task's
// own tanh input a.x (teacher_tanh_input_0), the batch as 1-channel 4x4 images (CheckInputImages:
// hybridsequential0_input_0) and as token ids with 0 for |x| < 0.25 (NLPSequenceRatio:
// embedding0_input_0), the signs of the target and of the prediction as class ids
// (ClassImbalance, Confusion: labels, predictions), each input's share of the first layer's
// |weights| (FeatureImportanceOverweight: feature_importance/weight/f<i>) and the node ids of a
// tree of depth 1 + step % 3 (TreeDepth: trees/Node). A benchmark shape (an MLP has no trees):
// each rule gets tensors to evaluate at every step; some fire (Confusion: a sign predictor is
// right far less often than min_diag 0.9; AllZero: the untrained model's predictions).
litmus::Status SaveRuleFeeds(litmus::writer::Writer& w, Mlp& model, Activation activation, int global_step,
                             const std::vector<float>& x, const std::vector<float>& y,
                             const std::vector<float>& pred, const std::vector<float>& tanh_input) {
  const char* act = activation == Activation::kRelu ? "relu" : "sigmoid";
  const std::vector<simulated_training::Layer>& layers = model.layers();
  for (size_t i = 0; i + 1 < layers.size(); ++i) {  // the hidden layers: activation in and out
    const std::string name = "MLP_" + layers[i].name + "_" + act;  // e.g. MLP_fc1_relu
    const std::vector<int64_t> shape = {kBatch, layers[i].out};
    LITMUS_RETURN_IF_ERROR(w.SaveTensor(name + "_input_0", std::span<const float>(layers[i].pre_activation), shape));
    LITMUS_RETURN_IF_ERROR(w.SaveTensor(name + "_output_0", std::span<const float>(layers[i + 1].input), shape));
  }
  LITMUS_RETURN_IF_ERROR(w.SaveTensor("teacher_tanh_input_0", std::span<const float>(tanh_input), {kBatch}));
  LITMUS_RETURN_IF_ERROR(w.SaveTensor("hybridsequential0_input_0", std::span<const float>(x), {kBatch, 1, 4, 4}));
  static_assert(kInputs == 16, "the images are 4x4");
  std::vector<int32_t> tokens(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    tokens[i] = std::fabs(x[i]) < 0.25f ? 0 : 1 + std::clamp(static_cast<int32_t>((x[i] + 3.0f) * 4.0f), 0, 23);
  }
  LITMUS_RETURN_IF_ERROR(w.SaveTensor("embedding0_input_0", std::span<const int32_t>(tokens), {kBatch, kInputs}));
  std::vector<int32_t> labels(y.size()), predictions(pred.size());
  for (size_t i = 0; i < y.size(); ++i) labels[i] = y[i] > 0.0f ? 1 : 0;
  for (size_t i = 0; i < pred.size(); ++i) predictions[i] = pred[i] > 0.0f ? 1 : 0;
  LITMUS_RETURN_IF_ERROR(w.SaveTensor("labels", std::span<const int32_t>(labels), {kBatch}));
  LITMUS_RETURN_IF_ERROR(w.SaveTensor("predictions", std::span<const int32_t>(predictions), {kBatch}));
  const simulated_training::Layer& first = layers.front();
  std::vector<float> importance(static_cast<size_t>(first.in), 0.0f);
  float total = 0.0f;
  for (int o = 0; o < first.out; ++o) {
    for (int i = 0; i < first.in; ++i) importance[static_cast<size_t>(i)] += std::fabs(first.weight[static_cast<size_t>(o * first.in + i)]);
  }
  for (const float v : importance) total += v;
  for (size_t i = 0; i < importance.size(); ++i) {
    const float share = total > 0.0f ? importance[i] / total : 0.0f;
    LITMUS_RETURN_IF_ERROR(w.SaveTensor("feature_importance/weight/f" + std::to_string(i), std::span<const float>(&share, 1), {}));
  }
  std::vector<float> nodes(static_cast<size_t>((2 << (1 + global_step % 3)) - 1));  // 3, 7 or 15 nodes
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = static_cast<float>(i);
  return w.SaveTensor("trees/Node", std::span<const float>(nodes), {static_cast<int64_t>(nodes.size())});
}

struct WorkerResult {
  litmus::Status status;
  float last_train_loss = 0;
  int global_steps = 0;
};

// One rank: its own data stream, the same initial model and step schedule as every other rank.
WorkerResult RunWorker(const Config& config, int rank) {
  WorkerResult result;
  const Scenario& scenario = kScenarios.at(config.scenario);
  litmus::writer::WriterOptions options;
  options.worker = "worker_" + std::to_string(rank);
  options.num_workers = config.workers;
  options.save_config = litmus::writer::SaveConfig::Every(1);  // the PyTorch default collections
  options.export_tensorboard = config.tensorboard;
  options.tensorboard_dir = config.tensorboard_dir;
  auto opened = litmus::writer::Writer::Open(config.out_dir, options);
  if (!opened.ok()) {
    result.status = opened.status();
    return result;
  }
  litmus::writer::Writer& w = **opened;

  std::mt19937 init_rng(config.seed);
  Mlp model({kInputs, 32, 16, 1}, scenario.activation, scenario.init_scale, init_rng);
  Data train(config.seed, config.seed * 1000 + static_cast<unsigned>(rank));
  // A fixed validation set, held out as a real job holds one: the same eval_steps batches in every
  // EVAL phase (batch e at the phase's e-th step), so the validation loss changes only when the
  // model does. (Fresh batches each phase made it jump with the sampling noise: Overfit then fired
  // on healthy training, and LossNotDecreasing could not see that flat training learns nothing.)
  Data validation(config.seed, config.seed * 1000 + 999 - static_cast<unsigned>(rank));
  std::vector<std::vector<float>> validation_x(static_cast<size_t>(config.eval_steps));
  std::vector<std::vector<float>> validation_y(validation_x.size()), validation_t(validation_x.size());
  for (size_t e = 0; e < validation_x.size(); ++e) validation.Batch(&validation_x[e], &validation_y[e], &validation_t[e]);
  std::vector<float> x, y, grad, tanh_input;

  // One global step: a TRAIN step on a fresh batch (eval_batch < 0), or an EVAL step on
  // validation batch eval_batch.
  const auto step = [&](int eval_batch) -> litmus::Status {
    const bool training = eval_batch < 0;
    LITMUS_RETURN_IF_ERROR(w.BeginStep());
    if (training) {
      train.Batch(&x, &y, &tanh_input);
    } else {
      x = validation_x[static_cast<size_t>(eval_batch)];
      y = validation_y[static_cast<size_t>(eval_batch)];
      tanh_input = validation_t[static_cast<size_t>(eval_batch)];
    }
    LITMUS_RETURN_IF_ERROR(SaveParameters(w, model));  // before the update, like a forward hook
    const std::vector<float> pred = model.Forward(x, kBatch);
    const float loss = Mlp::MseLoss(pred, y, &grad);
    LITMUS_RETURN_IF_ERROR(w.SaveTensor("MSELoss_output_0", std::span<const float>(&loss, 1), {}));
    if (config.feed_all_rules) {
      LITMUS_RETURN_IF_ERROR(SaveRuleFeeds(w, model, scenario.activation, result.global_steps, x, y, pred, tanh_input));
    }
    if (training) {
      model.Backward(grad, kBatch);
      LITMUS_RETURN_IF_ERROR(SaveGradients(w, model));
      model.SgdStep(scenario.learning_rate);
      result.last_train_loss = loss;
    }
    ++result.global_steps;
    return w.EndStep();
  };

  for (int s = 0; s < config.steps && result.status.ok(); ++s) {
    result.status = w.SetMode(litmus::Mode::kTrain);
    if (result.status.ok()) result.status = step(-1);
    const bool eval_now = config.eval_every > 0 && (s + 1) % config.eval_every == 0;
    if (result.status.ok() && eval_now) {
      result.status = w.SetMode(litmus::Mode::kEval);
      for (int e = 0; e < config.eval_steps && result.status.ok(); ++e) result.status = step(e);
    }
  }
  const litmus::Status closed = w.Close();
  if (result.status.ok()) result.status = closed;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  CLI::App app{"Trains a tiny MLP on synthetic data and writes an smdebug-compatible trial.",
               "simulated_training"};
  app.add_option("OUT_DIR", config.out_dir, "Trial folder to create")->required();
  app.add_option("--scenario", config.scenario, "healthy | exploding | vanishing | flat")
      ->required()
      ->check(CLI::IsMember({"healthy", "exploding", "vanishing", "flat"}));
  app.add_option("--workers", config.workers, "Number of workers (ranks) to write")
      ->check(CLI::Range(1, 64));
  app.add_option("--steps", config.steps, "TRAIN steps per worker")->check(CLI::Range(1, 1000000));
  app.add_option("--eval-every", config.eval_every, "EVAL phase after every N TRAIN steps (0 = none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--eval-steps", config.eval_steps, "EVAL steps per phase")->check(CLI::Range(1, 1000));
  app.add_option("--seed", config.seed, "Random seed");
  app.add_flag("--tensorboard", config.tensorboard,
               "Also export TensorBoard summaries (per mode: loss scalars; histograms of weights, biases "
               "and gradients) to OUT_DIR/tensorboard");
  app.add_flag("--feed-all-rules", config.feed_all_rules,
               "Also save what the other built-in rules read (activation inputs, images, token ids, labels and "
               "predictions, feature importances, tree nodes), so that one trial feeds all 20 (a benchmark shape)");
  app.add_option("--tensorboard-dir", config.tensorboard_dir,
                 "Export TensorBoard summaries to this folder instead (implies --tensorboard)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "simulated_training: error: " << e.what() << " (see --help)\n";
    return 2;
  }

  std::vector<WorkerResult> results(static_cast<size_t>(config.workers));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < config.workers; ++rank) {
    threads.emplace_back([&, rank] { results[static_cast<size_t>(rank)] = RunWorker(config, rank); });
  }
  for (std::thread& t : threads) t.join();
  for (int rank = 0; rank < config.workers; ++rank) {
    const litmus::Status& s = results[static_cast<size_t>(rank)].status;
    if (!s.ok()) {
      std::cerr << "simulated_training: worker_" << rank << ": " << s.ToString() << "\n";
      return 1;
    }
  }
  // With several workers the writers leave the end marker to the job: written once all closed.
  if (config.workers > 1) {
    const litmus::Status marked = litmus::writer::MarkTrainingEnded(nullptr, config.out_dir);
    if (!marked.ok()) {
      std::cerr << "simulated_training: " << marked.ToString() << "\n";
      return 1;
    }
  }
  std::cout << "wrote " << results[0].global_steps << " steps x " << config.workers
            << " worker(s) of scenario " << config.scenario << " to " << config.out_dir
            << " (last TRAIN loss " << results[0].last_train_loss << ")\n";
  if (config.tensorboard || !config.tensorboard_dir.empty()) {
    std::cout << "TensorBoard summaries: tensorboard --logdir "
              << (config.tensorboard_dir.empty() ? config.out_dir + "/tensorboard" : config.tensorboard_dir) << "\n";
  }
  return 0;
}
