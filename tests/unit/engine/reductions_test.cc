// Tests of ComputeReduction and StoredReductionValue: hand-made tensors of every dtype (NaN/inf,
// INT32_MIN, bool, float16 overflow, complex, empty, 0-d), agreement with a long-double reference
// on random data of many sizes, and with smdebug's own values in the fixtures' expected.json
// where smdebug's semantics coincide with litmus's (docs/compatibility.md).
#include "litmus/engine/reductions.h"

#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/temp_dir.h"

namespace litmus {
namespace {

using layout::Reduction;
using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T>
Tensor Make(DType dtype, std::vector<int64_t> shape, std::vector<T> values) {
  auto owner = std::make_shared<std::vector<T>>(std::move(values));
  return Tensor(dtype, std::move(shape), std::as_bytes(std::span(*owner)), owner);
}
template <typename T>
Tensor Make1D(DType dtype, std::vector<T> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Make(dtype, {n}, std::move(values));
}

double R(const Tensor& t, Reduction r, bool abs = false) {
  StatusOr<double> v = ComputeReduction(t, r, abs);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : -12345.678;
}

TEST(ComputeReductionTest, Float64Basics) {
  const Tensor t = Make1D<double>(DType::kFloat64, {-1, 2, -3, 4});
  EXPECT_EQ(R(t, Reduction::kMin), -3);
  EXPECT_EQ(R(t, Reduction::kMax), 4);
  EXPECT_EQ(R(t, Reduction::kMean), 0.5);
  EXPECT_EQ(R(t, Reduction::kSum), 2);
  EXPECT_EQ(R(t, Reduction::kProd), 24);
  EXPECT_EQ(R(t, Reduction::kVariance), 7.25);  // population: mean of (x - 0.5)^2
  EXPECT_DOUBLE_EQ(R(t, Reduction::kStd), std::sqrt(7.25));
  EXPECT_EQ(R(t, Reduction::kL1), 10);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kL2), std::sqrt(30.0));
  EXPECT_EQ(R(t, Reduction::kMin, true), 1);
  EXPECT_EQ(R(t, Reduction::kMax, true), 4);
  EXPECT_EQ(R(t, Reduction::kMean, true), 2.5);
  EXPECT_EQ(R(t, Reduction::kSum, true), 10);
  EXPECT_EQ(R(t, Reduction::kVariance, true), 1.25);
  EXPECT_EQ(R(t, Reduction::kL1, true), 10);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kL2, true), std::sqrt(30.0));
}

TEST(ComputeReductionTest, NormsAreElementWiseForEveryRank) {
  // smdebug gives matrix norms for 2-D (l1 = max column sum = 6 here); litmus is element-wise.
  const Tensor m = Make<float>(DType::kFloat32, {2, 2}, {1, -2, 3, 4});
  EXPECT_EQ(R(m, Reduction::kL1), 10);
  EXPECT_DOUBLE_EQ(R(m, Reduction::kL2), std::sqrt(30.0));
  const Tensor r4 = Make<float>(DType::kFloat32, {1, 2, 1, 2}, {1, -2, 3, 4});
  EXPECT_EQ(R(r4, Reduction::kL1), 10);
  const Tensor scalar = Make<float>(DType::kFloat32, {}, {-0.5f});
  EXPECT_EQ(R(scalar, Reduction::kL1), 0.5);
  EXPECT_EQ(R(scalar, Reduction::kL2), 0.5);
  EXPECT_EQ(R(scalar, Reduction::kMean), -0.5);
  EXPECT_EQ(R(scalar, Reduction::kMin), -0.5);
  EXPECT_EQ(R(scalar, Reduction::kStd), 0);
  EXPECT_EQ(R(scalar, Reduction::kProd, true), 0.5);
}

TEST(ComputeReductionTest, NaNPropagatesEverywhere) {
  // NaN in the vectorised body (index 9), in the tail (36) and as the first element.
  for (int64_t nan_at : {0, 9, 36}) {
    std::vector<float> v(37, 1.0f);
    v[nan_at] = std::numeric_limits<float>::quiet_NaN();
    const Tensor t = Make1D(DType::kFloat32, v);
    for (Reduction r : layout::kAllReductions) {
      for (bool abs : {false, true}) {
        EXPECT_TRUE(std::isnan(R(t, r, abs)))
            << layout::ReductionName(r) << " abs=" << abs << " nan_at=" << nan_at;
      }
    }
  }
  const Tensor all_nan = Make1D<double>(DType::kFloat64, {kNaN, kNaN, kNaN});
  EXPECT_TRUE(std::isnan(R(all_nan, Reduction::kMax)));
}

TEST(ComputeReductionTest, InfinitiesFollowIeee) {
  const Tensor t = Make1D<float>(DType::kFloat32, {INFINITY, -INFINITY, 1});
  EXPECT_EQ(R(t, Reduction::kMax), kInf);
  EXPECT_EQ(R(t, Reduction::kMin), -kInf);
  EXPECT_TRUE(std::isnan(R(t, Reduction::kSum)));  // inf + -inf
  EXPECT_TRUE(std::isnan(R(t, Reduction::kMean)));
  EXPECT_EQ(R(t, Reduction::kSum, true), kInf);
  EXPECT_EQ(R(t, Reduction::kL2), kInf);
  EXPECT_EQ(R(t, Reduction::kL1), kInf);
  EXPECT_EQ(R(t, Reduction::kProd), -kInf);
  const Tensor pos = Make1D<double>(DType::kFloat64, {kInf, 1});
  EXPECT_TRUE(std::isnan(R(pos, Reduction::kVariance)));  // inf - inf in the second pass
  // Values whose float32 sum would overflow are finite in double.
  const Tensor big = Make1D<float>(DType::kFloat32, {FLT_MAX, FLT_MAX});
  EXPECT_EQ(R(big, Reduction::kSum), 2.0 * FLT_MAX);
}

TEST(ComputeReductionTest, AbsOfIntegersInTheDoubleDomain) {
  const Tensor t = Make<int32_t>(DType::kInt32, {2, 2}, {INT32_MIN, -7, 0, INT32_MAX});
  EXPECT_EQ(R(t, Reduction::kMin), INT32_MIN);
  EXPECT_EQ(R(t, Reduction::kMax), INT32_MAX);
  EXPECT_EQ(R(t, Reduction::kSum), -8);
  EXPECT_EQ(R(t, Reduction::kMean), -2);
  EXPECT_EQ(R(t, Reduction::kMax, true), 2147483648.0);  // smdebug wraps to INT32_MIN
  EXPECT_EQ(R(t, Reduction::kMin, true), 0);
  EXPECT_EQ(R(t, Reduction::kSum, true), 4294967302.0);  // smdebug: 6
  EXPECT_EQ(R(t, Reduction::kL1), 4294967302.0);
  const Tensor i64 = Make1D<int64_t>(DType::kInt64, {INT64_MIN, 1});
  EXPECT_EQ(R(i64, Reduction::kMax, true), 0x1p63);
  const Tensor i8 = Make1D<int8_t>(DType::kInt8, {-128, 127});
  EXPECT_EQ(R(i8, Reduction::kSum, true), 255);
  const Tensor i16 = Make1D<int16_t>(DType::kInt16, {-32768, 2});
  EXPECT_EQ(R(i16, Reduction::kMin), -32768);
  const Tensor u64 = Make1D<uint64_t>(DType::kUInt64, {UINT64_MAX, 1});
  EXPECT_EQ(R(u64, Reduction::kMax), 0x1p64);  // no wrapping
  const Tensor u32 = Make1D<uint32_t>(DType::kUInt32, {UINT32_MAX, UINT32_MAX});
  EXPECT_EQ(R(u32, Reduction::kSum), 2.0 * UINT32_MAX);
  const Tensor u16 = Make1D<uint16_t>(DType::kUInt16, {65535, 1});
  EXPECT_EQ(R(u16, Reduction::kMean), 32768);
  const Tensor u8 = Make1D<uint8_t>(DType::kUInt8, {255, 255, 255});
  EXPECT_EQ(R(u8, Reduction::kProd), 255.0 * 255 * 255);
}

TEST(ComputeReductionTest, BoolCountsAsZeroOne) {
  const Tensor t = Make1D<uint8_t>(DType::kBool, {1, 0, 1, 1, 0, 0, 0});
  EXPECT_EQ(R(t, Reduction::kSum), 3);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kMean), 3.0 / 7);
  EXPECT_EQ(R(t, Reduction::kMin), 0);
  EXPECT_EQ(R(t, Reduction::kMax), 1);
  EXPECT_EQ(R(t, Reduction::kProd), 0);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kL2), std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(R(t, Reduction::kVariance), 3.0 / 7 * 4.0 / 7);
  // Any non-zero byte is true.
  const Tensor odd = Make1D<uint8_t>(DType::kBool, {2, 255});
  EXPECT_EQ(R(odd, Reduction::kSum), 2);
}

TEST(ComputeReductionTest, Float16AccumulatesInDouble) {
  // 65504 is float16's max; numpy's float16 sum is inf, litmus's is finite.
  const uint16_t kMaxHalf = 0x7bff, kMinusTwo = 0xc000;
  const Tensor t = Make1D<uint16_t>(DType::kFloat16, {kMaxHalf, kMaxHalf, kMinusTwo});
  EXPECT_EQ(R(t, Reduction::kSum), 131006);
  EXPECT_EQ(R(t, Reduction::kSum, true), 131010);
  EXPECT_EQ(R(t, Reduction::kMin), -2);
  EXPECT_TRUE(std::isfinite(R(t, Reduction::kVariance)));
  EXPECT_DOUBLE_EQ(R(t, Reduction::kL2), std::sqrt(2.0 * 65504.0 * 65504.0 + 4));
}

// The reductions' internal float16 conversion agrees with litmus::HalfToFloat on every pattern.
TEST(ComputeReductionTest, Float16ConversionIsExactForAllPatterns) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  const Tensor t = Make1D(DType::kFloat16, all);
  // NaN patterns are among them.
  EXPECT_TRUE(std::isnan(R(t, Reduction::kSum)));
  for (uint32_t i = 0; i < 65536; ++i) {
    const Tensor one = Make<uint16_t>(DType::kFloat16, {}, {static_cast<uint16_t>(i)});
    const double want = HalfToFloat(static_cast<uint16_t>(i));
    const double got = R(one, Reduction::kMax);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << i;
    } else {
      ASSERT_EQ(got, want) << std::hex << i;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << std::hex << i;
      ASSERT_EQ(R(one, Reduction::kMean, true), std::fabs(want)) << std::hex << i;
    }
  }
}

TEST(ComputeReductionTest, ComplexOnlyOverMagnitudes) {
  // exotic/complex128 of synthetic_dtypes: [1+2j, -3.5-4j]; smdebug's abs_* and 1-D l1/l2 values.
  const Tensor t = Make<double>(DType::kComplex128, {2}, {1, 2, -3.5, -4});
  EXPECT_DOUBLE_EQ(R(t, Reduction::kMin, true), 2.23606797749979);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kMax, true), 5.315072906367325);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kMean, true), 3.7755704419335574);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kSum, true), 7.551140883867115);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kProd, true), 11.884864324004715);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kStd, true), 1.5395024644337676);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kVariance, true), 2.370067837997644);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kL1), 7.551140883867115);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kL2), 5.766281297335398);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kL1, true), 7.551140883867115);
  EXPECT_DOUBLE_EQ(R(t, Reduction::kL2, true), 5.766281297335398);
  for (Reduction r : {Reduction::kMin, Reduction::kMax, Reduction::kMean, Reduction::kSum,
                      Reduction::kProd, Reduction::kStd, Reduction::kVariance}) {
    StatusOr<double> v = ComputeReduction(t, r, false);
    EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument) << layout::ReductionName(r);
    EXPECT_THAT(v.status().message(), HasSubstr("unsupported for complex"));
  }
  const Tensor c64 = Make<float>(DType::kComplex64, {2}, {3, 4, 0, -1});
  EXPECT_EQ(R(c64, Reduction::kMax, true), 5);
  EXPECT_EQ(R(c64, Reduction::kSum, true), 6);
  EXPECT_EQ(ComputeReduction(c64, Reduction::kMean, false).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ComputeReductionTest, StringsAreRejected) {
  const Tensor s({2}, {"a", "b"});
  for (Reduction r : layout::kAllReductions) {
    EXPECT_EQ(ComputeReduction(s, r, false).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(ComputeReduction(s, r, true).status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(ComputeReductionTest, EmptyTensors) {
  for (const Tensor& t : {Tensor(DType::kFloat32, {0}, {}, nullptr),
                          Tensor(DType::kInt32, {0, 3}, {}, nullptr),
                          Tensor(DType::kComplex128, {0}, {}, nullptr)}) {
    for (bool abs : {false, true}) {
      const bool complex = t.dtype() == DType::kComplex128;
      if (!complex || abs) {
        EXPECT_EQ(R(t, Reduction::kSum, abs), 0);
        EXPECT_EQ(R(t, Reduction::kProd, abs), 1);
        EXPECT_TRUE(std::isnan(R(t, Reduction::kMean, abs)));
        EXPECT_TRUE(std::isnan(R(t, Reduction::kStd, abs)));
        EXPECT_TRUE(std::isnan(R(t, Reduction::kVariance, abs)));
        for (Reduction r : {Reduction::kMin, Reduction::kMax}) {
          StatusOr<double> v = ComputeReduction(t, r, abs);
          EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
          EXPECT_THAT(v.status().message(), HasSubstr("reduction undefined on empty tensor"));
        }
      }
      EXPECT_EQ(R(t, Reduction::kL1, abs), 0);
      EXPECT_EQ(R(t, Reduction::kL2, abs), 0);
    }
  }
}

// Reference reductions in long double, element by element.
long double RefValue(const Tensor& t, int64_t i, bool abs) {
  long double x = t.ElementAsDouble(i);
  if (IsComplex(t.dtype())) x = std::abs(t.ElementAsComplex(i));
  return abs ? std::fabs(x) : x;
}

long double Reference(const Tensor& t, Reduction r, bool abs) {
  const int64_t n = t.num_elements();
  long double sum = 0, sum_abs = 0, sum_sq = 0, prod = 1;
  long double mn = INFINITY, mx = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    const long double x = RefValue(t, i, abs);
    sum += x;
    sum_abs += std::fabs(x);
    sum_sq += x * x;
    prod *= x;
    mn = std::min(mn, x);
    mx = std::max(mx, x);
  }
  const long double mean = sum / n;
  long double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += (RefValue(t, i, abs) - mean) * (RefValue(t, i, abs) - mean);
  switch (r) {
    case Reduction::kMin: return mn;
    case Reduction::kMax: return mx;
    case Reduction::kMean: return mean;
    case Reduction::kStd: return std::sqrt(ss / n);
    case Reduction::kVariance: return ss / n;
    case Reduction::kSum: return sum;
    case Reduction::kProd: return prod;
    case Reduction::kL1: return sum_abs;
    case Reduction::kL2: return std::sqrt(sum_sq);
  }
  return 0;
}

// Every size from 1 to 300 and a few past the 1024-element block and cascade boundaries, for
// several dtypes: all kernels and their tails agree with the long-double reference.
TEST(ComputeReductionTest, AgreesWithReferenceOnRandomData) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal(0.3, 2.0);
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= 300; ++n) sizes.push_back(n);
  for (int64_t n : {1023, 1024, 1025, 2048, 3 * 1024 + 7, 5 * 1024, 100'003}) sizes.push_back(n);
  for (int64_t n : sizes) {
    std::vector<float> f32(n);
    std::vector<double> f64(n);
    std::vector<int32_t> i32(n);
    std::vector<uint16_t> f16(n);
    std::vector<float> c64(2 * n);
    for (int64_t i = 0; i < n; ++i) {
      f32[i] = static_cast<float>(normal(rng));
      f64[i] = normal(rng) * 1e6;
      i32[i] = static_cast<int32_t>(rng());
      f16[i] = FloatToHalf(static_cast<float>(normal(rng)));
      c64[2 * i] = static_cast<float>(normal(rng));
      c64[2 * i + 1] = static_cast<float>(normal(rng));
    }
    const Tensor tensors[] = {Make1D(DType::kFloat32, f32), Make1D(DType::kFloat64, f64),
                              Make1D(DType::kInt32, i32), Make1D(DType::kFloat16, f16),
                              Make(DType::kComplex64, {n}, c64)};
    for (const Tensor& t : tensors) {
      for (Reduction r : layout::kAllReductions) {
        if (r == Reduction::kProd && n > 30) continue;  // would overflow double; covered elsewhere
        for (bool abs : {false, true}) {
          if (IsComplex(t.dtype()) && !abs) continue;
          const long double want = Reference(t, r, abs);
          const double got = R(t, r, abs);
          // Scale: the data's magnitude (variance is quadratic in it).
          long double scale = 0;
          for (int64_t i = 0; i < n; ++i) scale += std::fabs(RefValue(t, i, false)) / n;
          if (r == Reduction::kVariance) scale *= scale;
          if (r == Reduction::kSum || r == Reduction::kL1) scale *= n;
          if (r == Reduction::kL2) scale *= std::sqrt(static_cast<long double>(n));
          if (r == Reduction::kProd) scale = std::fabs(want);
          EXPECT_LE(std::fabs(got - want), 1e-13L * scale + 1e-300L)
              << DTypeName(t.dtype()) << " n=" << n << " " << layout::ReductionName(r)
              << " abs=" << abs << " got " << got << " want " << static_cast<double>(want);
        }
      }
    }
  }
}

// Pairwise summation: ten million float32 0.1 sum to 10^6 within float64 rounding, where a naive
// float32 loop would be off by whole percents.
TEST(ComputeReductionTest, LongSumsStayAccurate) {
  const int64_t n = 10'000'000;
  const Tensor t = Make1D(DType::kFloat32, std::vector<float>(n, 0.1f));
  const double want = static_cast<double>(0.1f) * n;
  EXPECT_NEAR(R(t, Reduction::kSum), want, want * 1e-14);
  EXPECT_NEAR(R(t, Reduction::kMean), static_cast<double>(0.1f), 1e-15);
  EXPECT_LE(R(t, Reduction::kVariance), 1e-25);
}

// ---------------------------------------------------------------------------------------------
// Agreement with smdebug's values in expected.json where the semantics coincide.

json ReadJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

double JsonDouble(const json& v) {
  if (v.is_string()) {
    const std::string s = v;
    if (s == "nan") return kNaN;
    if (s == "inf") return kInf;
    if (s == "-inf") return -kInf;
  }
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  return v.get<double>();
}

ByteBuffer BufferOf(const std::string& bytes) {
  ByteBuffer b = ByteBuffer::Allocate(bytes.size());
  std::memcpy(b.data.get(), bytes.data(), bytes.size());
  return b;
}

// Compares every reduction smdebug computed for worker_0 of `trial` with ours; returns how many
// were compared. Skipped, because smdebug's semantics differ there (docs/compatibility.md):
// float16 (computed in half), int8 (read as uint8), complex (complex results), abs_* of signed
// ints (wrap), l1/l2 unless 1-D (matrix norms, errors), prod of float32 with many elements,
// integer products beyond 2^63 (wrap); float32 results smdebug overflowed to inf are checked to
// be finite here and beyond FLT_MAX.
int CompareWithSmdebug(std::string_view trial) {
  const std::filesystem::path root = testing::FixturePath(trial);
  const json expected = ReadJson(root.string() + ".expected.json");
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root / "index/000000000")) {
    const std::string file = entry.path().filename().string();
    if (file.find("_worker_0.json") == std::string::npos) continue;
    const std::string step = std::to_string(std::stoll(file.substr(0, 12)));
    const json index = ReadJson(entry.path());
    const std::string events = testing::ReadWholeFile(root / index["meta"]["event_file_name"].get<std::string>());
    for (const json& p : index["tensor_payload"]) {
      const std::string name = p["tensorname"];
      const json& bw = expected["tensors"][name]["per_step"][step]["by_worker"]["worker_0"];
      if (!bw["value"].is_object() || !bw["value"].contains("dtype")) continue;
      const uint64_t offset = p["start_idx"];
      StatusOr<TensorPtr> decoded = DecodeTensorRecord(
          BufferOf(events.substr(offset, p["length"].get<size_t>())), file, offset, name);
      EXPECT_TRUE(decoded.ok()) << decoded.status().ToString();
      if (!decoded.ok()) continue;
      const Tensor& t = **decoded;
      const DType d = t.dtype();
      if (t.is_string() || d == DType::kFloat16 || d == DType::kInt8 || IsComplex(d)) continue;
      const bool signed_int = d == DType::kInt16 || d == DType::kInt32 || d == DType::kInt64;
      const int64_t n = t.num_elements();
      double mean_abs = 0, mean_sq = 0;
      for (int64_t i = 0; i < n; ++i) {
        mean_abs += std::fabs(t.ElementAsDouble(i)) / n;
        mean_sq += t.ElementAsDouble(i) * t.ElementAsDouble(i) / n;
      }
      for (auto it = bw["reductions"].begin(); it != bw["reductions"].end(); ++it) {
        if (it.value()["value"].is_null()) continue;  // smdebug raised
        std::string rname = it.key();
        const bool abs = rname.rfind("abs_", 0) == 0;
        if (abs) rname = rname.substr(4);
        const Reduction r = *layout::ReductionFromName(rname);
        if (abs && signed_int) continue;
        if ((r == Reduction::kL1 || r == Reduction::kL2) && t.shape().size() != 1) continue;
        if (r == Reduction::kProd && d == DType::kFloat32 && n > 16) continue;
        const double want = JsonDouble(it.value()["value"]);
        const double got = R(t, r, abs);
        const std::string ctx = std::string(trial) + " " + name + "@" + step + " " + it.key();
        // smdebug's integer products wrap in int64/uint64; litmus's are doubles.
        if (r == Reduction::kProd && !IsFloating(d) && std::fabs(got) >= 0x1p63) continue;
        ++compared;
        if (std::isinf(want) && d == DType::kFloat32 && std::isfinite(mean_sq)) {
          // smdebug overflowed float32 on finite data, in the result or in an intermediate sum
          // (of squares for l2/std/variance); litmus's double result is finite.
          EXPECT_TRUE(std::isfinite(got)) << ctx;
          double intermediate = std::fabs(got);
          if (r == Reduction::kMean || r == Reduction::kVariance) intermediate *= n;
          if (r == Reduction::kL2) intermediate = got * got;
          if (r == Reduction::kStd) intermediate = got * got * n;
          EXPECT_GT(intermediate, FLT_MAX) << ctx;
          EXPECT_EQ(std::signbit(got), std::signbit(want)) << ctx;
          continue;
        }
        if (!std::isfinite(want)) {
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got)) << ctx << " got " << got;
          } else {
            EXPECT_EQ(got, want) << ctx;
          }
          continue;
        }
        double tol = 1e-12 * std::fabs(want);
        if (d == DType::kFloat32) {
          switch (r) {
            case Reduction::kMin:
            case Reduction::kMax: tol = 0; break;
            case Reduction::kMean:
            case Reduction::kStd: tol = 1e-5 * mean_abs; break;
            case Reduction::kSum:
            case Reduction::kL1: tol = 1e-5 * mean_abs * n; break;
            case Reduction::kVariance: tol = 1e-5 * mean_sq; break;
            case Reduction::kL2: tol = 1e-5 * std::sqrt(mean_sq * n); break;
            case Reduction::kProd: tol = 1e-5 * std::fabs(want); break;
          }
        }
        EXPECT_LE(std::fabs(got - want), tol) << ctx << " got " << got << " want " << want;
      }
    }
  }
  return compared;
}

TEST(ComputeReductionTest, AgreesWithSmdebugOnSyntheticDtypes) {
  // The exact count guards against comparisons being skipped silently.
  EXPECT_EQ(CompareWithSmdebug("synthetic_dtypes"), 599);
}

TEST(ComputeReductionTest, AgreesWithSmdebugOnPyTorchTrials) {
  EXPECT_EQ(CompareWithSmdebug("pt_exploding"), 2208);
  EXPECT_EQ(CompareWithSmdebug("pt_run_complete"), 2632);
}

// ---------------------------------------------------------------------------------------------

TEST(StoredReductionValueTest, OneNumericElement) {
  LITMUS_ASSERT_OK_AND_ASSIGN(double v, StoredReductionValue(Make<float>(DType::kFloat32, {}, {0.25f})));
  EXPECT_EQ(v, 0.25);
  LITMUS_ASSERT_OK_AND_ASSIGN(v, StoredReductionValue(Make<double>(DType::kFloat64, {1}, {-3.5})));
  EXPECT_EQ(v, -3.5);
  LITMUS_ASSERT_OK_AND_ASSIGN(v, StoredReductionValue(Make<int64_t>(DType::kInt64, {1, 1, 1}, {-7})));
  EXPECT_EQ(v, -7);
  LITMUS_ASSERT_OK_AND_ASSIGN(v, StoredReductionValue(Make<uint16_t>(DType::kFloat16, {}, {0x3e00})));
  EXPECT_EQ(v, 1.5);
  LITMUS_ASSERT_OK_AND_ASSIGN(v, StoredReductionValue(Make<uint8_t>(DType::kBool, {}, {1})));
  EXPECT_EQ(v, 1);
  LITMUS_ASSERT_OK_AND_ASSIGN(v, StoredReductionValue(Make<float>(DType::kFloat32, {}, {NAN})));
  EXPECT_TRUE(std::isnan(v));
}

TEST(StoredReductionValueTest, RejectsEverythingElse) {
  EXPECT_EQ(StoredReductionValue(Make<float>(DType::kFloat32, {2}, {1, 2})).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(StoredReductionValue(Tensor(DType::kFloat32, {0}, {}, nullptr)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(StoredReductionValue(Make<double>(DType::kComplex128, {}, {1, 0})).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(StoredReductionValue(Tensor({1}, {"1.5"})).status().code(), StatusCode::kInvalidArgument);
}

// ComputeReductions against ComputeReduction, request by request, bit for bit: every reduction
// with and without abs, alone, in pairs and all together, on float32 (the fused pass: sizes
// around its lanes and blocks, infinities, NaN in the vector part and in the scalar tail, zeros
// of both signs), and on other dtypes and empty tensors (which take the one-by-one path).
TEST(ComputeReductionsTest, EachResultIsComputeReductionBitForBit) {
  std::vector<ReductionRequest> all;
  for (Reduction r : {Reduction::kMin, Reduction::kMax, Reduction::kMean, Reduction::kSum, Reduction::kProd,
                      Reduction::kStd, Reduction::kVariance, Reduction::kL1, Reduction::kL2}) {
    for (bool abs : {false, true}) all.push_back({r, abs});
  }
  std::vector<std::vector<ReductionRequest>> request_sets = {all};
  for (const ReductionRequest& a : all) {
    request_sets.push_back({a});
    for (const ReductionRequest& b : all) request_sets.push_back({a, b});
  }
  const auto check = [&](const Tensor& t, const std::string& what) {
    for (const std::vector<ReductionRequest>& requests : request_sets) {
      const std::vector<StatusOr<double>> got = ComputeReductions(t, requests);
      ASSERT_EQ(got.size(), requests.size());
      // The allocation-free form (the reader's) says the same, failures included.
      std::vector<double> into(requests.size(), -1);
      std::unique_ptr<bool[]> ok(new bool[requests.size()]);
      ComputeReductionsInto(t, requests, into, std::span<bool>(ok.get(), requests.size()));
      for (size_t i = 0; i < requests.size(); ++i) {
        ASSERT_EQ(ok[i], got[i].ok()) << what << " request " << i;
        if (!got[i].ok()) continue;
        if (std::isnan(*got[i])) {
          EXPECT_TRUE(std::isnan(into[i])) << what << " request " << i;
        } else {
          EXPECT_EQ(std::bit_cast<uint64_t>(into[i]), std::bit_cast<uint64_t>(*got[i])) << what << " request " << i;
        }
      }
      for (size_t i = 0; i < requests.size(); ++i) {
        const StatusOr<double> want = ComputeReduction(t, requests[i].reduction, requests[i].abs);
        const std::string name = what + " " + (requests[i].abs ? "abs_" : "") +
                                 std::string(layout::ReductionName(requests[i].reduction)) + " of " +
                                 std::to_string(requests.size());
        ASSERT_EQ(got[i].ok(), want.ok()) << name;
        if (!want.ok()) {
          EXPECT_EQ(got[i].status().code(), want.status().code()) << name;
        } else if (std::isnan(*want)) {
          EXPECT_TRUE(std::isnan(*got[i])) << name;
        } else {
          EXPECT_EQ(std::bit_cast<uint64_t>(*got[i]), std::bit_cast<uint64_t>(*want)) << name << ": " << *got[i] << " vs " << *want;
        }
      }
    }
  };
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.5f, 2.0f);
  for (int64_t n : {1, 5, 8, 9, 1023, 1024, 1025, 3001}) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = normal(rng);
    for (int variant = 0; variant < 5; ++variant) {
      std::vector<float> w = v;
      if (variant == 1) w[w.size() / 2] = -std::numeric_limits<float>::infinity();
      if (variant == 2) w[w.size() / 3] = std::numeric_limits<float>::quiet_NaN();
      if (variant == 3) w.back() = std::numeric_limits<float>::quiet_NaN();
      if (variant == 4) {
        for (size_t i = 0; i < w.size(); ++i) w[i] = i % 2 == 0 ? -0.0f : 0.0f;
      }
      check(Make1D(DType::kFloat32, w), "float32 n=" + std::to_string(n) + " variant " + std::to_string(variant));
    }
  }
  check(Make1D<double>(DType::kFloat64, {1.5, -2.0, 3.25, kNaN}), "float64");
  check(Make1D<int32_t>(DType::kInt32, {1, -2, 3, 7, -9}), "int32");
  check(Make<double>(DType::kComplex128, {2}, {3, 4, -1, 0}), "complex128");
  check(Tensor(DType::kFloat32, {0}, {}, nullptr), "empty float32");
  check(Tensor({1}, {"text"}), "string");
}


// ComputeStatistics (the report's one pass) against what the report computed before: the mean,
// min and max of ComputeReductions (NaN where they are errors) and CountNonFinite, bit for bit,
// on every dtype, odd lengths, lengths around the pairwise block, NaN, infinities of both
// signs, signed zeros (which the lanes' order decides), empty tensors and strings.
TEST(ComputeStatisticsTest, EachFieldIsComputeReductionsAndCountNonFiniteBitForBit) {
  static constexpr std::array<ReductionRequest, 3> kRequests = {
      ReductionRequest{Reduction::kMean}, ReductionRequest{Reduction::kMin}, ReductionRequest{Reduction::kMax}};
  int checked = 0;
  const auto check = [&](const Tensor& t, const std::string& what) {
    ++checked;
    const TensorStatistics got = ComputeStatistics(t);
    if (t.is_string()) {
      EXPECT_EQ(got.elements, 0) << what;
      return;
    }
    EXPECT_EQ(got.elements, t.num_elements()) << what;
    const std::vector<StatusOr<double>> want = ComputeReductions(t, kRequests);
    const double fields[3] = {got.mean, got.min, got.max};
    for (size_t i = 0; i < 3; ++i) {
      const std::string name = what + " " + std::string(layout::ReductionName(kRequests[i].reduction));
      if (!want[i].ok() || std::isnan(*want[i])) {
        EXPECT_TRUE(std::isnan(fields[i])) << name << ": " << fields[i];
      } else {
        EXPECT_EQ(std::bit_cast<uint64_t>(fields[i]), std::bit_cast<uint64_t>(*want[i]))
            << name << ": " << fields[i] << " vs " << *want[i];
      }
    }
    const NonFiniteCounts counts = CountNonFinite(t);
    EXPECT_EQ(got.non_finite.nan, counts.nan) << what;
    EXPECT_EQ(got.non_finite.posinf, counts.posinf) << what;
    EXPECT_EQ(got.non_finite.neginf, counts.neginf) << what;
    // The same statistics from ComputeReductions (the trial's prefetch: in the rules' pass),
    // whose results stay those of ComputeReduction.
    const auto bits = [](double x) { return std::isnan(x) ? uint64_t{1} : std::bit_cast<uint64_t>(x); };
    for (const std::vector<ReductionRequest>& requests :
         std::vector<std::vector<ReductionRequest>>{{},
                                                    {{Reduction::kMean, true}},
                                                    {{Reduction::kMax, true}, {Reduction::kMean, true}},
                                                    {{Reduction::kMin}, {Reduction::kMax}, {Reduction::kVariance}}}) {
      TensorStatistics with;
      const std::vector<StatusOr<double>> results = ComputeReductions(t, requests, &with);
      EXPECT_EQ(with.elements, got.elements) << what;
      EXPECT_EQ(bits(with.mean), bits(got.mean)) << what;
      EXPECT_EQ(bits(with.min), bits(got.min)) << what;
      EXPECT_EQ(bits(with.max), bits(got.max)) << what;
      EXPECT_EQ(with.non_finite.nan, counts.nan) << what;
      EXPECT_EQ(with.non_finite.posinf + with.non_finite.neginf, counts.posinf + counts.neginf) << what;
      for (size_t i = 0; i < requests.size(); ++i) {
        const StatusOr<double> alone = ComputeReduction(t, requests[i].reduction, requests[i].abs);
        ASSERT_EQ(results[i].ok(), alone.ok()) << what;
        if (alone.ok()) {
          EXPECT_EQ(bits(*results[i]), bits(*alone)) << what << " request " << i;
        }
      }
    }
  };
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0.5, 2.0);
  const float nan_f = std::numeric_limits<float>::quiet_NaN(), inf_f = std::numeric_limits<float>::infinity();
  for (int64_t n : {1, 2, 5, 7, 8, 9, 15, 17, 1023, 1024, 1025, 2048, 3001}) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = normal(rng);
    for (int variant = 0; variant < 8; ++variant) {
      const std::string what = "n=" + std::to_string(n) + " variant " + std::to_string(variant);
      std::vector<float> f(v.begin(), v.end());
      std::vector<double> d = v;
      const auto set = [&](size_t i, double x) {
        f[i] = static_cast<float>(x);
        d[i] = x;
      };
      if (variant == 1) set(f.size() / 2, -kInf);
      if (variant == 2) set(f.size() / 3, kNaN);
      if (variant == 3) set(f.size() - 1, kNaN);  // (in the tail of odd lengths)
      if (variant == 4) {
        for (size_t i = 0; i < f.size(); ++i) set(i, i % 2 == 0 ? -0.0 : 0.0);
      }
      if (variant == 5) {  // several of each kind
        for (size_t i = 0; i < f.size(); i += 3) set(i, i % 2 == 0 ? kInf : -kInf);
        for (size_t i = 1; i < f.size(); i += 5) set(i, kNaN);
      }
      if (variant == 6) set(0, kInf);  // (the lanes start from the first element)
      if (variant == 7) {
        for (size_t i = 0; i < f.size(); ++i) set(i, 1e30 * (i % 2 == 0 ? 1 : -1));
      }
      check(Make1D(DType::kFloat32, f), "float32 " + what);
      check(Make1D(DType::kFloat64, d), "float64 " + what);
      std::vector<uint16_t> h(f.size());
      for (size_t i = 0; i < f.size(); ++i) {
        // (float16 bits: sign, 5 exponent bits, 10 mantissa bits; a few patterns of each kind)
        h[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(f[i]) >> 16 & 0x8000u) |
               static_cast<uint16_t>(i * 977u % 0x7c00u);
        if (std::isnan(f[i])) h[i] = 0x7e00;
        if (std::isinf(f[i])) h[i] = f[i] > 0 ? 0x7c00 : 0xfc00;
      }
      check(Make1D(DType::kFloat16, h), "float16 " + what);
    }
    std::vector<int32_t> i32(v.size());
    std::vector<int64_t> i64(v.size());
    std::vector<uint8_t> u8(v.size()), b(v.size());
    std::vector<int8_t> i8(v.size());
    std::vector<uint64_t> u64(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      i32[i] = static_cast<int32_t>(v[i] * 1e6);
      i64[i] = static_cast<int64_t>(v[i] * 1e15);
      u8[i] = static_cast<uint8_t>(i * 37);
      i8[i] = static_cast<int8_t>(i * 53);
      u64[i] = UINT64_MAX - i * 12345;
      b[i] = static_cast<uint8_t>(i % 3 == 0 ? 0 : i);
    }
    check(Make1D(DType::kInt32, i32), "int32 n=" + std::to_string(n));
    check(Make1D(DType::kInt64, i64), "int64 n=" + std::to_string(n));
    check(Make1D(DType::kUInt8, u8), "uint8 n=" + std::to_string(n));
    check(Make1D(DType::kInt8, i8), "int8 n=" + std::to_string(n));
    check(Make1D(DType::kUInt64, u64), "uint64 n=" + std::to_string(n));
    check(Make1D(DType::kBool, b), "bool n=" + std::to_string(n));
  }
  check(Make1D<int32_t>(DType::kInt32, {INT32_MIN, INT32_MAX, 0}), "int32 extremes");
  check(Make<double>(DType::kComplex128, {3}, {3, 4, kNaN, 0, -kInf, 1}), "complex128");
  check(Make<float>(DType::kComplex64, {1}, {1, nan_f}), "complex64");
  check(Make<float>(DType::kFloat32, {}, {-inf_f}), "0-d float32");
  check(Tensor(DType::kFloat32, {0}, {}, nullptr), "empty float32");
  check(Tensor(DType::kFloat64, {2, 0}, {}, nullptr), "empty float64");
  check(Tensor(DType::kInt32, {0}, {}, nullptr), "empty int32");
  check(Tensor({1}, {"text"}), "string");
  EXPECT_GT(checked, 300);
}

}  // namespace
}  // namespace litmus
