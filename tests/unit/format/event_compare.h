// Test helper: checks a hand-decoded EventView against what the protobuf-generated classes make
// of the same payload. Single-threaded test code.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "litmus/format/event_codec.h"
#include "litmus/format/proto/event.pb.h"

namespace litmus::testing {

// Decodes the varints of a packed field (already validated by DecodeEvent).
inline std::vector<uint64_t> PackedVarints(std::span<const std::byte> b) {
  std::vector<uint64_t> out;
  uint64_t v = 0;
  int shift = 0;
  for (std::byte x : b) {
    const auto u = std::to_integer<uint64_t>(x);
    if (shift < 64) v |= (u & 0x7F) << shift;
    shift += 7;
    if ((u & 0x80) == 0) {
      out.push_back(v);
      v = 0;
      shift = 0;
    }
  }
  return out;
}

template <typename T>
std::vector<T> PackedFixed(std::span<const std::byte> b) {
  std::vector<T> out(b.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), b.data(), out.size() * sizeof(T));
  return out;
}

template <typename T>
std::vector<uint64_t> Bits(const T& repeated) {
  std::vector<uint64_t> out;
  for (auto x : repeated) {
    if constexpr (sizeof(x) == 4 && std::is_floating_point_v<decltype(x)>)
      out.push_back(std::bit_cast<uint32_t>(x));
    else if constexpr (sizeof(x) == 8 && std::is_floating_point_v<decltype(x)>)
      out.push_back(std::bit_cast<uint64_t>(x));
    else
      out.push_back(static_cast<uint64_t>(x));
  }
  return out;
}

// Parses the plugin_data content the way smdebug's reader does (int()); nullopt if not a number.
inline std::optional<int64_t> PyInt(const std::string& s) {
  size_t pos = 0;
  try {
    const long long v = std::stoll(s, &pos, 10);
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
    if (pos != s.size()) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

inline ::testing::AssertionResult MatchesGenerated(std::span<const std::byte> payload,
                                                   const EventView& v) {
  litmus::format::proto::Event event;
  if (!event.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return ::testing::AssertionFailure()
           << "generated parser rejects a payload DecodeEvent accepted";
  }
  auto fail = [] { return ::testing::AssertionFailure(); };
  if (std::bit_cast<uint64_t>(event.wall_time()) != std::bit_cast<uint64_t>(v.wall_time))
    return fail() << "wall_time";
  if (event.step() != v.step) return fail() << "step " << event.step() << " vs " << v.step;
  const bool has_value = event.has_summary() && event.summary().value_size() > 0;
  if (!has_value) {
    if (!v.tag.empty() || v.has_tensor || v.mode || v.mode_step || v.simple_value)
      return fail() << "phantom value";
    return ::testing::AssertionSuccess();
  }
  const auto& value = event.summary().value(0);
  if (value.tag() != v.tag) return fail() << "tag '" << value.tag() << "' vs '" << v.tag << "'";

  std::optional<Mode> mode;
  std::optional<int64_t> mode_step;
  for (const auto& pd : value.metadata().plugin_data()) {
    if (pd.plugin_name() == "mode") mode = ModeFromValue(PyInt(pd.content()).value_or(-1));
    if (pd.plugin_name() == "mode_step") mode_step = PyInt(pd.content());
  }
  if (mode != v.mode) return fail() << "mode";
  if (mode_step != v.mode_step) return fail() << "mode_step";

  const bool simple = value.value_case() == litmus::format::proto::Summary::Value::kSimpleValue;
  if (simple != v.simple_value.has_value()) return fail() << "simple_value presence";
  if (simple &&
      std::bit_cast<uint32_t>(value.simple_value()) != std::bit_cast<uint32_t>(*v.simple_value)) {
    return fail() << "simple_value";
  }
  if (value.has_tensor() != v.has_tensor) return fail() << "has_tensor";
  if (!value.has_tensor()) return ::testing::AssertionSuccess();

  const auto& t = value.tensor();
  if (static_cast<int32_t>(t.dtype()) != v.raw_dtype)
    return fail() << "dtype " << t.dtype() << " vs " << v.raw_dtype;
  std::vector<int64_t> shape;
  for (const auto& d : t.tensor_shape().dim()) shape.push_back(d.size());
  if (shape != v.shape) return fail() << "shape";
  if (t.tensor_content() !=
      std::string_view(reinterpret_cast<const char*>(v.content.data()), v.content.size())) {
    return fail() << "tensor_content";
  }
  std::vector<std::string_view> strings(t.string_val().begin(), t.string_val().end());
  if (strings != v.string_val) return fail() << "string_val";

  std::vector<uint64_t> expected;
  std::vector<uint64_t> got;
  switch (v.packed_field) {
    case 0: {
      // No packed run recorded: the dtype's *_val field must be empty on the generated side too.
      size_t n = 0;
      switch (static_cast<int>(t.dtype())) {
        case 1:
          n = t.float_val_size();
          break;
        case 2:
          n = t.double_val_size();
          break;
        case 3:
        case 4:
        case 5:
        case 6:
        case 17:
          n = t.int_val_size();
          break;
        case 8:
          n = t.scomplex_val_size();
          break;
        case 9:
          n = t.int64_val_size();
          break;
        case 10:
          n = t.bool_val_size();
          break;
        case 18:
          n = t.dcomplex_val_size();
          break;
        case 19:
          n = t.half_val_size();
          break;
        default:
          break;
      }
      if (n != 0) return fail() << "generated has " << n << " *_val entries, DecodeEvent none";
      return ::testing::AssertionSuccess();
    }
    case 5:
      expected = Bits(t.float_val());
      got = Bits(PackedFixed<float>(v.packed_vals));
      break;
    case 6:
      expected = Bits(t.double_val());
      got = Bits(PackedFixed<double>(v.packed_vals));
      break;
    case 7:
      expected = Bits(t.int_val());
      for (uint64_t x : PackedVarints(v.packed_vals))
        got.push_back(static_cast<uint64_t>(static_cast<int32_t>(x)));
      break;
    case 9:
      expected = Bits(t.scomplex_val());
      got = Bits(PackedFixed<float>(v.packed_vals));
      break;
    case 10:
      expected = Bits(t.int64_val());
      got = PackedVarints(v.packed_vals);
      break;
    case 11:
      expected = Bits(t.bool_val());
      for (uint64_t x : PackedVarints(v.packed_vals)) got.push_back(x != 0);
      break;
    case 12:
      expected = Bits(t.dcomplex_val());
      got = Bits(PackedFixed<double>(v.packed_vals));
      break;
    case 13:
      expected = Bits(t.half_val());
      for (uint64_t x : PackedVarints(v.packed_vals))
        got.push_back(static_cast<uint64_t>(static_cast<int32_t>(x)));
      break;
    default:
      return fail() << "unexpected packed_field " << v.packed_field;
  }
  if (expected != got) return fail() << "packed values of field " << v.packed_field;
  return ::testing::AssertionSuccess();
}

}  // namespace litmus::testing
