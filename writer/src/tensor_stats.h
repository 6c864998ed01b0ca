// Statistics of a numeric tensor's elements, computed in double, from which the writer takes the
// stored reductions (docs/trial-format.md §7.4): population std/variance (ddof = 0), element-wise
// l1/l2 norms, NaN-propagating min/max, |x| in the double domain (|INT32_MIN| = 2147483648),
// magnitudes for complex. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "litmus/format/dtype.h"
#include "litmus/format/trial_layout.h"
#include "litmus/status.h"

namespace litmus::writer::internal {

struct TensorStats {
  double min = 0, max = 0, mean = 0, variance = 0, sum = 0, prod = 1, l1 = 0, l2 = 0;
  double Get(layout::Reduction r) const;
};

// Statistics of the `count` elements in `data` (DTypeSize(dtype) bytes each, little-endian), or
// of their absolute values when `abs` is set. REQUIRES: count >= 1, data.size() == count * size.
// Unimplemented for strings, and for complex without `abs` (only reductions over magnitudes are
// defined for complex tensors).
StatusOr<TensorStats> ComputeStats(DType dtype, std::span<const std::byte> data, int64_t count,
                                   bool abs);

}  // namespace litmus::writer::internal
