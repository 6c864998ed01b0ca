// Modes of a training job (smdebug ModeKeys): frozen values 1..4, names as in index JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace litmus {

enum class Mode : int32_t { kTrain = 1, kEval = 2, kPredict = 3, kGlobal = 4 };

inline constexpr Mode kAllModes[] = {Mode::kTrain, Mode::kEval, Mode::kPredict, Mode::kGlobal};

// "TRAIN", "EVAL", "PREDICT", "GLOBAL".
std::string_view ModeName(Mode mode);
// Parses a ModeKeys name (surrounding whitespace ignored, as smdebug's strip()); nullopt if unknown.
std::optional<Mode> ModeFromName(std::string_view name);
// Parses the plugin_data "mode" content: "1".."4".
std::optional<Mode> ModeFromValue(int64_t value);

}  // namespace litmus
