// Record extents: where a record of a memprof section ends, found without
// decoding it: for code that moves records without reading them (the
// agent's stream compactor), which may not allocate, throw or fail.
//
// memprof_record_extent() follows memprof.h's event grammar and ext.h's
// ext-body grammar, as kExtBodyFields spells each kind's body.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ext.h"
#include "guest_loc.h"
#include "uleb128.h"

namespace prof {

// Each ext kind's body as its fields: 'u' a ULEB128, 's' a string. Stats
// (a count, then that many string-ULEB128 pairs) and skip (a length, then
// that many bytes) have shapes of their own, spelled "S" and "K".
constexpr const char *kExtBodyFields[kExtKindMax + 1] = {
    nullptr, "uuu", "uuuuu", "uuss", "u",   "uuu", "u",   "us",  "S",   "uuuu",
    "uu",    "uuus", "uuu",  "u",    "u",   "uu",  "K",   "uus", "u",   "uu",
    "u",     "s",    nullptr, "u",   "uu",  "uuu", "uuu", "uuu", "us",
    "u",     "u"};  // 22, site: see below

// A cursor over [p, end) that says when the bytes run out or are no record.
class ExtentCursor {
 public:
  enum Status { kOk, kNeedMore, kBad };
  ExtentCursor(const uint8_t *p, const uint8_t *end) : begin_(p), p_(p), end_(end) {}
  Status status() const { return status_; }
  size_t used() const { return size_t(p_ - begin_); }
  bool ok() const { return status_ == kOk; }

  uint8_t u8() {
    if (!ok()) return 0;
    if (p_ == end_) return need_more(), 0;
    return *p_++;
  }
  uint64_t uleb() {
    if (!ok()) return 0;
    // XXX: the common case (a whole value ahead, minimal, at most 9 bytes)
    // inline, as ByteReader does; the rest, errors included, the full way.
    if (end_ - p_ >= ptrdiff_t(kUleb128Max)) {
      uint64_t v = 0;
      for (size_t i = 0; i < kUleb128Max - 1; i++) {
        v |= uint64_t(p_[i] & 0x7f) << (7 * i);
        if (p_[i] & 0x80) continue;
        if (i > 0 && p_[i] == 0) break;
        p_ += i + 1;
        return v;
      }
    }
    uint64_t v = 0;
    size_t n = 0;
    switch (decode_uleb128(p_, end_, &v, &n)) {
      case Uleb128Status::Ok: p_ += n; return v;
      case Uleb128Status::NeedMore: need_more(); return 0;
      default: status_ = kBad; return 0;
    }
  }
  void bytes(uint64_t n) {
    if (!ok()) return;
    if (n > uint64_t(end_ - p_)) return need_more();
    p_ += n;
  }
  void string() { bytes(uleb()); }
  void fields(const char *spec) {
    for (; *spec && ok(); spec++) *spec == 'u' ? void(uleb()) : string();
  }
  void fail() { status_ = kBad; }

 private:
  void need_more() { status_ = kNeedMore; }
  const uint8_t *begin_, *p_, *end_;
  Status status_ = kOk;
};

// A site's body (after its header byte), per ext.h.
inline void skip_site_body(ExtentCursor &c) {
  c.uleb();
  const uint8_t head = c.u8();
  if (c.ok() && ((head & ~(kAsourceMask | kMemprofStacks)) || (head & kAsourceMask) > kAsourceTrace))
    c.fail();
  GuestLoc loc;
  read_guest_loc(c, head & kAsourceMask, loc);
  if (head & kMemprofStacks) c.fields("uu");
  c.fields("uu");
}

// A symtab event's body (memprof.h: the sym bodies of symtab.h).
inline void skip_symbol_body(ExtentCursor &c, uint8_t source) {
  switch (source) {
    case kAsourceLfunc: return c.fields("usu");
    case kAsourceCfunc: return c.fields("us");
    case kAsourceTrace: return c.fields("uuu");
    default: return c.fail();
  }
}

// The body of the ext record of `kind` (its header byte read). Skips are
// only their length here: the bytes they cover follow.
inline void skip_ext_body(ExtentCursor &c, uint8_t kind) {
  if (kind == 0 || kind > kExtKindMax) return c.fail();
  if (kind == uint8_t(ExtKind::Site)) return skip_site_body(c);
  const char *spec = kExtBodyFields[kind];
  if (spec[0] == 'S') {
    const uint64_t count = c.uleb();
    if (count > kMaxExtStats) return c.fail();
    for (uint64_t i = 0; i < count && c.ok(); i++) c.fields("su");
  } else if (spec[0] == 'K') {
    c.uleb();
  } else {
    c.fields(spec);
  }
}

}  // namespace prof
