// The filters the end-to-end `litmus inspect` tests run each trial with (none, a mode, a step
// range, both, a tensor regex, a collection), each beside the TrialSelection the library takes
// for it, so a test compares the command's output with the library's for the same selection.
// Header-only.
#pragma once

#include <string>
#include <vector>

#include "litmus/engine/trial_selection.h"

namespace litmus::testing {

struct InspectVariant {
  std::vector<std::string> args;  // the command line's filter options
  TrialSelection selection;       // the same filter for the library
};

inline std::vector<InspectVariant> InspectVariants(const std::string& tensor_regex) {
  std::vector<InspectVariant> v;
  v.push_back({{}, {}});
  TrialSelection eval;
  eval.mode = Mode::kEval;
  v.push_back({{"--mode", "EVAL"}, eval});
  TrialSelection range;
  range.steps = StepRange{2, 5};
  v.push_back({{"--step", "2:5"}, range});
  TrialSelection train;
  train.mode = Mode::kTrain;
  train.steps = StepRange{1, 3};
  v.push_back({{"--mode", "TRAIN", "--step", "1:3"}, train});
  TrialSelection names;
  names.tensor_regex = {tensor_regex};
  v.push_back({{"--tensor", tensor_regex}, names});
  TrialSelection collection;
  collection.collections = {"losses"};
  v.push_back({{"--collection", "losses"}, collection});
  return v;
}

}  // namespace litmus::testing
