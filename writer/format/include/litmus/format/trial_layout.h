// File naming of a trial (docs/trial-format.md §1): where event, index and collections files of a
// (global step, worker) live, how names parse back, and the names of stored reduction tensors.
// All paths are relative to the trial root and use '/'. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "litmus/status.h"

namespace litmus::layout {

inline constexpr std::string_view kEndOfJobFile = "training_job_end.ts";
inline constexpr std::string_view kClaimFile = "claim.smd";
inline constexpr std::string_view kTmpSuffix = ".tmp";
inline constexpr std::string_view kIndexDir = "index";
inline constexpr std::string_view kEventsDir = "events";
inline constexpr std::string_view kCollectionsDir = "collections/000000000";
inline constexpr int64_t kMaxStep = 999'999'999'999;  // 12-digit zero padding
inline constexpr int64_t kIndexFilesPerFolder = 1000;

// "events/000000000007/000000000007_worker_0.tfevents"
std::string EventFilePath(int64_t step, std::string_view worker);
// "index/000000000/000000000007_worker_0.json"
std::string IndexFilePath(int64_t step, std::string_view worker);
// "index/000000000" for steps 0..999, "index/000000001" for 1000..1999, ...
std::string IndexFolder(int64_t step);
// "collections/000000000/worker_0_collections.json"
std::string CollectionsFilePath(std::string_view worker);

// Step and worker of an index file, from its path relative to the root
// ("index/<P9>/<S12>_<worker>.json"). nullopt if the name does not match (e.g. *.tmp, *.csv).
// Device-name de-serialization ('_'->'/', '-'->':') applies only when the worker part starts
// with '_' (i.e. "__" right after the step digits), unlike smdebug which looks at the whole path.
struct IndexFileName {
  int64_t step = 0;
  std::string worker;
};
std::optional<IndexFileName> ParseIndexFilePath(std::string_view relative_path);

// Worker of a collections file ("collections/000000000/<worker>_collections.json"); the same
// de-serialization rule applies when the worker starts with '_'. nullopt if the name does not match.
std::optional<std::string> ParseCollectionsFilePath(std::string_view relative_path);

// Writer-side check: [A-Za-z0-9.-][A-Za-z0-9_.-]*, no "__", 1..255 chars.
Status ValidateWorkerName(std::string_view worker);
// Writer-side check for tensor names: non-empty, valid UTF-8, no NUL or newline, no "//" and not
// starting with '/', at most 4096 bytes, not starting with "smdebug/reductions/".
Status ValidateTensorName(std::string_view name);

// Reductions litmus knows: smdebug's names in the stored tensor name.
enum class Reduction { kMin, kMax, kMean, kStd, kVariance, kSum, kProd, kL1, kL2 };
inline constexpr Reduction kAllReductions[] = {Reduction::kMin, Reduction::kMax, Reduction::kMean,
                                               Reduction::kStd, Reduction::kVariance, Reduction::kSum,
                                               Reduction::kProd, Reduction::kL1, Reduction::kL2};
// "min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2".
std::string_view ReductionName(Reduction r);
// Accepts the names above and, for norms, "l1_norm"/"l2_norm".
std::optional<Reduction> ReductionFromName(std::string_view name);

// "smdebug/reductions/[abs_]<r>/<tensor>", with every ":<digits>" removed from "<r>/<tensor>"
// when strip_colon_digits is set (what non-TF smdebug hooks do).
std::string ReductionTensorName(Reduction r, bool abs, std::string_view tensor,
                                bool strip_colon_digits = false);
// Reverse of the above as smdebug's reader does it: any name that *contains*
// "smdebug/reductions/" splits after it at the first '/' into <r-part>/<tensor>.
struct ParsedReductionName {
  Reduction reduction;
  bool abs = false;
  std::string tensor;
};
std::optional<ParsedReductionName> ParseReductionTensorName(std::string_view name);

}  // namespace litmus::layout
