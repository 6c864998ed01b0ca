// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) and TensorFlow's CRC masking, as used by
// TFRecord framing. Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at run
// time), a slicing-by-8 table otherwise. All functions are pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace litmus::crc32c {

// CRC of the concatenation of the bytes already summarised by `crc` and `data[0, n)`.
// Extend(0, d, n) == Value(d, n). Initial/final inversion are handled inside.
uint32_t Extend(uint32_t crc, const void* data, size_t n);
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

// The portable (table) implementation, exposed so tests can compare it with the hardware one.
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n);
// True when Extend uses a CPU instruction.
bool IsHardwareAccelerated();

inline constexpr uint32_t kMaskDelta = 0xA282EAD8u;
// TensorFlow's masking: rotate right by 15, then add kMaskDelta (mod 2^32).
constexpr uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
constexpr uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

// smdebug writes this constant footer instead of a payload CRC by default: the masked CRC-32C of
// the ASCII bytes "0x12345678" (stored little-endian as b3 c0 2d 06).
inline constexpr uint32_t kPlaceholderMaskedCrc = 0x062DC0B3u;

}  // namespace litmus::crc32c
