// VecOut: an encoder output (the Out of format/'s put_* templates) that
// collects bytes in a vector, for building streams in tests.
#pragma once

#include <cstdint>
#include <vector>

#include "uleb128.h"

struct VecOut {
  std::vector<uint8_t> b;
  void put_u8(uint8_t v) { b.push_back(v); }
  void put_uleb(uint64_t v) {
    uint8_t tmp[prof::kUleb128Max];
    b.insert(b.end(), tmp, tmp + prof::encode_uleb128(v, tmp));
  }
  void put_bytes(const void *p, size_t n) {
    auto *c = static_cast<const uint8_t *>(p);
    b.insert(b.end(), c, c + n);
  }
  void put_string(const char *s, size_t n) {
    put_uleb(n);
    put_bytes(s, n);
  }
};
