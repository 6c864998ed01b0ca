// Reductions computed from raw tensor values, with litmus's documented semantics
// (docs/compatibility.md): float64 accumulation, population std/variance, element-wise l1/l2 for
// every rank, abs in the double domain, IEEE NaN/inf propagation, complex only with abs.
// Pure functions; thread-safe.
#pragma once

#include <span>
#include <vector>

#include "litmus/engine/tensor.h"
#include "litmus/format/trial_layout.h"
#include "litmus/status.h"

namespace litmus {

// InvalidArgument for: strings; min/max of an empty tensor; non-abs reductions of complex
// tensors ("unsupported"). Empty tensors: sum 0, prod 1, l1 = l2 = 0, mean/std/variance NaN.
StatusOr<double> ComputeReduction(const Tensor& tensor, layout::Reduction reduction, bool abs);

// One reduction a caller wants of a tensor (ComputeReductions, below).
struct ReductionRequest {
  layout::Reduction reduction;
  bool abs = false;
};

// NaN and infinite elements of a float or complex tensor (a complex element counts once per
// kind if either part is one); all zero for other dtypes.
struct NonFiniteCounts {
  int64_t nan = 0;
  int64_t posinf = 0;
  int64_t neginf = 0;
};
NonFiniteCounts CountNonFinite(const Tensor& tensor);

// What the HTML report charts of a watched tensor at a step (mean, min, max, NaN and infinity
// counts), computed in one pass over the data for real dtypes (float32 and float64 through the
// AVX2 kernels where the CPU has them); only data that holds a NaN or an infinity takes more
// passes (the exact NaN-aware min/max and the counts). Each field is bit for bit what
// ComputeReductions (mean, min, max) and CountNonFinite give, with NaN where those give an error
// (min/max of an empty tensor, non-abs reductions of complex ones). `elements` is 0 for strings
// (nothing else computed).
struct TensorStatistics {
  int64_t elements = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
  NonFiniteCounts non_finite;
};
TensorStatistics ComputeStatistics(const Tensor& tensor);

// Several reductions of one tensor; result i is bit for bit what ComputeReduction gives for
// requests[i]. On float32 tensors the sums and means, the first pass of variance and std, l1,
// the abs max, and the min and max share one pass over the data, so asking for them together
// costs about one pass (plus one for each distinct variance) instead of one each. With
// `statistics`, also ComputeStatistics(tensor) into it (on float32, in the same pass).
std::vector<StatusOr<double>> ComputeReductions(const Tensor& tensor, std::span<const ReductionRequest> requests,
                                                TensorStatistics* statistics = nullptr);
// The same without allocating (the reader runs it for every value it decodes): for each i,
// `ok[i]` whether requests[i] could be computed and `values[i]` its result if so.
// REQUIRES: values.size() >= requests.size() and ok.size() >= requests.size().
void ComputeReductionsInto(const Tensor& tensor, std::span<const ReductionRequest> requests, std::span<double> values,
                           std::span<bool> ok, TensorStatistics* statistics = nullptr);

// Converts a *stored* reduction record (0-d or one element, any numeric dtype) to its value.
// InvalidArgument if it does not hold exactly one numeric element.
StatusOr<double> StoredReductionValue(const Tensor& stored);

}  // namespace litmus
