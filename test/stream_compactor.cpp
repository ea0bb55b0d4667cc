// StreamCompactor: the ring's bytes (a memprof stream whose events are ring
// events, ring_event.h) go through the compactor, and a reader must find in
// what comes out the events of the same stream written with format/'s
// encoders: not compacting, byte for byte; compacting, the same kinds,
// locations, stacks, sizes and object types, each release paired with the
// same allocation as the addresses pair it (the oldest live block at the
// address), and every other record as it was. Cut anywhere on its way in,
// the output is the same.
#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "byte_reader.h"
#include "memprof.h"
#include "sysprof.h"
#include "ring_event.h"
#include "stream/stream_compactor.h"
#include "vec_out.h"

using namespace prof;

namespace {

using Bytes = std::vector<uint8_t>;

// An event as a reader sees it, with the allocation its release pairs with.
struct Seen {
  MemprofRecord record;
  uint8_t source;
  uint64_t loc_addr, line, traceno;
  bool stacks;
  uint64_t host, guest, nsize;
  uint8_t type;
  int paired = -1;        // the index of the allocation released, -1 none
  uint64_t released = 0;  // its size
  Bytes ext;              // other records, encoded again
  bool operator==(const Seen &o) const {
    return record == o.record && source == o.source && loc_addr == o.loc_addr && line == o.line &&
           traceno == o.traceno && stacks == o.stacks && host == o.host && guest == o.guest &&
           nsize == o.nsize && type == o.type && paired == o.paired && released == o.released &&
           ext == o.ext;
  }
};

struct Read {
  std::vector<Seen> events;
  std::map<std::string, uint64_t> stats;
};

Read read_stream(const Bytes &b) {
  ByteReader in(b.data(), b.size());
  SymtabReader symtab(in);
  Symbol sym;
  while (symtab.next(sym)) {
  }
  MemprofReader reader(in);
  MemprofEvent ev;
  Read r;
  std::map<uint64_t, std::deque<int>> live;  // address or key: allocations, oldest first
  uint8_t type = 0;
  while (reader.next(ev)) {
    Seen s{ev.record, ev.loc.source, ev.loc.addr, ev.loc.line, ev.loc.traceno, ev.has_stacks,
           ev.host_stack, ev.guest_stack, ev.nsize, 0, -1, 0, {}};
    if (ev.record == MemprofRecord::Ext) {
      if (const auto *t = std::get_if<ext::ObjectType>(&ev.ext)) {
        type = uint8_t(t->type);
        continue;
      }
      if (const auto *st = std::get_if<ext::Stats>(&ev.ext)) {
        for (const auto &c : st->counters) r.stats[c.name] = c.value;
        continue;
      }
      VecOut o;
      put_ext(o, ev.ext);
      s.ext = o.b;
    } else if (ev.record != MemprofRecord::Symbol) {
      s.type = type;
      type = 0;
      if (ev.record != MemprofRecord::Alloc) {
        auto it = live.find(ev.oaddr);
        if (it != live.end() && !it->second.empty()) {
          s.paired = it->second.front();
          s.released = r.events[size_t(s.paired)].nsize;
          if (ev.osize) CHECK(ev.osize == s.released);  // a compact release says its size
          it->second.pop_front();
        }
      }
      if (ev.record != MemprofRecord::Free) live[ev.naddr].push_back(int(r.events.size()));
    }
    r.events.push_back(s);
  }
  CHECK(in.at_end());
  return r;
}

// The records of one stream twice: as the ring holds them (events as ring
// events) and as a memprof reader expects them (the plain stream).
struct Both {
  VecOut ring, plain;
  // The thread making the events from now on (0: unknown, as in tests of
  // old), and the last one the plain stream named (event-thread, ext.h).
  uint32_t tid = 0, named_tid = 0;
  void put_u8(uint8_t v) { ring.put_u8(v), plain.put_u8(v); }
  void put_uleb(uint64_t v) { ring.put_uleb(v), plain.put_uleb(v); }
  void put_bytes(const void *p, size_t n) { ring.put_bytes(p, n), plain.put_bytes(p, n); }
  void put_string(const char *p, size_t n) { ring.put_string(p, n), plain.put_string(p, n); }
};

void event(Both &o, const AllocEvent &e, uint8_t type = 0) {
  uint8_t buf[kMaxRingEventBytes];
  const size_t n = put_ring_event(buf, e, type, o.tid);
  REQUIRE(n == ring_event_size(buf[1]));
  o.ring.put_bytes(buf, n);
  // An event of another thread than the last named one: named first.
  if (o.tid && o.tid != o.named_tid) put_ext(o.plain, ext::EventThread{o.tid});
  if (o.tid) o.named_tid = o.tid;
  if (type) put_ext(o.plain, ext::ObjectType{type});
  put_memprof_event(o.plain, e);
}
void alloc(Both &o, uint64_t addr, uint64_t size, uint64_t host = 1) {
  event(o, AllocEvent{kAeventAlloc, GuestLoc{}, true, host, 0, 0, 0, addr, size});
}
void free_(Both &o, uint64_t addr) {
  event(o, AllocEvent{kAeventFree, GuestLoc{}, false, 0, 0, addr, 0, 0, 0});
}
void realloc_(Both &o, uint64_t old, uint64_t addr, uint64_t size, uint64_t host = 1) {
  event(o, AllocEvent{kAeventRealloc, GuestLoc{}, true, host, 0, old, 0, addr, size});
}

// The opening, then the records `body` writes, then stats and the epilogue:
// the ring's records, and the plain stream's.
struct Stream {
  Bytes opening, records, plain_records;
};

template <class Body>
Stream make_stream(Body body) {
  VecOut open;
  put_prologue(open, SectionKind::Symtab, false);
  put_symtab_final(open);
  put_prologue(open, SectionKind::Memprof, true);
  put_ext(open, ext::Process{7, 1, 0, "/bin/app"});
  Both o;
  body(o);
  put_ext(o, ext::Stats{{{"dropped", 0}}});
  put_memprof_epilogue(o);
  return {open.b, o.ring.b, o.plain.b};
}

struct Compacted {
  Bytes out;
  static long sink(void *self, const uint8_t *data, size_t len) {
    auto *c = static_cast<Compacted *>(self);
    c->out.insert(c->out.end(), data, data + len);
    return 0;
  }
};

// The ring's stream through a compactor (not compacting: only encoding the
// events), its records fed in pieces cut at `cuts`.
Bytes through(bool compacting, const Stream &s, const std::vector<size_t> &cuts) {
  static StreamCompactor compactor;  // (its buffers are mapped once)
  REQUIRE(compactor.init(compacting));
  compactor.start();
  Compacted c;
  REQUIRE(compactor.put(s.opening.data(), s.opening.size(), Compacted::sink, &c) == 0);
  compactor.arm();
  size_t from = 0;
  for (size_t cut : cuts) {
    REQUIRE(compactor.put(s.records.data() + from, cut - from, Compacted::sink, &c) == 0);
    from = cut;
  }
  REQUIRE(compactor.put(s.records.data() + from, s.records.size() - from, Compacted::sink, &c) == 0);
  REQUIRE(compactor.flush(Compacted::sink, &c) == 0);
  return c.out;
}
Bytes compact(const Stream &s, const std::vector<size_t> &cuts = {}) {
  return through(true, s, cuts);
}
Bytes expand(const Stream &s, const std::vector<size_t> &cuts = {}) {
  return through(false, s, cuts);
}

// The stream as the encoders write it.
Bytes whole(const Stream &s) {
  Bytes b = s.opening;
  b.insert(b.end(), s.plain_records.begin(), s.plain_records.end());
  return b;
}

// Every kind of record and event, and the cases that must keep addresses.
Stream every_case() {
  return make_stream([](Both &o) {
    put_ext(o, ext::ModuleLoad{0x400000, 0x10000, "/bin/app", "\x01\x02"});
    put_ext(o, ext::StackHost{1, 0, 0x401000});
    put_ext(o, ext::StackHost{2, 1, 0x401100});
    put_ext(o, ext::StackHost{3, 0, 0x402000});
    put_ext(o, ext::StackGuest{4, 0, kFrameLfunc, 0x500, 7});
    put_memprof_symbol(o, Symbol{kSymLfunc, 0x500, 3, 0, "@app.lua"});
    o.tid = 4001;  // threads: each switch is one event-thread, wherever
    for (uint64_t i = 0; i < 10; i++) alloc(o, 0x10000 + 32 * i, 32);  // stack-like
    o.tid = 4002;  // another thread frees them
    for (uint64_t i = 10; i-- > 0;) free_(o, 0x10000 + 32 * i);
    for (uint64_t i = 0; i < 25; i++) {  // queue-like: five live, two threads in turn
      o.tid = i % 2 ? 4001 : 4002;
      alloc(o, 0x20000 + 64 * i, 48, 2);
      if (i >= 5) free_(o, 0x20000 + 64 * (i - 5));
    }
    o.tid = 4003;  // a new thread's first event is typed: named before its object type
    for (uint64_t i = 20; i < 25; i++) free_(o, 0x20000 + 64 * i);
    // A typed guest allocation, freed where the collector runs.
    event(o, AllocEvent{kAeventAlloc, GuestLoc{kAsourceLfunc, 0x500, 7, 0}, true, 0, 4, 0, 0,
                        0x30000, 56},
          2);
    event(o, AllocEvent{kAeventFree, GuestLoc{kAsourceInternal, 0, 0, 0}, false, 0, 0, 0x30000,
                        56, 0, 0});
    // A C function's and a trace's, with a location but no stacks (a guest
    // VM's event on a thread without scratch).
    event(o, AllocEvent{kAeventAlloc, GuestLoc{kAsourceCfunc, 0x600, 0, 0}, false, 0, 0, 0, 0,
                        0x31000, 24},
          3);
    event(o, AllocEvent{kAeventRealloc, GuestLoc{kAsourceTrace, 0, 0, 9}, true, 0, 4, 0x31000, 24,
                        0x32000, 48});
    free_(o, 0x32000);
    put_ext(o.ring, ext::Skip{5});  // a gap: the ring's only
    put_ext(o, ext::TimeMark{100, 4096, 0});
    alloc(o, 0x40000, 64);  // realloc in place, then moved
    realloc_(o, 0x40000, 0x40000, 128);
    realloc_(o, 0x40000, 0x41000, 256);
    free_(o, 0x41000);
    realloc_(o, 0, 0x50000, 24);  // realloc(NULL, n): kept with addresses
    free_(o, 0x50000);
    free_(o, 0xdead0);  // never made: kept
    realloc_(o, 0xbeef0, 0x51000, 40);  // of a block never made: kept
    free_(o, 0x51000);
    // A reuse the file shows before its free: the second block at 0x60000
    // keeps its address; the realloc takes the oldest, the free the other.
    alloc(o, 0x60000, 16, 3);
    alloc(o, 0x60000, 17, 3);
    realloc_(o, 0x60000, 0x61000, 33, 3);
    free_(o, 0x60000);
    free_(o, 0x61000);
    put_ext(o, ext::Marker{200, "end"});
    alloc(o, 0x70000, 99);  // a leak
  });
}

}  // namespace

TEST_CASE("compacted, a stream reads as the same events, paired the same, every other record kept") {
  const Stream s = every_case();
  const Bytes plain = whole(s), packed = compact(s);
  const Read a = read_stream(plain), b = read_stream(packed);
  REQUIRE(a.events.size() == b.events.size());
  for (size_t i = 0; i < a.events.size(); i++) {
    INFO("event " << i);
    CHECK(a.events[i] == b.events[i]);
  }
  CHECK(b.stats.at("dropped") == 0);  // the stream's own stats record, with the compactor's
  // By construction: 90 events, 7 kept with addresses (the second block at
  // 0x60000 and its free, realloc(NULL) and its block's free, the free and
  // the realloc of blocks never made, and that realloc's block's free).
  CHECK(b.stats.at("compact_events") == 90 - 7);
  CHECK(b.stats.at("events_with_addresses") == 7);
  CHECK(b.stats.at("reallocs_split") == 0);
  CHECK(b.stats.at("free_locations_lost") == 0);
  // Sites: 32 B (stack 1), 48 B (stack 2), the typed one, the free's, the
  // C function's and the trace's, 64, 128 and 256 B (stack 1), 16 B and
  // 33 B (stack 3), 99 B.
  CHECK(b.stats.at("compact_sites") == 12);
  CHECK(packed.size() < plain.size());
}

TEST_CASE("not compacting, the ring's stream becomes the plain stream byte for byte, however cut") {
  const Stream s = every_case();
  const Bytes plain = whole(s);
  CHECK(expand(s) == plain);
  for (size_t cut = 1; cut < s.records.size(); cut++) {
    INFO("cut at " << cut);
    REQUIRE(expand(s, {cut}) == plain);
  }
  CHECK(read_stream(plain).stats.count("compact_events") == 0);  // no counters of its own
}

TEST_CASE("the compactor's output does not depend on where its input is cut") {
  const Stream s = every_case();
  const Bytes once = compact(s);
  for (size_t cut = 1; cut < s.records.size(); cut++) {
    INFO("cut at " << cut);
    REQUIRE(compact(s, {cut}) == once);
  }
  std::vector<size_t> every_byte;
  for (size_t cut = 1; cut < s.records.size(); cut++) every_byte.push_back(cut);
  CHECK(compact(s, every_byte) == once);
}

TEST_CASE("a realloc onto an address the map holds live is the old block's free and a plain allocation") {
  const Stream s = make_stream([](Both &o) {
    put_ext(o, ext::StackHost{1, 0, 0x401000});
    alloc(o, 0x10000, 8);
    alloc(o, 0x20000, 8);
    realloc_(o, 0x10000, 0x20000, 24);  // 0x20000 reused before its free was recorded
    free_(o, 0x20000);                  // the oldest there: the 8-byte block
    free_(o, 0x20000);                  // the realloc's
  });
  const Read a = read_stream(whole(s)), b = read_stream(compact(s));
  REQUIRE(b.events.size() == a.events.size() + 1);
  // 0, 1: the process and the stack node; 2, 3: the allocations; then the
  // realloc's halves and the frees.
  CHECK(b.events[4].record == MemprofRecord::Free);
  CHECK(b.events[4].paired == 2);
  CHECK(b.events[5].record == MemprofRecord::Alloc);
  CHECK(b.events[5].nsize == 24);
  CHECK(b.events[6].paired == 3);
  CHECK(b.events[6].released == 8);
  CHECK(b.events[7].paired == 5);
  CHECK(b.events[7].released == 24);
  CHECK(b.stats.at("reallocs_split") == 1);
  CHECK(b.stats.at("events_with_addresses") == 2);  // the allocation and its free
}
