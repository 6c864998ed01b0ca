// Strict UTF-8 decoding shared by the naming checks and the JSON writer: one code point at a
// time, rejecting overlong forms, surrogates, values beyond U+10FFFF and truncated sequences.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace litmus::internal {

// Decodes the sequence starting at s[i] (REQUIRES i < s.size()). Returns its length in bytes and
// sets *code_point, or returns 0 for an invalid sequence.
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* code_point);

}  // namespace litmus::internal
