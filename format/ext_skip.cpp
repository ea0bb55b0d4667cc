// put_skip_header, apart from ext.cpp's readers: the agent links this
// encoder alone, without the readers' exceptions and strings.
#include "ext.h"

namespace prof {

size_t put_skip_header(uint8_t *dst, uint64_t total) {
  size_t n = 0;
  for (;;) {
    // One record when some length's ULEB128 size makes the total come out.
    for (size_t k = 1; k <= kUleb128Max && 1 + k <= total; k++) {
      const uint64_t length = total - 1 - k;
      if (uleb128_size(length) != k) continue;
      dst[n++] = ext_header(ExtKind::Skip);
      return n + encode_uleb128(length, dst + n);
    }
    // None (the length's size steps over the total): an empty one first.
    dst[n++] = ext_header(ExtKind::Skip);
    dst[n++] = 0;
    total -= 2;
  }
}

}  // namespace prof
