// Labels and predictions as integer class ids, shared by ClassImbalance and Confusion
// (docs/rules/ClassImbalance.md, Confusion.md): a tensor is flattened and each value cast
// (truncated, as numpy's astype(int)) or rounded to an id, or reduced by argmax over its last axis;
// a labels tensor and a predictions tensor are then paired element by element. Header-only on the
// public SDK; stateless and thread-safe.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "litmus/rule.hpp"
#include "litmus_builtin/numeric_visit.hpp"

namespace litmus_builtin {

enum class ClassIdConversion {
  kTruncate,        // flatten; id = value truncated toward zero
  kRound,           // flatten; id = value rounded to the nearest integer (halves away from zero)
  kArgmaxLastAxis,  // one id per row of the last axis: the index of its first maximum (NaN wins,
                    // as numpy's argmax); a rank-0 tensor is one row of one element
};

// Ids, or the reason there are none (error non-empty).
struct ClassIds {
  std::vector<int64_t> ids;
  std::string error;
  bool ok() const { return error.empty(); }
};

// The class ids of `view`. Fails for non-numeric dtypes and, unless argmax, for values that are
// NaN, infinite or beyond ±2^53 (not an exact class number).
inline ClassIds ToClassIds(const litmus::TensorView& view, ClassIdConversion conversion) {
  ClassIds out;
  const bool numeric = VisitNumeric(view, [&](auto values) {
    if (conversion == ClassIdConversion::kArgmaxLastAxis) {
      const std::span<const int64_t> shape = view.shape();
      const size_t row = shape.empty() ? 1 : static_cast<size_t>(shape.back());
      if (row == 0) return;
      out.ids.reserve(values.size() / row);
      for (size_t begin = 0; begin + row <= values.size(); begin += row) {
        size_t best = 0;
        double best_value = static_cast<double>(values[begin]);
        for (size_t i = 1; i < row && !std::isnan(best_value); ++i) {
          const double v = static_cast<double>(values[begin + i]);
          if (v > best_value || std::isnan(v)) {
            best = i;
            best_value = v;
          }
        }
        out.ids.push_back(static_cast<int64_t>(best));
      }
      return;
    }
    out.ids.reserve(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      const double v = static_cast<double>(values[i]);
      const double id = conversion == ClassIdConversion::kRound ? std::round(v) : std::trunc(v);
      if (!(std::fabs(id) <= 0x1p53)) {
        out.error = "element " + std::to_string(i) + " (" + std::to_string(v) +
                    ") is not a class id";
        out.ids.clear();
        return;
      }
      out.ids.push_back(static_cast<int64_t>(id));
    }
  });
  if (!numeric) out.error = "holds strings or complex numbers, not class ids";
  return out;
}

// Labels and predictions of one pair of tensors, element by element.
struct ClassIdPairs {
  std::vector<int64_t> labels;
  std::vector<int64_t> predictions;
  std::string error;  // names the failing tensor; empty on success
  bool ok() const { return error.empty(); }
};

// Converts both tensors and checks that they hold the same number of ids.
inline ClassIdPairs PairClassIds(const litmus::TensorView& labels, ClassIdConversion label_conversion,
                                 const litmus::TensorView& predictions,
                                 ClassIdConversion prediction_conversion) {
  ClassIdPairs out;
  ClassIds label_ids = ToClassIds(labels, label_conversion);
  if (!label_ids.ok()) {
    out.error = "labels tensor " + labels.name() + ": " + label_ids.error;
    return out;
  }
  ClassIds prediction_ids = ToClassIds(predictions, prediction_conversion);
  if (!prediction_ids.ok()) {
    out.error = "predictions tensor " + predictions.name() + ": " + prediction_ids.error;
    return out;
  }
  if (label_ids.ids.size() != prediction_ids.ids.size()) {
    out.error = "labels tensor " + labels.name() + " has " + std::to_string(label_ids.ids.size()) +
                " ids but predictions tensor " + predictions.name() + " has " +
                std::to_string(prediction_ids.ids.size());
    return out;
  }
  out.labels = std::move(label_ids.ids);
  out.predictions = std::move(prediction_ids.ids);
  return out;
}

}  // namespace litmus_builtin
