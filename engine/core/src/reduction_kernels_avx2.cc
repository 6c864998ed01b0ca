// The reduction kernels built for AVX2 (reduction_kernels.h explains why a separate file, and
// why the results are bit-identical to the portable build). Compiled with -mavx2 only; called
// by ComputeReduction after a CPU check.
#define LITMUS_REDUCTION_ISA avx2_build
#include "reduction_kernels.h"

namespace litmus::reduction_kernels::avx2 {

double ReduceFloat32(const float* p, int64_t n, layout::Reduction reduction, bool abs) {
  return avx2_build::ReduceRealNonEmpty(p, n, reduction, abs);
}

double ReduceFloat64(const double* p, int64_t n, layout::Reduction reduction, bool abs) {
  return avx2_build::ReduceRealNonEmpty(p, n, reduction, abs);
}

}  // namespace litmus::reduction_kernels::avx2
