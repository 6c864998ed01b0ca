// CRC-32C: a slicing-by-8 table implementation, and on x86-64 an SSE4.2 one that runs three
// independent crc32 streams over long buffers and merges them with precomputed "append N zero
// bytes" operators. The choice is made once, at first use. Tables are immutable; thread-safe.
#include "litmus/format/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace litmus::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

// kSlice[0] is the classic byte table; kSlice[k][b] is the CRC register contribution of byte b
// followed by k zero bytes, so eight bytes can be folded with eight independent lookups.
constexpr std::array<std::array<uint32_t, 256>, 8> MakeSliceTables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][i] = c;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
  }
  return t;
}
constexpr auto kSlice = MakeSliceTables();
static_assert(kSlice[0][1] == 0xF26B8303u && kSlice[0][128] == 0x82F63B78u &&
              kSlice[0][255] == 0xAD7D5351u);

// Little-endian 64-bit load from any alignment (a single mov on x86).
inline uint64_t LoadLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Raw register update (no inversion) over n bytes.
uint32_t UpdatePortable(uint32_t c, const uint8_t* p, size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = kSlice[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    --n;
  }
  while (n >= 8) {
    const uint64_t w = LoadLe64(p) ^ c;
    c = kSlice[7][w & 0xFF] ^ kSlice[6][(w >> 8) & 0xFF] ^ kSlice[5][(w >> 16) & 0xFF] ^
        kSlice[4][(w >> 24) & 0xFF] ^ kSlice[3][(w >> 32) & 0xFF] ^ kSlice[2][(w >> 40) & 0xFF] ^
        kSlice[1][(w >> 48) & 0xFF] ^ kSlice[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = kSlice[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    --n;
  }
  return c;
}

#if defined(__x86_64__)

// Streams of the three-way hardware loop. 3 x kLongBlock bytes per round for big buffers,
// 3 x kShortBlock for the rest: crc32 has a latency of 3 cycles and a throughput of 1 per
// cycle, so three interleaved streams keep the unit busy.
constexpr size_t kLongBlock = 8192;
constexpr size_t kShortBlock = 256;

// Operator "append `len` zero bytes" on a raw CRC register, as four byte-indexed tables (the
// operator is linear over GF(2), so shift(c) = XOR over bytes of c of the table entries).
struct ZeroShift {
  std::array<std::array<uint32_t, 256>, 4> t;

  explicit ZeroShift(size_t len) {
    uint32_t basis[32];
    for (int bit = 0; bit < 32; ++bit) {
      uint32_t c = 1u << bit;
      for (size_t i = 0; i < len; ++i) c = kSlice[0][c & 0xFF] ^ (c >> 8);
      basis[bit] = c;
    }
    for (int k = 0; k < 4; ++k) {
      for (uint32_t n = 0; n < 256; ++n) {
        uint32_t sum = 0;
        for (int bit = 0; bit < 8; ++bit) {
          if (n & (1u << bit)) sum ^= basis[8 * k + bit];
        }
        t[k][n] = sum;
      }
    }
  }
  uint32_t Apply(uint32_t c) const {
    return t[0][c & 0xFF] ^ t[1][(c >> 8) & 0xFF] ^ t[2][(c >> 16) & 0xFF] ^ t[3][c >> 24];
  }
};

struct HardwareTables {
  ZeroShift long_shift{kLongBlock};
  ZeroShift short_shift{kShortBlock};
};

const HardwareTables& GetHardwareTables() {
  static const HardwareTables tables;  // built once, thread-safe (~270k table steps)
  return tables;
}

__attribute__((target("sse4.2"))) inline uint64_t Crc64(uint64_t c, const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof(w));
  return _mm_crc32_u64(c, w);
}

// Three streams over blocks [p, p+block), [p+block, p+2block), [p+2block, p+3block); merges them
// into c0 and advances p. Processes as many rounds as fit into n.
__attribute__((target("sse4.2"))) uint64_t ThreeWay(uint64_t c0, const uint8_t*& p, size_t& n,
                                                    size_t block, const ZeroShift& shift) {
  while (n >= 3 * block) {
    uint64_t c1 = 0;
    uint64_t c2 = 0;
    const uint8_t* const end = p + block;
    do {
      c0 = Crc64(c0, p);
      c1 = Crc64(c1, p + block);
      c2 = Crc64(c2, p + 2 * block);
      p += 8;
    } while (p < end);
    c0 = shift.Apply(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
    c0 = shift.Apply(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c2);
    p += 2 * block;
    n -= 3 * block;
  }
  return c0;
}

__attribute__((target("sse4.2"))) uint32_t UpdateSse42(uint32_t crc, const uint8_t* p, size_t n) {
  uint64_t c = crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  if (n >= 3 * kShortBlock) {
    const HardwareTables& tables = GetHardwareTables();
    c = ThreeWay(c, p, n, kLongBlock, tables.long_shift);
    c = ThreeWay(c, p, n, kShortBlock, tables.short_shift);
  }
  while (n >= 8) {
    c = Crc64(c, p);
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  return static_cast<uint32_t>(c);
}

bool CpuHasSse42() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") != 0;
  }();
  return has;
}

#endif  // __x86_64__

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n) {
  return ~UpdatePortable(~crc, static_cast<const uint8_t*>(data), n);
}

uint32_t Extend(uint32_t crc, const void* data, size_t n) {
#if defined(__x86_64__)
  if (CpuHasSse42()) return ~UpdateSse42(~crc, static_cast<const uint8_t*>(data), n);
#endif
  return ExtendPortable(crc, data, n);
}

bool IsHardwareAccelerated() {
#if defined(__x86_64__)
  return CpuHasSse42();
#else
  return false;
#endif
}

}  // namespace litmus::crc32c
