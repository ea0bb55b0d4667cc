#include "memprof.h"

#include "prologue.h"

namespace prof {

MemprofReader::MemprofReader(ByteReader &in)
    : MemprofReader(in, read_prologue(in, SectionKind::Memprof)) {}

MemprofReader::MemprofReader(ByteReader &in, const Prologue &prologue)
    : in_(in), extended_(prologue.extended) {}

bool MemprofReader::next_record(MemprofEvent &ev) {
  if (pending_) {  // the compact event whose object type was just returned
    pending_ = false;
    static_cast<AllocEvent &>(ev) = pending_event_;
    ev.record = pending_record_;
    ev.site = pending_site_;
    ev.offset = pending_offset_;
    return true;
  }
  for (;;) {
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
      if (CompactEvents::is_event(header & kExtKindMask)) {
        read_compact(ev, header & kExtKindMask, at);
        return true;
      }
      ev.record = MemprofRecord::Ext;
      read_ext(in_, header, at, SectionKind::Memprof, ev.ext);
      if (const auto *site = std::get_if<ext::Site>(&ev.ext)) {
        compact_.add_site(*site, in_, at);
        continue;
      }
      return true;
    }
    read_event(ev, header, at);
    return true;
  }
}

void MemprofReader::hold_typed(MemprofEvent &ev, uint8_t type, uint64_t at) {
  // Typed: the object-type record comes first, as in a plain stream.
  pending_ = true;
  pending_event_ = ev;
  pending_record_ = ev.record;
  pending_site_ = ev.site;
  pending_offset_ = at;
  ev.record = MemprofRecord::Ext;
  ev.ext = ext::ObjectType{type};
}

void MemprofReader::read_event(MemprofEvent &ev, uint8_t header, uint64_t at) {
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
    return;
  }
  static const MemprofRecord kRecord[] = {MemprofRecord::Symbol, MemprofRecord::Alloc,
                                          MemprofRecord::Free, MemprofRecord::Realloc};
  ev.record = kRecord[aevent];
  ev.aevent = aevent;
  ev.site = 0;
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
}

}  // namespace prof
