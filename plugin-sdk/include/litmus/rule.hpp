/// \file
/// litmus/rule.hpp — the header-only C++20 layer for writing litmus rule plugins over the C ABI
/// in litmus/rule_abi.h. A rule author includes this one header; each concern is a page of its own
/// under litmus/rule/: types.hpp (Mode, DType, Reduction, LogLevel), errors.hpp (exceptions),
/// params.hpp (parameter declarations and parsing), tensor_view.hpp (TensorView), trial.hpp
/// (Trial, Tensor, TensorQuery), required_tensors.hpp (RequiredTensors), rule_base.hpp (Rule,
/// RuleArgs), host_calls.hpp (their host calls), plugin_macros.hpp (LITMUS_RULE_PLUGIN).
/// Thread-safety: a Rule and every handle it hands out are used by one thread at a time (the host
/// calls an instance from one thread at a time); host access works only during a host call.
#ifndef LITMUS_RULE_HPP_
#define LITMUS_RULE_HPP_

#if !defined(__cplusplus) || __cplusplus < 202002L
#error "litmus/rule.hpp needs C++20"
#endif

// Naming note: the rule-facing API keeps smdebug's snake_case method names (invoke_at_step,
// base_trial, reduction_value, req_tensors ...) so that a rule ported from Python reads the same;
// everything else follows the house style.

#include "litmus/rule_abi.h"
#include "litmus/rule/types.hpp"
#include "litmus/rule/errors.hpp"
#include "litmus/rule/params.hpp"
#include "litmus/rule/internal.hpp"
#include "litmus/rule/tensor_view.hpp"
#include "litmus/rule/trial.hpp"
#include "litmus/rule/required_tensors.hpp"
#include "litmus/rule/rule_base.hpp"
#include "litmus/rule/host_calls.hpp"
#include "litmus/rule/plugin_macros.hpp"

#endif  // LITMUS_RULE_HPP_
