// litmus_builtin/allclose.hpp (UnchangedTensor, SimilarAcrossRuns): the typed, branch-free block
// scans give exactly the element-by-element IsClose answer and the scalar max |a - b|, for every
// pair of special values at every position of a block (first, last of a block, later blocks), for
// float32, float64 and integers, with and without equal_nan; mixed dtypes take the at_double path.
#include "litmus_builtin/allclose.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace litmus_builtin {
namespace {

template <class T>
litmus_tensor_view_t RawView(const std::vector<T>& values, int32_t dtype, const int64_t* shape) {
  litmus_tensor_view_t raw{};
  raw.struct_size = sizeof(raw);
  raw.dtype = dtype;
  raw.data = values.empty() ? nullptr : values.data();
  raw.byte_size = values.size() * sizeof(T);
  raw.shape = shape;
  raw.rank = 1;
  raw.num_elements = static_cast<int64_t>(values.size());
  return raw;
}

// What the scans must agree with: IsClose pair by pair; max |a - b| with NaN first.
template <class A, class B>
bool ReferenceClose(const std::vector<A>& a, const std::vector<B>& b, const Tolerance& t) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (!IsClose(static_cast<double>(a[i]), static_cast<double>(b[i]), t)) return false;
  }
  return true;
}
template <class A, class B>
double ReferenceMax(const std::vector<A>& a, const std::vector<B>& b) {
  double max = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = static_cast<double>(a[i]), y = static_cast<double>(b[i]);
    if (std::isnan(x) || std::isnan(y)) return std::nan("");
    max = std::max(max, x == y ? 0.0 : std::fabs(x - y));
  }
  return max;
}

template <class A, class B>
void ExpectAgrees(const std::vector<A>& a, int32_t dtype_a, const std::vector<B>& b, int32_t dtype_b,
                  const Tolerance& t, const std::string& what) {
  const int64_t shape = static_cast<int64_t>(a.size());
  const litmus::TensorView va(RawView(a, dtype_a, &shape), "a"), vb(RawView(b, dtype_b, &shape), "b");
  const bool close = CompareValues(va, vb, t) == Comparison::kClose;
  EXPECT_EQ(close, ReferenceClose(a, b, t)) << what;
  const std::optional<double> max = MaxAbsDifference(va, vb);
  ASSERT_TRUE(max.has_value()) << what;
  const double expected = ReferenceMax(a, b);
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(*max)) << what;
  } else {
    EXPECT_EQ(*max, expected) << what;
  }
}

const double kInf = std::numeric_limits<double>::infinity();
const std::vector<double> kSpecial = {0.0, -0.0, 1.0, 1.0 + 1e-6, 1.0 + 1e-4, -1.0, 1e-9, 3e-8, 1e300, -1e300,
                                      kInf, -kInf, std::nan(""), std::numeric_limits<double>::denorm_min()};

TEST(AllClose, EveryPairOfSpecialValuesAtEveryPlaceAgreesWithIsClose) {
  // Positions: the first element, the end of the first block (8), the next block, a large block,
  // the last element (blocks of 8, 16, 32, ... 512 elements).
  for (const size_t size : {size_t{1}, size_t{9}, size_t{1500}}) {
    for (const size_t at : {size_t{0}, size_t{7}, size_t{8}, size_t{23}, size_t{700}, size_t{1499}}) {
      if (at >= size) continue;
      for (const double x : kSpecial) {
        for (const double y : kSpecial) {
          for (const bool equal_nan : {false, true}) {
            const Tolerance t{.rtol = 1e-5, .atol = 1e-8, .equal_nan = equal_nan};
            const std::string what = "size " + std::to_string(size) + " at " + std::to_string(at) + ": " +
                                     std::to_string(x) + " vs " + std::to_string(y) +
                                     (equal_nan ? " equal_nan" : "");
            std::vector<double> a(size, 0.5), b(size, 0.5);
            a[at] = x;
            b[at] = y;
            ExpectAgrees(a, LITMUS_DTYPE_FLOAT64, b, LITMUS_DTYPE_FLOAT64, t, "float64 " + what);
            const std::vector<float> fa(a.begin(), a.end()), fb(b.begin(), b.end());
            ExpectAgrees(fa, LITMUS_DTYPE_FLOAT32, fb, LITMUS_DTYPE_FLOAT32, t, "float32 " + what);
            ExpectAgrees(fa, LITMUS_DTYPE_FLOAT32, b, LITMUS_DTYPE_FLOAT64, t, "mixed " + what);
          }
        }
      }
    }
  }
}

TEST(AllClose, IntegersCompareOnTheirValues) {
  const Tolerance t{.rtol = 0.01, .atol = 0, .equal_nan = false};
  for (const int64_t delta : {int64_t{0}, int64_t{1}, int64_t{5}}) {
    std::vector<int64_t> a(100, 300), b(100, 300);
    b[42] += delta;  // within 1 % of 300 for 0 and 1, not for 5
    ExpectAgrees(a, LITMUS_DTYPE_INT64, b, LITMUS_DTYPE_INT64, t, "int64 delta " + std::to_string(delta));
    const std::vector<int32_t> ia(a.begin(), a.end()), ib(b.begin(), b.end());
    ExpectAgrees(ia, LITMUS_DTYPE_INT32, ib, LITMUS_DTYPE_INT32, t, "int32 delta " + std::to_string(delta));
    const std::vector<uint8_t> ua(100, 200), ub(100, static_cast<uint8_t>(200 + delta));
    ExpectAgrees(ua, LITMUS_DTYPE_UINT8, ub, LITMUS_DTYPE_UINT8, t, "uint8 delta " + std::to_string(delta));
  }
  // Large 64-bit values are compared as doubles, as at_double reads them.
  const std::vector<uint64_t> big_a{std::numeric_limits<uint64_t>::max()}, big_b{0};
  ExpectAgrees(big_a, LITMUS_DTYPE_UINT64, big_b, LITMUS_DTYPE_UINT64, t, "uint64 extremes");
}

}  // namespace
}  // namespace litmus_builtin
