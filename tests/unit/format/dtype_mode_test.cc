// Tests for DType facts, half <-> float conversion (exhaustive over all 65536 halves) and Mode.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "litmus/format/dtype.h"
#include "litmus/format/mode.h"

namespace litmus {
namespace {

TEST(DTypeTest, ProtoValuesAndSizes) {
  struct Row {
    int32_t proto;
    DType dtype;
    size_t size;
    std::string_view name;
  };
  const Row rows[] = {
      {1, DType::kFloat32, 4, "float32"},
      {2, DType::kFloat64, 8, "float64"},
      {3, DType::kInt32, 4, "int32"},
      {4, DType::kUInt8, 1, "uint8"},
      {5, DType::kInt16, 2, "int16"},
      {6, DType::kInt8, 1, "int8"},
      {8, DType::kComplex64, 8, "complex64"},
      {9, DType::kInt64, 8, "int64"},
      {10, DType::kBool, 1, "bool"},
      {17, DType::kUInt16, 2, "uint16"},
      {18, DType::kComplex128, 16, "complex128"},
      {19, DType::kFloat16, 2, "float16"},
      {22, DType::kUInt32, 4, "uint32"},
      {23, DType::kUInt64, 8, "uint64"},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(DTypeFromProto(r.proto), r.dtype) << r.name;
    EXPECT_EQ(static_cast<int32_t>(r.dtype), r.proto);
    EXPECT_EQ(DTypeSize(r.dtype), r.size) << r.name;
    EXPECT_EQ(DTypeName(r.dtype), r.name);
    EXPECT_EQ(DTypeFromName(r.name), r.dtype) << r.name;
  }
  EXPECT_EQ(DTypeFromProto(0), DType::kInvalid);
  EXPECT_EQ(DTypeFromProto(7), DType::kString);
  EXPECT_EQ(DTypeName(DType::kInvalid), "str");
  EXPECT_EQ(DTypeName(DType::kString), "str");
  EXPECT_EQ(DTypeSize(DType::kInvalid), 0u);
  EXPECT_EQ(DTypeSize(DType::kString), 0u);
  for (int32_t unsupported : {11, 12, 13, 14, 15, 16, 20, 21, 24, 25, 101, 119, -1}) {
    EXPECT_EQ(DTypeFromProto(unsupported), std::nullopt) << unsupported;
  }
  EXPECT_EQ(DTypeFromName("half"), DType::kFloat16);
  EXPECT_EQ(DTypeFromName("str"), std::nullopt);
  EXPECT_EQ(DTypeFromName("float"), std::nullopt);
  EXPECT_TRUE(IsString(DType::kInvalid));
  EXPECT_TRUE(IsFloating(DType::kFloat16));
  EXPECT_TRUE(IsComplex(DType::kComplex64));
  EXPECT_FALSE(IsFloating(DType::kInt32));
}

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(HalfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xC000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(HalfToFloat(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(HalfToFloat(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(HalfToFloat(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7E00)));
  EXPECT_EQ(std::bit_cast<uint32_t>(HalfToFloat(0x8000)), 0x80000000u);  // -0
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);

  EXPECT_EQ(FloatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65519.99f), 0x7BFF);  // below the rounding midpoint to inf
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);   // midpoint, ties to even -> inf
  EXPECT_EQ(FloatToHalf(1e10f), 0x7C00);
  EXPECT_EQ(FloatToHalf(-1e10f), 0xFC00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // half of smallest subnormal: tie -> 0
  EXPECT_EQ(FloatToHalf(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 units: tie -> even (2)
  EXPECT_EQ(FloatToHalf(1e-30f), 0x0000);
  EXPECT_EQ(FloatToHalf(-1e-30f), 0x8000);
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie -> even
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie -> even (up)
  const uint16_t nan = FloatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  // A NaN whose payload lives only in the low bits must stay NaN, not become inf.
  EXPECT_EQ(FloatToHalf(std::bit_cast<float>(0x7F800001u)), 0x7C01);
}

TEST(HalfTest, AllHalvesRoundTripThroughFloat) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    ASSERT_EQ(FloatToHalf(f), h) << std::hex << h;  // NaN payloads survive too (numpy rules)
    const bool is_nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
    ASSERT_EQ(std::isnan(f), is_nan) << std::hex << h;
    if (!is_nan) {
      // Check the value independently: (-1)^s * 2^(e-15) * (1 + m/1024), or subnormal.
      const int e = (h >> 10) & 0x1F;
      const int m = h & 0x3FF;
      const double sign = (h & 0x8000) ? -1.0 : 1.0;
      double expected;
      if (e == 0x1F)
        expected = sign * std::numeric_limits<double>::infinity();
      else if (e == 0)
        expected = sign * std::ldexp(m, -24);
      else
        expected = sign * std::ldexp(1024 + m, e - 25);
      ASSERT_EQ(static_cast<double>(f), expected) << std::hex << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0);
    }
  }
}

// FloatToHalf picks the nearest half (ties to even) for random floats in and around the
// half range, checked against the neighbouring halves in double precision.
TEST(HalfTest, FloatToHalfRoundsToNearestEven) {
  std::mt19937 rng(11);
  for (int i = 0; i < 200000; ++i) {
    // Exponents from well below the subnormal range to above the max.
    const uint32_t bits = (rng() & 0x807FFFFFu) | ((96u + rng() % 50u) << 23);
    const float f = std::bit_cast<float>(bits);
    const uint16_t h = FloatToHalf(f);
    const double x = std::fabs(static_cast<double>(f));
    const uint16_t mag = h & 0x7FFF;
    ASSERT_EQ((h & 0x8000) != 0, std::signbit(f));
    const double got = HalfToFloat(mag);
    // Rounding boundary to inf is 65520 (the midpoint between 65504 and 2^16).
    if (x >= 65520.0) {
      ASSERT_EQ(mag, 0x7C00) << x;
      continue;
    }
    ASSERT_LT(mag, 0x7C00) << x;
    const double below = mag > 0 ? static_cast<double>(HalfToFloat(mag - 1)) : -1.0;
    const double above = mag < 0x7BFF ? static_cast<double>(HalfToFloat(mag + 1)) : 65536.0;
    const double err = std::fabs(got - x);
    ASSERT_LE(err, std::fabs(x - above)) << x;
    if (mag > 0) {
      ASSERT_LE(err, std::fabs(x - below)) << x;
    }
    if (err == std::fabs(x - above) || (mag > 0 && err == std::fabs(x - below))) {
      ASSERT_EQ(mag & 1, 0) << "tie must go to even: " << x;
    }
  }
}

TEST(ModeTest, NamesAndValues) {
  EXPECT_EQ(ModeName(Mode::kTrain), "TRAIN");
  EXPECT_EQ(ModeName(Mode::kEval), "EVAL");
  EXPECT_EQ(ModeName(Mode::kPredict), "PREDICT");
  EXPECT_EQ(ModeName(Mode::kGlobal), "GLOBAL");
  for (Mode m : kAllModes) {
    EXPECT_EQ(ModeFromName(ModeName(m)), m);
    EXPECT_EQ(ModeFromValue(static_cast<int64_t>(m)), m);
  }
  EXPECT_EQ(ModeFromName(" EVAL\n"), Mode::kEval);  // smdebug strips
  EXPECT_EQ(ModeFromName("eval"), std::nullopt);
  EXPECT_EQ(ModeFromName(""), std::nullopt);
  EXPECT_EQ(ModeFromName("   "), std::nullopt);
  EXPECT_EQ(ModeFromValue(0), std::nullopt);
  EXPECT_EQ(ModeFromValue(5), std::nullopt);
}

}  // namespace
}  // namespace litmus
