// Memory profile 'ljm' v3: allocation events, as LuaJIT's memprof writes them
// and as libprof extends them.
//
// stream         := symtab memprof                       (symtab.h)
// memprof        := prologue event* epilogue
// prologue       := 'l' 'j' 'm' version reserved         (prologue.h)
// event          := event-alloc | event-realloc | event-free | event-symtab |
//                   ext-record                           (ext-record: extended only)
// event-alloc    := event-header loc? stacks? naddr nsize
//                   (ext-record: extended only; a compact event of ext.h
//                   stands for an event-alloc, event-free or event-realloc)
// event-realloc  := event-header loc? stacks? oaddr osize naddr nsize
// event-free     := event-header loc? stacks? oaddr osize
// event-symtab   := event-header sym                     (sym bodies of symtab.h)
// loc            := loc-lua | loc-c | loc-trace         (guest_loc.h)
// stacks         := host-stack-id guest-stack-id         (extended only, H set)
// sym-addr, line-no, trace-no, oaddr, osize, naddr, nsize,
// host-stack-id, guest-stack-id := <ULEB128>
// epilogue       := event-header
//
// event-header: [FXHSSSEE]
//  * EE  : event type: 0 symtab, 1 alloc, 2 free, 3 realloc (AEVENT_*)
//  * SSS : source: 1 INTERNAL (loc absent), 2 Lua function (loc-lua),
//          3 C function (loc-c), 4 JIT trace (loc-trace); for event-symtab it
//          names the symbol kind (2 sym-lua, 3 sym-cfunc, 4 sym-trace).
//          Extended only: 0 NONE, no guest location (loc absent).
//  * H   : extended only: `stacks` follows the location
//  * X   : extended only: 1 makes the byte an ext-header (ext.h); F must be 0
//  * F   : 1 for the epilogue; all other bits are then ignored
//
// Extended streams (libprof) also differ in meaning: osize 0 on a free or
// realloc means "unknown, take it from the matching allocation", because the
// agent cannot see the size that free() releases.
#pragma once

#include <cstdint>

#include "alloc_event.h"
#include "byte_reader.h"
#include "compact_events.h"
#include "ext.h"
#include "guest_loc.h"
#include "prologue.h"
#include "symtab.h"
#include "uleb128.h"

namespace prof {

// The longest AllocEvent encoding: an event-realloc with loc-lua and stacks,
// header + 8 ULEB128s.
constexpr size_t kMaxEventBytes = 1 + 8 * kUleb128Max;

enum class MemprofRecord : uint8_t { Alloc, Realloc, Free, Symbol, Ext };

// One record as MemprofReader returns it: the event's fields, or a symbol,
// or an extension record, as `record` says.
struct MemprofEvent : AllocEvent {
  MemprofRecord record = MemprofRecord::Alloc;
  // A compact event's site of the block it makes (0: none, or a plain
  // event): everything of the event but its key (compact_events.h).
  uint64_t site = 0;
  uint64_t offset = 0;  // where the record starts in the file
  Symbol symbol;  // Symbol records
  ExtRecord ext;  // Ext records
};

// XXX: inline: the ring's writer encodes every event with it
// (preload/stream/stream_compactor.h).
template <class Out>
inline void put_memprof_event(Out &out, const AllocEvent &e) {
  out.put_u8(static_cast<uint8_t>(e.aevent | e.loc.source | (e.has_stacks ? kMemprofStacks : 0)));
  put_guest_loc(out, e.loc);
  if (e.has_stacks) {
    out.put_uleb(e.host_stack);
    out.put_uleb(e.guest_stack);
  }
  if (e.aevent & kAeventFree) {
    out.put_uleb(e.oaddr);
    out.put_uleb(e.osize);
  }
  if (e.aevent & kAeventAlloc) {
    out.put_uleb(e.naddr);
    out.put_uleb(e.nsize);
  }
}

// An event-symtab; names are cut as symtab.h says.
template <class Out, class Text>
void put_memprof_symbol(Out &out, const BasicSymbol<Text> &s) {
  static const uint8_t kSource[] = {kAsourceLfunc, kAsourceCfunc, kAsourceTrace};
  out.put_u8(static_cast<uint8_t>(kAeventSymtab | kSource[s.type]));
  put_symbol_body(out, s);
}

template <class Out>
void put_memprof_epilogue(Out &out) {
  out.put_u8(kMemprofEpilogue);
}

// Reads the memprof section that follows the symtab, prologue first.
class MemprofReader {
 public:
  explicit MemprofReader(ByteReader &in);
  // Continues after a prologue the caller already read (auto-detection).
  MemprofReader(ByteReader &in, const Prologue &prologue);
  // Next record; false after the epilogue.
  [[gnu::always_inline]] bool next(MemprofEvent &out) {
    // XXX: inlined, for nearly every record of libprof's streams, a compact
    // event whose header is buffered; everything else takes next_record().
    uint8_t header;
    if (!pending_ && !done_ && extended_ && in_.buffered_u8(&header) &&
        (header & (kMemprofEpilogue | kExtFlag)) == kExtFlag &&
        CompactEvents::is_event(header & kExtKindMask)) {
      out.offset = in_.offset();
      in_.skip_u8();
      read_compact(out, header & kExtKindMask, out.offset);
      return true;
    }
    return next_record(out);
  }
  bool extended() const { return extended_; }

 private:
  bool next_record(MemprofEvent &out);
  void read_event(MemprofEvent &ev, uint8_t header, uint64_t at);
  // A compact event of `kind` (compact_events.h) as the event it stands
  // for; a typed one returns its object-type record first and the event
  // next (hold_typed()).
  [[gnu::always_inline]] void read_compact(MemprofEvent &ev, uint8_t kind, uint64_t at) {
    static constexpr MemprofRecord kRecord[] = {MemprofRecord::Symbol, MemprofRecord::Alloc,
                                                MemprofRecord::Free, MemprofRecord::Realloc};
    const uint8_t type = compact_.read_event(kind, in_, at, ev, &ev.site);
    ev.record = kRecord[ev.aevent];
    if (type) hold_typed(ev, type, at);
  }
  void hold_typed(MemprofEvent &ev, uint8_t type, uint64_t at);

  ByteReader &in_;
  bool extended_;
  bool done_ = false;
  CompactEvents compact_;
  bool pending_ = false;
  AllocEvent pending_event_;
  MemprofRecord pending_record_ = MemprofRecord::Alloc;
  uint64_t pending_site_ = 0;
  uint64_t pending_offset_ = 0;
};

}  // namespace prof
