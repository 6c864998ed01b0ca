// ModeKeys names and values. Pure functions; thread-safe.
#include "litmus/format/mode.h"

namespace litmus {

std::string_view ModeName(Mode mode) {
  switch (mode) {
    case Mode::kTrain:
      return "TRAIN";
    case Mode::kEval:
      return "EVAL";
    case Mode::kPredict:
      return "PREDICT";
    case Mode::kGlobal:
      return "GLOBAL";
  }
  return "UNKNOWN";
}

std::optional<Mode> ModeFromName(std::string_view name) {
  // Python's str.strip() on ASCII whitespace.
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t begin = name.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return std::nullopt;
  name = name.substr(begin, name.find_last_not_of(kSpace) - begin + 1);
  for (Mode m : kAllModes) {
    if (ModeName(m) == name) return m;
  }
  return std::nullopt;
}

std::optional<Mode> ModeFromValue(int64_t value) {
  switch (value) {
    case 1:
      return Mode::kTrain;
    case 2:
      return Mode::kEval;
    case 3:
      return Mode::kPredict;
    case 4:
      return Mode::kGlobal;
    default:
      return std::nullopt;
  }
}

}  // namespace litmus
