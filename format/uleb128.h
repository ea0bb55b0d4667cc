// ULEB128: the variable-length unsigned integer of every LuaJIT profiler stream.
//
// Invariants: encode() writes the minimal encoding (at most kUleb128Max bytes);
// decode_uleb128() accepts only minimal encodings of values that fit in 64 bits,
// so every value has exactly one byte form on the wire.
#pragma once

#include <cstddef>
#include <cstdint>

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
