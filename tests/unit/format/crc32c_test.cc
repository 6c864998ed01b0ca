// Tests for litmus::crc32c: standard vectors, the spec's header/footer vectors, masking, and
// hardware == portable on random buffers of many lengths and alignments.
#include "litmus/format/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace litmus::crc32c {
namespace {

uint32_t Of(std::string_view s) { return Value(s.data(), s.size()); }
uint32_t PortableOf(std::string_view s) { return ExtendPortable(0, s.data(), s.size()); }

TEST(Crc32cTest, StandardVectors) {
  EXPECT_EQ(Of("123456789"), 0xE3069283u);
  EXPECT_EQ(PortableOf("123456789"), 0xE3069283u);
  const std::string zeros(32, '\0');
  EXPECT_EQ(Of(zeros), 0x8A9136AAu);
  EXPECT_EQ(PortableOf(zeros), 0x8A9136AAu);
  EXPECT_EQ(Of(""), 0u);
  EXPECT_EQ(PortableOf(""), 0u);
  const std::string ones(32, '\xff');
  EXPECT_EQ(Of(ones), 0x62A8AB43u);  // RFC 3720 B.4
  std::string ascending(32, '\0');
  for (int i = 0; i < 32; ++i) ascending[i] = static_cast<char>(i);
  EXPECT_EQ(Of(ascending), 0x46DD794Eu);  // RFC 3720 B.4
}

TEST(Crc32cTest, PlaceholderFooter) {
  EXPECT_EQ(Of("0x12345678"), 0x6AEDB1D5u);
  EXPECT_EQ(Mask(Of("0x12345678")), 0x062DC0B3u);
  EXPECT_EQ(kPlaceholderMaskedCrc, 0x062DC0B3u);
}

TEST(Crc32cTest, SpecHeaderVectors) {
  const unsigned char n636[8] = {0x7c, 0x02, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(Value(n636, 8), 0xAC7ECAB2u);
  EXPECT_EQ(Mask(Value(n636, 8)), 0x37E843D5u);
  const unsigned char n72[8] = {0x48, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(Value(n72, 8), 0xD4137D62u);
  EXPECT_EQ(Mask(Value(n72, 8)), 0x9D4892FEu);
  EXPECT_EQ(Mask(0xE3069283u), 0xC78AB0E5u);
}

TEST(Crc32cTest, MaskRoundTrips) {
  std::mt19937 rng(7);
  for (int i = 0; i < 1000; ++i) {
    const uint32_t c = rng();
    EXPECT_EQ(Unmask(Mask(c)), c);
    EXPECT_NE(Mask(c), c);
  }
}

TEST(Crc32cTest, ReportsHardwareOnSse42Machines) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  EXPECT_EQ(IsHardwareAccelerated(), __builtin_cpu_supports("sse4.2") != 0);
#else
  EXPECT_FALSE(IsHardwareAccelerated());
#endif
}

// Lengths around every block boundary of both implementations (8-byte words, 3 x 256 and
// 3 x 8192 interleaved blocks), at every alignment 0..15.
TEST(Crc32cTest, HardwareMatchesPortable) {
  std::mt19937_64 rng(42);
  std::vector<unsigned char> buf(3 * 8192 * 2 + 64);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 64; ++n) lengths.push_back(n);
  for (size_t base : {size_t{768}, size_t{3 * 8192}, size_t{2 * 3 * 8192}}) {
    for (size_t d = 0; d <= 17; ++d) {
      lengths.push_back(base + d);
      lengths.push_back(base - d);
    }
  }
  for (int i = 0; i < 200; ++i) lengths.push_back(rng() % (buf.size() - 16));
  for (size_t n : lengths) {
    for (size_t align = 0; align < 16; ++align) {
      if (align + n > buf.size()) continue;
      const uint32_t seed = static_cast<uint32_t>(rng());
      ASSERT_EQ(Extend(seed, buf.data() + align, n), ExtendPortable(seed, buf.data() + align, n))
          << "n=" << n << " align=" << align;
    }
  }
}

TEST(Crc32cTest, ExtendComposes) {
  std::mt19937_64 rng(3);
  std::vector<unsigned char> buf(70000);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  const uint32_t whole = Value(buf.data(), buf.size());
  for (size_t split : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{777}, size_t{24576},
                       size_t{69999}, buf.size()}) {
    const uint32_t a = Value(buf.data(), split);
    EXPECT_EQ(Extend(a, buf.data() + split, buf.size() - split), whole) << split;
    EXPECT_EQ(ExtendPortable(ExtendPortable(0, buf.data(), split), buf.data() + split,
                             buf.size() - split),
              whole);
  }
  // Byte-at-a-time extension agrees too.
  uint32_t c = 0;
  for (size_t i = 0; i < 1000; ++i) c = Extend(c, buf.data() + i, 1);
  EXPECT_EQ(c, Value(buf.data(), 1000));
}

}  // namespace
}  // namespace litmus::crc32c
