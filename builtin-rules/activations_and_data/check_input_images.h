// CheckInputImages (docs/rules/CheckInputImages.md): accumulates, over every evaluated step, per-channel
// sums of the input images matching `regex`; once threshold_samples images were seen, fires when
// the mean of any channel is further than threshold_mean from 0 (images not normalised).
// Thread-safety: as every litmus::Rule, one thread at a time.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/rule.hpp"

namespace litmus_builtin {

class CheckInputImages : public litmus::Rule {
 public:
  static constexpr std::string_view kName = "CheckInputImages";
  static constexpr std::string_view kDescription =
      "Fires when, after threshold_samples input images, the mean of some colour channel is "
      "further than threshold_mean from 0 (inputs not normalised)";
  static constexpr std::string_view kDefaultRegex = ".*hybridsequential0_input_0";
  static constexpr litmus::ParamSpec kThresholdMean = litmus::FloatParam(
      "threshold_mean", "0.2", "largest allowed |mean| of a channel over all images seen");
  static constexpr litmus::ParamSpec kThresholdSamples = litmus::IntParam(
      "threshold_samples", "500", "images (batch entries) to accumulate before deciding");
  static constexpr litmus::ParamSpec kRegex = litmus::StringParam(
      "regex", kDefaultRegex,
      "regex (searched anywhere in the name) of the input image tensors, rank >= 3, axis 0 = batch");
  static constexpr litmus::ParamSpec kChannel = litmus::IntParam(
      "channel", "1", "axis of the colour channel (1 for NCHW as MXNet, 3 for NHWC)");

  // Series (ABI 1.3), of the rule: "mean of channel <c>" once threshold_samples images were seen
  // (|mean| compared with threshold_mean), and the images seen so far.
  static constexpr std::string_view kSeriesChannelPrefix = "mean of channel ";
  static constexpr std::string_view kSeriesImages = "images seen";

  explicit CheckInputImages(const litmus::RuleArgs& args);

  void set_required_tensors(int64_t step) override;
  bool invoke_at_step(int64_t step) override;

 private:
  // Adds the images of `value` to the sums; false (nothing added) if it cannot hold images.
  bool Accumulate(const litmus::TensorView& value, std::vector<double>& sums,
                  std::vector<int64_t>& counts, int64_t& images);
  void WarnOnce(const std::string& tensor, const std::string& why);

  double threshold_mean_;
  int64_t threshold_samples_;
  std::string regex_;
  size_t channel_;
  // Accumulated over all evaluated steps: per channel the sum and number of elements.
  std::vector<double> channel_sums_;
  std::vector<int64_t> channel_counts_;
  int64_t images_seen_ = 0;
  std::set<std::string> warned_;  // tensors already warned about
};

}  // namespace litmus_builtin
