// Configuration types of litmus::writer, mirroring smdebug's SaveConfig/SaveConfigMode,
// ReductionConfig and Collection (docs/trial-format.md §5, §7.1): which steps a collection saves,
// which reductions are stored, and which tensors belong to which collection. Plain value types;
// thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "litmus/format/mode.h"
#include "litmus/format/trial_layout.h"
#include "litmus/status.h"

namespace litmus::writer {

// smdebug 1.0.34's SaveConfigMode defaults (smdebug/core/save_config.py: DEFAULT_SAVE_CONFIG_INTERVAL).
inline constexpr int64_t kDefaultSaveInterval = 500;

// When one mode saves. ShouldSaveStep() is smdebug's should_save_step, applied to the *mode* step:
//   mode_step in save_steps
//   or (start_step <= mode_step < end_step  and  mode_step % save_interval == 0).
// Note that a non-empty save_steps does not switch the interval rule off (smdebug's code, despite
// its docstring). end_step 0 means "no end", as Python's `end_step or None` makes it.
struct SaveConfigMode {
  int64_t save_interval = kDefaultSaveInterval;  // >= 1
  int64_t start_step = 0;                        // >= 0
  std::optional<int64_t> end_step;               // exclusive; nullopt or 0 = no end
  std::vector<int64_t> save_steps;

  bool ShouldSaveStep(int64_t mode_step) const;
  Status Validate() const;  // InvalidArgument for save_interval < 1 or a negative step
  friend bool operator==(const SaveConfigMode&, const SaveConfigMode&) = default;
};

// A SaveConfigMode per mode. Modes without an entry inherit: a collection's missing modes come
// from WriterOptions::save_config, whose missing modes are SaveConfigMode{} (smdebug's
// merge_default_save_config).
struct SaveConfig {
  std::map<Mode, SaveConfigMode> modes;

  SaveConfig() = default;
  // The same config for every mode.
  static SaveConfig AllModes(SaveConfigMode config);
  // Every `interval` steps in every mode.
  static SaveConfig Every(int64_t interval);
  SaveConfig& Set(Mode mode, SaveConfigMode config) {
    modes[mode] = std::move(config);
    return *this;
  }
  friend bool operator==(const SaveConfig&, const SaveConfig&) = default;
};

// smdebug's ReductionConfig plus save_shape. Reductions are stored as their own 0-d DT_DOUBLE
// records named smdebug/reductions/[abs_]<r>/<tensor> right before the raw record. litmus
// computes them in double: population std/variance (ddof = 0), element-wise l1/l2 norms
// (docs/trial-format.md §7.4); smdebug's PyTorch hook stores N-1 std/variance in float32.
struct ReductionConfig {
  std::vector<layout::Reduction> reductions;      // min max mean std variance sum prod
  std::vector<layout::Reduction> abs_reductions;  // the same, over |x|
  std::vector<layout::Reduction> norms;           // l1 l2
  std::vector<layout::Reduction> abs_norms;       // l1 l2, over |x|
  bool save_raw_tensor = true;  // the hooks' default (ReductionConfig(save_raw_tensor=True))
  bool save_shape = false;      // shape_payload entry in the index (see WriterOptions)

  // InvalidArgument for a norm in reductions or a non-norm in norms (smdebug's _check).
  Status Validate() const;
  // "min,l2_norm,abs_mean,abs_l1_norm": smdebug's comma-separated form, in its order.
  std::string ReductionsString() const;
  bool has_reductions() const {
    return !reductions.empty() || !abs_reductions.empty() || !norms.empty() || !abs_norms.empty();
  }
  friend bool operator==(const ReductionConfig&, const ReductionConfig&) = default;
};

// smdebug's built-in collection names (core/collection.py CollectionKeys).
namespace collections {
inline constexpr std::string_view kDefault = "default";
inline constexpr std::string_view kAll = "all";
inline constexpr std::string_view kWeights = "weights";
inline constexpr std::string_view kBiases = "biases";
inline constexpr std::string_view kGradients = "gradients";
inline constexpr std::string_view kLosses = "losses";
inline constexpr std::string_view kInputs = "inputs";
inline constexpr std::string_view kOutputs = "outputs";
inline constexpr std::string_view kLayers = "layers";
inline constexpr std::string_view kMetrics = "metrics";
inline constexpr std::string_view kSmMetrics = "sm_metrics";
inline constexpr std::string_view kOptimizerVariables = "optimizer_variables";
inline constexpr std::string_view kFeatureImportance = "feature_importance";
inline constexpr std::string_view kAverageShap = "average_shap";
}  // namespace collections

// True for smdebug's scalar collections (losses, metrics, sm_metrics, feature_importance,
// average_shap): they never store reductions and never export histograms.
bool IsScalarCollection(std::string_view name);

// One collection. Membership of a tensor t: t is in tensor_names, or some include_regex matches
// anywhere in t. The writer matches with std::regex in ECMAScript mode (regex_search), which
// supports the lookahead of the PyTorch defaults but not Python-only syntax such as (?P<n>...),
// (?i) or \A/\Z: such a pattern fails Writer::Open. Readers (smdebug, litmus) use Python `re`.
struct CollectionConfig {
  std::string name;
  std::vector<std::string> include_regex;
  std::vector<std::string> tensor_names;
  std::optional<SaveConfig> save_config;            // nullopt: WriterOptions::save_config
  std::optional<ReductionConfig> reduction_config;  // nullopt: WriterOptions::reduction_config
  bool save_histogram = true;  // written to the collections file only; forced false for scalars
};

// smdebug's PyTorch defaults (pytorch/collection.py), in the order pt_run_complete lists them:
// all, default, biases (^(?!gradient).*bias), weights (^(?!gradient).*weight),
// gradients (^gradient), losses ([Ll]oss_(?!input).*output).
std::vector<CollectionConfig> DefaultCollections();

}  // namespace litmus::writer
