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

void FusedFloat32(const float* p, int64_t n, bool sum, bool abs_sum, bool abs_max, bool min_max, FusedSums* out) {
  *out = avx2_build::FusedFloat32(p, n, sum, abs_sum, abs_max, min_max);
}

double VarianceFloat32FromSum(const float* p, int64_t n, double sum, bool abs) {
  if (abs) return avx2_build::VarianceFromSum(n, avx2_build::RealLoader<float, true>{p}, sum);
  return avx2_build::VarianceFromSum(n, avx2_build::RealLoader<float, false>{p}, sum);
}

SumMinMax StatisticsFloat32(const float* p, int64_t n) {
  return avx2_build::StatisticsPass(n, avx2_build::RealLoader<float, false>{p});
}

SumMinMax StatisticsFloat64(const double* p, int64_t n) {
  return avx2_build::StatisticsPass(n, avx2_build::RealLoader<double, false>{p});
}

}  // namespace litmus::reduction_kernels::avx2
