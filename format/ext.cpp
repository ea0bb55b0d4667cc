#include "ext.h"

#include "uleb128.h"

namespace prof {

const char *ext_kind_name(ExtKind kind) {
  static const char *const kNames[] = {
      "?",          "stack-host", "stack-guest", "module-load", "module-unload",
      "time-mark",  "sampling",   "marker",      "stats",       "map",
      "unmap",      "process",    "sampler",     "thread",      "weight",
      "skip"};
  const uint8_t k = static_cast<uint8_t>(kind);
  return k <= kExtKindMax ? kNames[k] : "?";
}

void read_ext(ByteReader &in, uint8_t header, uint64_t at, ExtRecord &r) {
  const uint8_t kind = header & kExtKindMask;
  if ((header & ~kExtKindMask) != kExtFlag || kind == 0 || kind > kExtKindMax)
    in.fail(at, "unknown extension record " + hex_byte(header));
  r = ExtRecord{};
  r.kind = static_cast<ExtKind>(kind);
  switch (r.kind) {
    case ExtKind::StackHost:
      r.id = in.uleb(); r.parent = in.uleb(); r.addr = in.uleb();
      break;
    case ExtKind::StackGuest:
      r.id = in.uleb(); r.parent = in.uleb(); r.frame_type = in.uleb();
      r.addr = in.uleb(); r.line = in.uleb();
      break;
    case ExtKind::ModuleLoad:
      r.addr = in.uleb(); r.size = in.uleb();
      in.string(r.text, kMaxExtString);
      in.string(r.build_id, kMaxExtString);
      break;
    case ExtKind::ModuleUnload:
      r.addr = in.uleb();
      break;
    case ExtKind::TimeMark:
      r.time_ns = in.uleb(); r.value = in.uleb(); r.value2 = in.uleb();
      break;
    case ExtKind::Sampling:
    case ExtKind::Thread:
    case ExtKind::Weight:
      r.value = in.uleb();
      break;
    case ExtKind::Marker:
      r.time_ns = in.uleb();
      in.string(r.text, kMaxExtString);
      break;
    case ExtKind::Stats: {
      const uint64_t count_at = in.offset();
      const uint64_t n = in.uleb();
      if (n > kMaxExtStats)
        in.fail(count_at, "stats record claims " + std::to_string(n) + " counters");
      for (uint64_t i = 0; i < n; i++) {
        std::pair<std::string, uint64_t> s;
        in.string(s.first, kMaxExtString);
        s.second = in.uleb();
        r.stats.push_back(std::move(s));
      }
      break;
    }
    case ExtKind::Map:
      r.addr = in.uleb(); r.size = in.uleb();
      r.host_stack = in.uleb(); r.guest_stack = in.uleb();
      break;
    case ExtKind::Unmap:
      r.addr = in.uleb(); r.size = in.uleb();
      break;
    case ExtKind::Process:
      r.value = in.uleb(); r.value2 = in.uleb(); r.time_ns = in.uleb();
      in.string(r.text, kMaxExtString);
      break;
    case ExtKind::Sampler:
      r.value = in.uleb(); r.value2 = in.uleb(); r.value3 = in.uleb();
      break;
    case ExtKind::Skip: {
      const uint64_t length_at = in.offset();
      r.size = in.uleb();
      if (r.size > kMaxExtString)
        in.fail(length_at, "skip record claims " + std::to_string(r.size) + " bytes");
      uint8_t passed[256];
      for (uint64_t left = r.size; left;) {
        const size_t n = left < sizeof passed ? size_t(left) : sizeof passed;
        in.bytes(passed, n);
        left -= n;
      }
      break;
    }
  }
}

size_t put_skip_header(uint8_t *dst, uint64_t total) {
  size_t n = 0;
  for (;;) {
    // One record when some length's ULEB128 size makes the total come out.
    for (size_t k = 1; k <= kUleb128Max && 1 + k <= total; k++) {
      const uint64_t length = total - 1 - k;
      if (uleb128_size(length) != k) continue;
      dst[n++] = kExtFlag | uint8_t(ExtKind::Skip);
      return n + encode_uleb128(length, dst + n);
    }
    // None (the length's size steps over the total): an empty one first.
    dst[n++] = kExtFlag | uint8_t(ExtKind::Skip);
    dst[n++] = 0;
    total -= 2;
  }
}

}  // namespace prof
