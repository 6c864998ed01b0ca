// A tiny multi-layer perceptron (3 fully connected layers, MSE loss) with a real forward pass,
// backward pass and SGD update, in float32 like a PyTorch model. Parameters and gradients are
// kept in PyTorch's layout (weight [out, in], bias [out]) so they can be saved under PyTorch-hook
// names. Not thread-safe; one Mlp per thread.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace simulated_training {

enum class Activation { kRelu, kSigmoid };

struct Layer {
  std::string name;  // "fc1"
  int in = 0;
  int out = 0;
  std::vector<float> weight, bias;            // [out * in], [out]
  std::vector<float> grad_weight, grad_bias;  // same shapes
  std::vector<float> input, pre_activation;   // cached by Forward for Backward: [B*in], [B*out]
};

class Mlp {
 public:
  // sizes = {in, hidden..., out}; weights ~ N(0, init_scale^2 * 2/in) (He init times a factor),
  // biases ~ init_scale * U(-1/sqrt(in), 1/sqrt(in)), as PyTorch's nn.Linear initialises them (not
  // zero: an all-zero bias is what AllZero reports, and real models do not start that way).
  Mlp(const std::vector<int>& sizes, Activation activation, float init_scale, std::mt19937& rng)
      : activation_(activation) {
    for (size_t i = 0; i + 1 < sizes.size(); ++i) {
      Layer l;
      l.name = "fc" + std::to_string(i + 1);
      l.in = sizes[i];
      l.out = sizes[i + 1];
      std::normal_distribution<float> init(0.0f, init_scale * std::sqrt(2.0f / static_cast<float>(l.in)));
      l.weight.resize(static_cast<size_t>(l.in * l.out));
      for (float& w : l.weight) w = init(rng);
      const float bound = init_scale / std::sqrt(static_cast<float>(l.in));
      std::uniform_real_distribution<float> bias_init(-bound, bound);
      l.bias.resize(static_cast<size_t>(l.out));
      for (float& b : l.bias) b = bias_init(rng);
      l.grad_weight.assign(l.weight.size(), 0.0f);
      l.grad_bias.assign(l.bias.size(), 0.0f);
      layers_.push_back(std::move(l));
    }
  }

  std::vector<Layer>& layers() { return layers_; }

  // Forward pass over a batch x [batch * in]; returns predictions [batch * out]. Hidden layers
  // use the activation; the last layer is linear.
  std::vector<float> Forward(const std::vector<float>& x, int batch) {
    std::vector<float> h = x;
    for (size_t li = 0; li < layers_.size(); ++li) {
      Layer& l = layers_[li];
      l.input = h;
      l.pre_activation.assign(static_cast<size_t>(batch * l.out), 0.0f);
      for (int b = 0; b < batch; ++b) {
        for (int o = 0; o < l.out; ++o) {
          float z = l.bias[o];
          for (int i = 0; i < l.in; ++i) z += l.weight[o * l.in + i] * h[b * l.in + i];
          l.pre_activation[b * l.out + o] = z;
        }
      }
      h = l.pre_activation;
      if (li + 1 < layers_.size()) {
        for (float& v : h) v = Activate(v);
      }
    }
    return h;
  }

  // Mean squared error of `pred` against `target`, and its gradient w.r.t. pred.
  static float MseLoss(const std::vector<float>& pred, const std::vector<float>& target,
                       std::vector<float>* grad) {
    float loss = 0.0f;
    grad->resize(pred.size());
    const float n = static_cast<float>(pred.size());
    for (size_t i = 0; i < pred.size(); ++i) {
      const float d = pred[i] - target[i];
      loss += d * d / n;
      (*grad)[i] = 2.0f * d / n;
    }
    return loss;
  }

  // Backward pass from d(loss)/d(output); fills every layer's grad_weight and grad_bias.
  // REQUIRES: Forward() on the same batch just before.
  void Backward(std::vector<float> grad_out, int batch) {
    for (size_t li = layers_.size(); li-- > 0;) {
      Layer& l = layers_[li];
      if (li + 1 < layers_.size()) {  // through the activation of this hidden layer
        for (size_t k = 0; k < grad_out.size(); ++k) grad_out[k] *= ActivationSlope(l.pre_activation[k]);
      }
      std::fill(l.grad_weight.begin(), l.grad_weight.end(), 0.0f);
      std::fill(l.grad_bias.begin(), l.grad_bias.end(), 0.0f);
      std::vector<float> grad_in(static_cast<size_t>(batch * l.in), 0.0f);
      for (int b = 0; b < batch; ++b) {
        for (int o = 0; o < l.out; ++o) {
          const float g = grad_out[b * l.out + o];
          l.grad_bias[o] += g;
          for (int i = 0; i < l.in; ++i) {
            l.grad_weight[o * l.in + i] += g * l.input[b * l.in + i];
            grad_in[b * l.in + i] += g * l.weight[o * l.in + i];
          }
        }
      }
      grad_out = std::move(grad_in);
    }
  }

  void SgdStep(float learning_rate) {
    for (Layer& l : layers_) {
      for (size_t k = 0; k < l.weight.size(); ++k) l.weight[k] -= learning_rate * l.grad_weight[k];
      for (size_t k = 0; k < l.bias.size(); ++k) l.bias[k] -= learning_rate * l.grad_bias[k];
    }
  }

 private:
  float Activate(float z) const {
    // ReLU written so that NaN passes through, as torch.relu does.
    return activation_ == Activation::kRelu ? (z <= 0.0f ? 0.0f : z) : 1.0f / (1.0f + std::exp(-z));
  }
  float ActivationSlope(float z) const {
    if (activation_ == Activation::kRelu) return z > 0 ? 1.0f : 0.0f;
    const float s = 1.0f / (1.0f + std::exp(-z));
    return s * (1.0f - s);
  }

  Activation activation_;
  std::vector<Layer> layers_;
};

}  // namespace simulated_training
