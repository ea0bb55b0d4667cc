#include "stream/stream_compactor.h"

#include <cstring>

#include "ext.h"
#include "memprof.h"
#include "record_extent.h"
#include "ring_event.h"
#include "ring_file.h"
#include "stream_writer.h"

namespace prof {

static_assert(StreamCompactor::kRefNumberBits == kRingRefNumberBits, "ring_file.h's refs");
struct StreamCompactor::Ahead {
  AllocEvent e;
  uint8_t type;
  uint32_t tid;
  size_t len;
};

uint64_t StreamCompactor::Site::hash() const {
  uint64_t h = key[0];
  for (int i = 1; i < 5; i++) h = (h ^ key[i]) * 0x9E3779B97F4A7C15ull;
  return h >> 20;
}

bool StreamCompactor::Site::same(const Site &o) const {
  return key[0] == o.key[0] && key[1] == o.key[1] && key[2] == o.key[2] && key[3] == o.key[3] &&
         key[4] == o.key[4];
}

bool StreamCompactor::init(bool compacting) {
  compacting_ = compacting;
  if (carry_) return true;
  carry_ = static_cast<uint8_t *>(raw_map(kCarryMapBytes));
  if (!carry_) return false;
  out_ = carry_ + kCarry;
  site_blocks_ = reinterpret_cast<SiteBlocks *>(out_ + kOut);
  return true;
}

void StreamCompactor::release() {
  raw_unmap(carry_, kCarryMapBytes);
  carry_ = out_ = nullptr;
  site_blocks_ = nullptr;
  blocks_.release();
  sites_.release();
}

void StreamCompactor::start() {
  armed_ = broken_ = stats_written_ = false;
  carry_len_ = out_len_ = 0;
  skip_left_ = 0;
  next_site_ = 1;
  last_site_ = Site{};
  last_tid_ = 0;
  plain_events_ = compact_events_ = 0;
  // (A forked child's tables are its parent's copies: new ones.) Small at
  // first, as a short process needs them (each page a fault); they double
  // as they fill.
  if (!carry_ || (compacting_ && (!blocks_.init(1 << 8) || !sites_.init(1 << 7)))) broken_ = true;
}

void StreamCompactor::keep_table_in(TableFile *file) {
  table_file_ = file;
  blocks_.keep_in(file);
  if (compacting_ && !broken_ && !blocks_.init(1 << 8)) broken_ = true;
}

void StreamCompactor::log_change(uint64_t addr, uint64_t ref) {
  TableFile *f = table_file_;
  if (!f || !f->where) return;
  const uint64_t n = __atomic_load_n(f->undo_len, __ATOMIC_RELAXED);
  if (n >= f->undo_cap) return;  // (never: event_ring.h's kUndoCap)
  store_pair(f->undo + 2 * n, addr, ref);
  __atomic_store_n(f->undo_len, n + 1, __ATOMIC_RELEASE);
}

void StreamCompactor::emit(const uint8_t *data, size_t len) {
  if (out_len_ + len > kOut) drain();
  if (len > kOut) {
    pass(data, len);
    return;
  }
  memcpy(out_ + out_len_, data, len);
  out_len_ += len;
}

void StreamCompactor::pass(const uint8_t *data, size_t len) {
  if (err_ == 0 && len) err_ = sink_(ctx_, data, len);
}

void StreamCompactor::drain() {
  pass(out_, out_len_);
  out_len_ = 0;
}

template <class Record>
void StreamCompactor::emit_record(const Record &r) {
  if (out_len_ + kMaxOutRecord > kOut) drain();
  SpanWriter w(out_ + out_len_);
  put_ext(w, r);
  out_len_ += w.size();
}

void StreamCompactor::emit_stats(const uint8_t *counters, size_t count, size_t len) {
  const ext::StatView ours[] = {{"compact_events", compact_events_},
                                {"events_with_addresses", plain_events_},
                                {"compact_sites", next_site_ - 1},
                                {"reallocs_split", split_reallocs_},
                                {"free_locations_lost", locations_lost_}};
  static_assert(sizeof ours / sizeof ours[0] == kCompactorStats, "the counters it writes");
  uint8_t head[1 + kUleb128Max];
  SpanWriter w(head);
  w.put_u8(ext_header(ExtKind::Stats));
  w.put_uleb(count + kCompactorStats);
  emit(head, w.size());
  if (len) emit(counters, len);
  uint8_t buf[256];
  SpanWriter pairs(buf);
  for (const ext::StatView &c : ours) {
    pairs.put_string(c.name.data(), c.name.size());
    pairs.put_uleb(c.value);
  }
  emit(buf, pairs.size());
  stats_written_ = true;
}

StreamCompactor::Site StreamCompactor::site_key(uint8_t head, const GuestLoc &loc, uint64_t host,
                                                uint64_t guest, uint64_t size, uint8_t type) {
  return Site{{uint64_t(head) | uint64_t(type) << 8 | (loc.line | loc.traceno) << 16, loc.addr,
               host, guest, size},
              0};
}

uint64_t StreamCompactor::site_of(uint8_t head, const GuestLoc &loc, uint64_t host,
                                  uint64_t guest, uint64_t size, uint8_t type) {
  Site probe = site_key(head, loc, host, guest, size, type);
  // Runs of one site are common (a loop allocating): the last one first.
  if (last_site_.id && last_site_.same(probe)) return last_site_.id;
  if (const Site *known = sites_.find(probe)) {
    last_site_ = *known;
    return known->id;
  }
  if (next_site_ > kMaxSites) return 0;
  probe.id = next_site_;
  if (!sites_.insert(probe)) return 0;
  last_site_ = probe;
  next_site_++;
  site_blocks_[probe.id] = SiteBlocks{0, 0};
  emit_record(ext::Site{probe.id, loc, (head & kMemprofStacks) != 0, host, guest, size, type});
  return probe.id;
}

uint64_t StreamCompactor::release(uint64_t addr, uint64_t *step) {
  Block *b = blocks_.find(Block{addr, 0});
  if (!b) return 0;
  const uint64_t site = b->ref >> kNumberBits;
  SiteBlocks &sb = site_blocks_[site];
  const uint64_t age = sb.made - 1 - (b->ref & ((uint64_t(1) << kNumberBits) - 1));
  *step = zigzag(int64_t(age - sb.last_age));
  sb.last_age = age;
  log_change(addr, b->ref);
  blocks_.erase(b);
  return site;
}

bool StreamCompactor::make(uint64_t addr, uint64_t site) {
  SiteBlocks &sb = site_blocks_[site];
  if (addr == 0 || sb.made == kMaxSiteBlocks) return false;
  log_change(addr, kRingUndoAdded | site << kNumberBits | sb.made);
  if (!blocks_.insert(Block{addr, site << kNumberBits | sb.made})) return false;
  sb.made++;
  return true;
}

bool StreamCompactor::live(uint64_t addr) { return blocks_.find(Block{addr, 0}) != nullptr; }

void StreamCompactor::emit_event(const AllocEvent &e, uint8_t type) {
  static_assert(ext::ObjectType::kMaxBytes + kMaxEventBytes <= kMaxOutRecord, "room for an event");
  if (out_len_ + kMaxOutRecord > kOut) drain();
  SpanWriter w(out_ + out_len_);
  if (type) put_ext(w, ext::ObjectType{type});
  put_memprof_event(w, e);
  out_len_ += w.size();
}

void StreamCompactor::take_event(const AllocEvent &e, uint8_t type, uint32_t tid) {
  if (tid != last_tid_ && tid) {  // (before the event's site and object type; 0: unknown)
    last_tid_ = tid;
    emit_record(ext::EventThread{tid});
  }
  if (!compacting_) return emit_event(e, type);
  const uint8_t head = ring_event_header(e) & (kAsourceMask | kMemprofStacks);
  compact_events_++;  // (taken back below for an event left with addresses)
  if (e.aevent == kAeventAlloc) {
    // One probe: the address's slot, free (or it is live: a plain event).
    Block *slot = e.naddr ? blocks_.find_or_room(Block{e.naddr, 0}) : nullptr;
    const uint64_t site =
        slot && slot->empty() ? site_of(head, e.loc, e.host_stack, e.guest_stack, e.nsize, type) : 0;
    if (site && site_blocks_[site].made < kMaxSiteBlocks) {
      const uint64_t ref = site << kNumberBits | site_blocks_[site].made++;
      log_change(e.naddr, kRingUndoAdded | ref);
      blocks_.fill(slot, Block{e.naddr, ref});
      return emit_record(ext::AllocAt{site});
    }
  } else if (e.aevent == kAeventFree) {
    // A free with a location or stacks has a site of its own, of size 0.
    const bool located = head != kAsourceNone;
    const uint64_t free_site = located ? site_of(head, e.loc, e.host_stack, e.guest_stack, 0, 0) : 0;
    uint64_t step = 0;
    if (const uint64_t site = release(e.oaddr, &step)) {
      if (!free_site) {
        if (located) locations_lost_++;
        return emit_record(ext::FreeOf{site, step});
      }
      return emit_record(ext::FreeAt{free_site, site, step});
    }
  } else if (e.oaddr && live(e.oaddr)) {
    // A realloc of a block of the map: its new block joins the map too,
    // unless its address is live there already (a reuse the file shows
    // early) or no site can be had; then it is the old block's free and a
    // plain allocation.
    const uint64_t new_site =
        e.naddr != e.oaddr && live(e.naddr)
            ? 0
            : site_of(head, e.loc, e.host_stack, e.guest_stack, e.nsize, type);
    uint64_t step = 0;
    const uint64_t site = release(e.oaddr, &step);
    if (new_site && make(e.naddr, new_site))
      return emit_record(ext::ReallocOf{site, step, new_site});
    emit_record(ext::FreeOf{site, step});
    split_reallocs_++;
    AllocEvent alloc = e;
    alloc.aevent = kAeventAlloc;
    alloc.oaddr = alloc.osize = 0;
    compact_events_--;
    plain_events_++;
    return emit_event(alloc, type);
  }
  compact_events_--;
  plain_events_++;
  emit_event(e, type);
}

size_t StreamCompactor::read_ahead(const uint8_t *p, size_t len, Ahead *a) {
  if (len < 2 || p[0] != kRingEventTag) return 0;
  const size_t size = ring_event_size(p[1]);
  if (len < size) return 0;
  read_ring_event(p, &a->e, &a->type, &a->tid);
  // The blocks' slots, both whatever the event (GCC 12 drops a prefetch
  // that is all a branch does; an absent address's is one line, soon
  // cached), and the site's: a program with many sites misses there too.
  const AllocEvent &e = a->e;
  blocks_.prefetch(Block{e.oaddr, 0});
  blocks_.prefetch(Block{e.naddr, 0});
  sites_.prefetch(site_key(p[1] & (kAsourceMask | kMemprofStacks), e.loc, e.host_stack,
                           e.guest_stack, e.aevent & kAeventAlloc ? e.nsize : 0, a->type));
  return size;
}

long StreamCompactor::take(const uint8_t *p, size_t len) {
  if (len == 0) return 0;
  if (p[0] == kRingEventTag) {
    if (len < 2 || len < ring_event_size(p[1])) return 0;
    AllocEvent e;
    uint8_t type;
    uint32_t tid;
    read_ring_event(p, &e, &type, &tid);
    take_event(e, type, tid);
    return long(ring_event_size(p[1]));
  }
  ExtentCursor c(p, p + len);
  const uint8_t header = c.u8();
  if (header & kMemprofEpilogue) {  // our counters (if no stats came), then the end
    if (compacting_ && !stats_written_) emit_stats(nullptr, 0, 0);
    emit(p, 1);
    armed_ = false;
    return 1;
  }
  if (header & kExtFlag) {
    const uint8_t kind = header & kExtKindMask;
    if (kind == uint8_t(ExtKind::Skip)) {  // dropped, as its bytes come
      skip_left_ = c.uleb();
      return c.ok() ? long(c.used()) : c.status() == ExtentCursor::kNeedMore ? 0 : -1;
    }
    if (kind == uint8_t(ExtKind::Stats) && compacting_ && !stats_written_) {
      // Ours join the stream's.
      ExtentCursor whole(p + 1, p + len);
      skip_ext_body(whole, kind);
      if (!whole.ok()) return whole.status() == ExtentCursor::kNeedMore ? 0 : -1;
      const uint64_t count = c.uleb();
      const size_t pairs_at = c.used();
      // (Too many to join, ours go in a record of their own at the end.)
      if (count + kCompactorStats > kMaxExtStats) emit(p, 1 + whole.used());
      else emit_stats(p + pairs_at, size_t(count), 1 + whole.used() - pairs_at);
      return long(1 + whole.used());
    }
    skip_ext_body(c, kind);
  } else if ((header & kAeventMask) == kAeventSymtab) {
    skip_symbol_body(c, header & kAsourceMask);
  } else {
    c.fail();  // events come as ring events only
  }
  if (!c.ok()) return c.status() == ExtentCursor::kNeedMore ? 0 : -1;
  emit(p, c.used());
  return long(c.used());
}

long StreamCompactor::put(const uint8_t *data, size_t len, Sink sink, void *ctx) {
  sink_ = sink, ctx_ = ctx, err_ = 0;
  if (!armed_ || broken_) {
    drain();
    pass(data, len);
    return err_;
  }
  Ahead ahead[kAhead];
  size_t first = 0, queued = 0;  // ahead[first], the next queued - 1: the events next in data
  const uint8_t *scout = data;   // where the events read ahead end
  while (len > 0 && err_ == 0 && armed_ && !broken_) {
    if (skip_left_) {
      const size_t n = len < skip_left_ ? len : size_t(skip_left_);
      data += n, len -= n, skip_left_ -= n;
      continue;
    }
    if (carry_len_) {  // the rest of a cut record
      const size_t n = len < kCarry - carry_len_ ? len : kCarry - carry_len_;
      memcpy(carry_ + carry_len_, data, n);
      const long r = take(carry_, carry_len_ + n);
      if (r > 0) {
        const size_t used = size_t(r) - carry_len_;
        data += used, len -= used;
        carry_len_ = 0;
      } else if (r == 0 && carry_len_ + n < kCarry) {
        carry_len_ += n;
        data += n, len -= n;
      } else {
        broken_ = true;
      }
      continue;
    }
    // XXX: the address map is larger than the caches and events come in
    // no order it knows: the ring events ahead (up to kAhead of them, whole
    // in these bytes) are read now and their blocks' slots asked for, so
    // that each is in cache by its turn.
    if (queued == 0) scout = data;
    for (; compacting_ && queued < kAhead; queued++) {
      Ahead &a = ahead[(first + queued) % kAhead];
      if (!(a.len = read_ahead(scout, size_t(data + len - scout), &a))) break;
      scout += a.len;
    }
    if (queued > 0) {
      const Ahead &a = ahead[first];
      first = (first + 1) % kAhead, queued--;
      take_event(a.e, a.type, a.tid);
      data += a.len, len -= a.len;
      continue;
    }
    const long r = take(data, len);
    if (r > 0) {
      data += r, len -= size_t(r);
    } else if (r == 0 && len < kCarry) {
      memcpy(carry_, data, len);
      carry_len_ = len;
      len = 0;
    } else {
      broken_ = true;
    }
  }
  if (broken_ || !armed_) {
    // No record of the grammar (never expected), or past the epilogue: the
    // rest as it is; readers say where it goes wrong.
    drain();
    pass(carry_, carry_len_);
    carry_len_ = 0;
    pass(data, len);
  }
  return err_;
}

long StreamCompactor::flush(Sink sink, void *ctx) {
  sink_ = sink, ctx_ = ctx, err_ = 0;
  drain();
  return err_;
}

}  // namespace prof
