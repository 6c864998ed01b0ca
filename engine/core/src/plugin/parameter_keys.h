// Which RuleParameters keys a rule accepts: the parameters it declares. (The platform's keys —
// rule_to_invoke, start_step, other_trial_<i>, ... — are consumed by the runner before; see
// run/job_config.h.) Any other key is a client error naming the rule and the key with a
// "did you mean" hint, unless the job allows unknown keys (--allow-unknown-params) or the key is
// one of the misspellings that SageMaker's official examples use (SageMaker ignores unknown keys,
// so those examples run there): those stay warnings. Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "litmus/status.h"
#include "plugin/plugin_loader.h"

namespace litmus {

// Checks the keys of `params` against `rule`. OK with the warnings to record (each one line:
// "rule AllZero: unknown parameters 'nym_steps', 'x' (ignored); known: collection_names, ...") when
// every unknown key is tolerated; else InvalidArgument naming the rule and the keys that are not:
// "rule VanishingGradient: unknown parameter 'thresold' (did you mean threshold?); known:
// threshold (--allow-unknown-params ignores unknown keys)".
StatusOr<std::vector<std::string>> CheckParameterKeys(const LoadedRule& rule,
                                                      const std::map<std::string, std::string>& params,
                                                      bool allow_unknown);

// Whether `key` is a misspelling found in SageMaker's official examples (nym_steps,
// min_difference, use_loss_collection, max_diag: docs/rules/LossNotDecreasing.md, Confusion.md).
bool IsKnownExampleMisspelling(const std::string& key);

}  // namespace litmus
