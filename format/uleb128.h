// ULEB128: the variable-length unsigned integer of every LuaJIT profiler stream.
//
// Invariants: encode() writes the minimal encoding (at most kUleb128Max bytes);
// decode_uleb128() accepts only minimal encodings of values that fit in 64 bits,
// so every value has exactly one byte form on the wire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace prof {

constexpr size_t kUleb128Max = 10;  // ceil(64 / 7)

inline size_t encode_uleb128(uint64_t value, uint8_t *out) {
  size_t n = 0;
  while (value >= 0x80) {
    out[n++] = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  out[n++] = static_cast<uint8_t>(value);
  return n;
}

// The bytes encode_uleb128(value) writes.
inline size_t uleb128_size(uint64_t value) {
  const int bits = 64 - __builtin_clzll(value | 1);
  return static_cast<size_t>(bits + 6) / 7;
}

// Decodes a value of at most 8 bytes from the 8 bytes at p, all of which
// must be readable, with no branch per byte: the bytes it took, or 0 when
// the value is longer (or the machine big-endian): the caller then decodes
// it byte by byte. It takes any encoding, over-long ones too.
inline size_t decode_uleb128_word(const uint8_t *p, uint64_t *value) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t x;
  memcpy(&x, p, sizeof x);
  const uint64_t ends = ~x & 0x8080808080808080ull;  // bytes without a continuation bit
  if (ends == 0) return 0;
  const int last = __builtin_ctzll(ends);  // the first one's high bit
  x &= ((uint64_t(2) << last) - 1) & 0x7f7f7f7f7f7f7f7full;
  // The 7-bit groups side by side: in pairs, fours, then all eight.
  x = (x & 0x007f007f007f007full) | (x & 0x7f007f007f007f00ull) >> 1;
  x = (x & 0x00003fff00003fffull) | (x & 0x3fff00003fff0000ull) >> 2;
  x = (x & 0x000000000fffffffull) | (x & 0x0fffffff00000000ull) >> 4;
  *value = x;
  return size_t(last >> 3) + 1;
#else
  (void)p, (void)value;
  return 0;
#endif
}

enum class Uleb128Status { Ok, NeedMore, OverLong, Overflow };

// Decodes from [p, end). On Ok, *value and *used are set.
inline Uleb128Status decode_uleb128(const uint8_t *p, const uint8_t *end,
                                    uint64_t *value, size_t *used) {
  uint64_t v = 0;
  for (size_t i = 0; i < kUleb128Max; i++) {
    if (p + i >= end) return Uleb128Status::NeedMore;
    const uint8_t byte = p[i];
    const uint64_t payload = byte & 0x7f;
    // XXX: the tenth byte holds only bit 63; anything more overflows.
    if (i == kUleb128Max - 1 && payload > 1) return Uleb128Status::Overflow;
    v |= payload << (7 * i);
    if ((byte & 0x80) == 0) {
      if (i > 0 && byte == 0) return Uleb128Status::OverLong;
      *value = v;
      *used = i + 1;
      return Uleb128Status::Ok;
    }
  }
  return Uleb128Status::Overflow;
}

}  // namespace prof
