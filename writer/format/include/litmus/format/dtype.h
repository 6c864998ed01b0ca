// DataType: TensorFlow's DataType enum values as stored in TensorProto.dtype, and the facts litmus
// needs about each (element size, numpy name). Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace litmus {

// Values are TF's frozen enum values (types.proto); only the ones litmus reads/writes are named.
enum class DType : int32_t {
  kInvalid = 0,  // also how smdebug stores strings: dtype absent, values in string_val
  kFloat32 = 1,
  kFloat64 = 2,
  kInt32 = 3,
  kUInt8 = 4,
  kInt16 = 5,
  kInt8 = 6,
  kString = 7,
  kComplex64 = 8,
  kInt64 = 9,
  kBool = 10,
  kUInt16 = 17,
  kComplex128 = 18,
  kFloat16 = 19,
  kUInt32 = 22,
  kUInt64 = 23,
};

// Maps a raw TensorProto.dtype to a supported DType; nullopt for values litmus cannot decode
// (quantized types, bfloat16, resource, variant, float8, _REF variants...).
std::optional<DType> DTypeFromProto(int32_t value);

// Bytes per element in tensor_content; 0 for strings (kInvalid/kString).
size_t DTypeSize(DType dtype);

// numpy's name for the dtype: "float32", "int8", "complex128", "bool"...; "str" for strings.
std::string_view DTypeName(DType dtype);
// Inverse of DTypeName for numeric types (accepts "float16" and "half"); nullopt if unknown.
std::optional<DType> DTypeFromName(std::string_view name);

inline bool IsString(DType d) { return d == DType::kInvalid || d == DType::kString; }
inline bool IsFloating(DType d) { return d == DType::kFloat16 || d == DType::kFloat32 || d == DType::kFloat64; }
inline bool IsComplex(DType d) { return d == DType::kComplex64 || d == DType::kComplex128; }

// IEEE half -> float conversion (bit-exact, handles subnormals, inf, NaN).
float HalfToFloat(uint16_t bits);
// float -> IEEE half, round to nearest even.
uint16_t FloatToHalf(float value);

}  // namespace litmus
