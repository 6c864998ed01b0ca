// Parser for a trial's collections files (collections/000000000/<worker>_collections.json,
// docs/trial-format.md §5) into litmus::CollectionsFile, with smdebug's loading rules (§5.1,
// §5.3), and the step from there to the trial's Collection (regexes compiled once).
// Pure functions; thread-safe.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "litmus/engine/trial.h"
#include "litmus/format/index_model.h"
#include "litmus/format/trial_layout.h"
#include "litmus/status.h"

namespace litmus {

// Parses one collections file. `file_name` only goes into error messages. Errors are DataLoss
// and name the file: invalid JSON; a top-level key other than `collections` and `_meta`; a
// missing `_meta.num_workers` or one that is not an integer >= 1; a collection that is not an
// object; wrong types (include_regex/tensor_names not lists of strings, reduction_config or
// save_config neither an object nor null, save_config keys that are not mode names, ...); an
// unknown item in reduction_config.reductions (naming the item). null reduction_config and
// save_config are accepted. Unknown keys inside a collection are ignored (as smdebug does).
// Each collection's name is its key in `collections` (what smdebug looks collections up by).
StatusOr<CollectionsFile> ParseCollectionsJson(std::string_view json, std::string_view file_name);

// Parses reduction_config.reductions, a comma-separated list of items (§5.1): plain reductions
// min,max,mean,std,variance,sum,prod; norms l1_norm,l2_norm; and the same with an abs_ prefix.
// Blanks around items and empty items are ignored. InvalidArgument naming the first unknown item.
StatusOr<std::vector<std::pair<layout::Reduction, bool>>> ParseReductionList(std::string_view reductions);

// The trial's view of one collection. Patterns that fail to compile are left out of
// compiled_regex and the first such failure is stored in *regex_status (OK otherwise), so the
// collection is only unusable for membership queries, not for opening the trial.
Collection MakeCollection(const CollectionJson& json, Status* regex_status);

}  // namespace litmus
