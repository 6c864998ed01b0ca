// Per-unit activity of one layer's activations, shared by SaturatedActivation and DeadRelu
// (docs/rules/SaturatedActivation.md, DeadRelu.md): axis 0 is the batch and every other position is a unit; a
// rank-0 or rank-1 tensor is a batch of one whose elements are the units. A unit is inactive when
// the percentage of samples for which it is active is below a threshold.
// Header-only on the public SDK; stateless and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "litmus/rule.hpp"
#include "litmus_builtin/numeric_visit.hpp"

namespace litmus_builtin {

struct LayerActivity {
  int64_t batch = 0;           // samples (size of axis 0; 1 for rank 0 and 1)
  int64_t units = 0;           // positions per sample; 0 for an empty tensor
  int64_t inactive_units = 0;  // units active in fewer than threshold_inactivity percent of samples

  // 100 * inactive units / units; 0 for a layer without units.
  double inactive_percent() const {
    return units == 0 ? 0.0 : 100.0 * static_cast<double>(inactive_units) / static_cast<double>(units);
  }
};

// Counts the units of `view` whose active share `100 * active samples / batch` is strictly below
// `threshold_inactivity_percent`; `is_active(double)` decides one element. nullopt when the
// elements are not real numbers (string or complex dtypes).
template <class IsActive>
std::optional<LayerActivity> MeasureLayerActivity(const litmus::TensorView& view,
                                                  double threshold_inactivity_percent,
                                                  IsActive is_active) {
  LayerActivity activity;
  const std::span<const int64_t> shape = view.shape();
  const int64_t elements = view.num_elements();
  activity.batch = shape.size() >= 2 ? shape[0] : 1;
  activity.units = activity.batch == 0 ? 0 : elements / activity.batch;
  if (activity.units == 0) return activity;  // nothing to measure; callers skip such layers

  const size_t units = static_cast<size_t>(activity.units);
  const size_t batch = static_cast<size_t>(activity.batch);
  std::vector<int64_t> active(units, 0);
  const bool numeric = VisitNumeric(view, [&](auto values) {
    for (size_t sample = 0; sample < batch; ++sample) {
      const auto row = values.subspan(sample * units, units);
      for (size_t unit = 0; unit < units; ++unit) {
        if (is_active(static_cast<double>(row[unit]))) ++active[unit];
      }
    }
  });
  if (!numeric) return std::nullopt;
  for (const int64_t count : active) {
    const double active_percent = 100.0 * static_cast<double>(count) / static_cast<double>(batch);
    if (active_percent < threshold_inactivity_percent) ++activity.inactive_units;
  }
  return activity;
}

}  // namespace litmus_builtin
