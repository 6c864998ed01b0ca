// CheckInputImages: channel means of the input images accumulated across steps
// (docs/rules/CheckInputImages.md).
#include "check_input_images.h"

#include <cmath>
#include <limits>
#include <span>

#include "litmus_builtin/numeric_visit.hpp"
#include "litmus_builtin/regex_check.hpp"
#include "litmus_builtin/param_checks.hpp"
#include "litmus_builtin/report_json.hpp"

namespace litmus_builtin {

CheckInputImages::CheckInputImages(const litmus::RuleArgs& args)
    : Rule(args),
      threshold_mean_(FloatInRange(*this, kThresholdMean, 0.0, std::numeric_limits<double>::infinity(),
                                   "must be a number >= 0")),
      threshold_samples_(IntAtLeast(*this, kThresholdSamples, 1)),
      // "None" or "" is "not set": the documented default applies.
      regex_(param_optional_string(kRegex.name).value_or(std::string(kDefaultRegex))),
      channel_(static_cast<size_t>(IntAtLeast(*this, kChannel, 1))) {
  CheckRegexes(*this, kRegex.name, {regex_});
  report_recommendation(
      "Input images are not normalized (channel means far from 0): subtract the dataset mean and divide "
      "by its standard deviation in the preprocessing.");
}

void CheckInputImages::set_required_tensors(int64_t step) {
  for (const std::string& name : base_trial().tensor_names({.regex = regex_, .step = step})) {
    req_tensors().add(name, {step});
  }
}

void CheckInputImages::WarnOnce(const std::string& tensor, const std::string& why) {
  if (warned_.insert(tensor).second) log_warning("tensor ", tensor, " ", why, "; skipped");
}

bool CheckInputImages::Accumulate(const litmus::TensorView& value, std::vector<double>& sums,
                                  std::vector<int64_t>& counts, int64_t& images) {
  const std::span<const int64_t> shape = value.shape();
  if (shape.size() < 3) {
    WarnOnce(value.name(), "has rank " + std::to_string(shape.size()) + ", images need rank >= 3");
    return false;
  }
  if (channel_ >= shape.size()) {
    WarnOnce(value.name(), "has rank " + std::to_string(shape.size()) + ", no axis channel=" +
                               std::to_string(channel_));
    return false;
  }
  // Element i lies in channel (i / inner) % channels.
  size_t outer = 1;
  for (size_t axis = 0; axis < channel_; ++axis) outer *= static_cast<size_t>(shape[axis]);
  const size_t channels = static_cast<size_t>(shape[channel_]);
  size_t inner = 1;
  for (size_t axis = channel_ + 1; axis < shape.size(); ++axis) inner *= static_cast<size_t>(shape[axis]);
  if (sums.size() < channels) {
    sums.resize(channels, 0.0);
    counts.resize(channels, 0);
  }
  const bool numeric = VisitNumeric(value, [&](auto values) {
    for (size_t o = 0; o < outer; ++o) {
      for (size_t c = 0; c < channels; ++c) {
        double sum = 0.0;
        for (const auto x : values.subspan((o * channels + c) * inner, inner)) sum += static_cast<double>(x);
        sums[c] += sum;
        counts[c] += static_cast<int64_t>(inner);
      }
    }
  });
  if (!numeric) {
    WarnOnce(value.name(), "holds no real numbers");
    return false;
  }
  images += shape[0];
  return true;
}

bool CheckInputImages::invoke_at_step(int64_t step) {
  // Accumulate into copies and commit only when every read of the step succeeded: a read that
  // throws (tensor unavailable) skips the step and must leave no partial sums behind.
  std::vector<double> sums = channel_sums_;
  std::vector<int64_t> counts = channel_counts_;
  int64_t images = images_seen_;
  for (const litmus::Tensor& tensor : req_tensors().get()) Accumulate(tensor.value(step), sums, counts, images);
  channel_sums_ = std::move(sums);
  channel_counts_ = std::move(counts);
  images_seen_ = images;

  report_detail("images_seen", images_seen_);
  report_series(kSeriesImages, step, static_cast<double>(images_seen_));
  if (images_seen_ < threshold_samples_) return false;
  std::vector<std::string> means;
  int64_t violations = 0;
  for (size_t c = 0; c < channel_sums_.size(); ++c) {
    if (channel_counts_[c] == 0) {
      means.push_back("null");
      continue;
    }
    const double mean = channel_sums_[c] / static_cast<double>(channel_counts_[c]);
    means.push_back(JsonNumber(mean));
    const std::string series = std::string(kSeriesChannelPrefix) + std::to_string(c);
    report_series(series, step, mean);
    // |mean| > threshold_mean: a band around 0.
    report_threshold(series, threshold_mean_, litmus::Fires::kAbove);
    report_threshold(series, -threshold_mean_, litmus::Fires::kBelow);
    if (std::fabs(mean) > threshold_mean_) {
      ++violations;
      log_info("step ", step, ": channel ", c, " has mean ", mean, " over ", images_seen_,
               " images (|mean| > threshold_mean ", threshold_mean_, ")");
    }
  }
  report_detail("channel_means", JsonArray(means));
  if (violations > 0) report_violations(violations);
  return violations > 0;
}

}  // namespace litmus_builtin
