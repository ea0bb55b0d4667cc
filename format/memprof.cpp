#include "memprof.h"

#include "prologue.h"

namespace prof {

MemprofReader::MemprofReader(ByteReader &in)
    : MemprofReader(in, read_prologue(in, SectionKind::Memprof)) {}

MemprofReader::MemprofReader(ByteReader &in, const Prologue &prologue)
    : in_(in), extended_(prologue.extended) {}

static void read_guest_loc(ByteReader &in, uint8_t source, GuestLoc &loc) {
  loc = GuestLoc{};
  loc.source = source;
  switch (source) {
    case kAsourceLfunc:
      loc.addr = in.uleb();
      loc.line = in.uleb();
      break;
    case kAsourceCfunc:
      loc.addr = in.uleb();
      break;
    case kAsourceTrace:
      loc.traceno = in.uleb();
      break;
  }
}

bool MemprofReader::next(MemprofEvent &ev) {
  if (done_) return false;
  const uint64_t at = in_.offset();
  const uint8_t header = in_.u8();
  ev.offset = at;
  if (header & kMemprofEpilogue) {
    done_ = true;
    return false;
  }
  if (header & kExtFlag) {
    if (!extended_) in_.fail(at, "bad event header " + hex_byte(header));
    ev.record = MemprofRecord::Ext;
    read_ext(in_, header, at, ev.ext);
    return true;
  }
  const uint8_t aevent = header & kAeventMask;
  const uint8_t source = header & kAsourceMask;
  const bool stacks = (header & kMemprofStacks) != 0;
  const bool source_ok = source >= kAsourceInternal ? source <= kAsourceTrace : extended_;
  if (!source_ok || (stacks && (!extended_ || aevent == kAeventSymtab)))
    in_.fail(at, "bad event header " + hex_byte(header));

  if (aevent == kAeventSymtab) {
    if (source < kAsourceLfunc) in_.fail(at, "bad symtab event header " + hex_byte(header));
    ev.record = MemprofRecord::Symbol;
    static const uint8_t kType[] = {0, 0, kSymLfunc, kSymCfunc, kSymTrace};
    read_symbol_body(in_, kType[source >> 2], ev.symbol);
    return true;
  }
  static const MemprofRecord kRecord[] = {MemprofRecord::Symbol, MemprofRecord::Alloc,
                                          MemprofRecord::Free, MemprofRecord::Realloc};
  ev.record = kRecord[aevent];
  ev.aevent = aevent;
  read_guest_loc(in_, source, ev.loc);
  ev.has_stacks = stacks;
  ev.host_stack = stacks ? in_.uleb() : 0;
  ev.guest_stack = stacks ? in_.uleb() : 0;
  ev.oaddr = ev.osize = ev.naddr = ev.nsize = 0;
  if (aevent & kAeventFree) {
    ev.oaddr = in_.uleb();
    ev.osize = in_.uleb();
  }
  if (aevent & kAeventAlloc) {
    ev.naddr = in_.uleb();
    ev.nsize = in_.uleb();
  }
  return true;
}

}  // namespace prof
