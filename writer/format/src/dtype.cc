// DataType facts (element sizes, numpy names) and bit-exact IEEE half <-> float conversion
// (numpy's rules: NaN payloads kept, round to nearest even). Pure functions; thread-safe.
#include "litmus/format/dtype.h"

#include <bit>

namespace litmus {

std::optional<DType> DTypeFromProto(int32_t value) {
  switch (value) {
    case 0:
      return DType::kInvalid;
    case 1:
      return DType::kFloat32;
    case 2:
      return DType::kFloat64;
    case 3:
      return DType::kInt32;
    case 4:
      return DType::kUInt8;
    case 5:
      return DType::kInt16;
    case 6:
      return DType::kInt8;
    case 7:
      return DType::kString;
    case 8:
      return DType::kComplex64;
    case 9:
      return DType::kInt64;
    case 10:
      return DType::kBool;
    case 17:
      return DType::kUInt16;
    case 18:
      return DType::kComplex128;
    case 19:
      return DType::kFloat16;
    case 22:
      return DType::kUInt32;
    case 23:
      return DType::kUInt64;
    default:
      return std::nullopt;  // quantized, bfloat16, resource, variant, float8, _REF...
  }
}

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kInvalid:
    case DType::kString:
      return 0;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kBool:
      return 1;
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kFloat16:
      return 2;
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kFloat32:
      return 4;
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kFloat64:
    case DType::kComplex64:
      return 8;
    case DType::kComplex128:
      return 16;
  }
  return 0;
}

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kInvalid:
    case DType::kString:
      return "str";
    case DType::kFloat16:
      return "float16";
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kInt8:
      return "int8";
    case DType::kInt16:
      return "int16";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kUInt8:
      return "uint8";
    case DType::kUInt16:
      return "uint16";
    case DType::kUInt32:
      return "uint32";
    case DType::kUInt64:
      return "uint64";
    case DType::kBool:
      return "bool";
    case DType::kComplex64:
      return "complex64";
    case DType::kComplex128:
      return "complex128";
  }
  return "invalid";
}

std::optional<DType> DTypeFromName(std::string_view name) {
  static constexpr DType kNumeric[] = {
      DType::kFloat16, DType::kFloat32, DType::kFloat64,   DType::kInt8,      DType::kInt16,
      DType::kInt32,   DType::kInt64,   DType::kUInt8,     DType::kUInt16,    DType::kUInt32,
      DType::kUInt64,  DType::kBool,    DType::kComplex64, DType::kComplex128};
  if (name == "half") return DType::kFloat16;
  for (DType d : kNumeric) {
    if (DTypeName(d) == name) return d;
  }
  return std::nullopt;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf, or NaN with its payload kept
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);  // rebias 15 -> 127
  } else if (mant == 0) {
    bits = sign;  // +-0
  } else {
    // Subnormal: value = mant * 2^-24. Normalize so the leading 1 lands on bit 10.
    int e = 113;  // exponent field for 2^-14 (the smallest normal half)
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    bits = sign | (static_cast<uint32_t>(e) << 23) | ((mant & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t FloatToHalf(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  const uint32_t exp = (f >> 23) & 0xFFu;
  const uint32_t mant = f & 0x7FFFFFu;

  if (exp == 0xFF) {
    if (mant == 0) return sign | 0x7C00u;  // inf
    // NaN: keep the top payload bits; never let it collapse into inf.
    uint16_t h = static_cast<uint16_t>(0x7C00u | (mant >> 13));
    if (h == 0x7C00u) h = 0x7C01u;
    return sign | h;
  }
  const int32_t e = static_cast<int32_t>(exp) - 127 + 15;  // half exponent field if normal
  if (e >= 0x1F) return sign | 0x7C00u;                    // overflow -> inf
  if (e <= 0) {
    // Subnormal half (or zero). value = (1.mant) * 2^(exp-127); in half-subnormal units of
    // 2^-24 that is m24 * 2^(exp-127+24-23) with m24 the 24-bit significand.
    if (e < -10) return sign;  // below half the smallest subnormal: rounds to 0
    const uint32_t m24 = mant | 0x800000u;
    const int shift = 14 - e;  // 14..24
    uint32_t h = m24 >> shift;
    const uint32_t rem = m24 & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1u))) ++h;  // may carry into the normal range
    return sign | static_cast<uint16_t>(h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // carry may round up to inf: correct
  return sign | static_cast<uint16_t>(h);
}

}  // namespace litmus
