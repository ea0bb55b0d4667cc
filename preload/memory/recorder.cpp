#include "memory/recorder.h"

#include <atomic>
#include <cstdint>
#include <unistd.h>

#include "agent.h"
#include "ext.h"
#include "memory/alloc_sampling.h"
#include "guest_registry.h"
#include "host_stack.h"
#include "memprof.h"
#include "ring_event.h"
#include "stream_writer.h"
#include "thread_names.h"
#include "thread_state.h"

namespace prof {
namespace {

struct Where {
  GuestLoc loc;
  uint64_t host = 0, guest = 0;
};

// Captures and interns the calling thread's host stack.
[[gnu::always_inline]] inline uint64_t capture_host(const CallSite &at, ThreadScratch *s) {
  uint64_t host = 0;
  // A walk that provably repeats a remembered one has that one's id.
  const uint64_t epoch = g_agent.stacks.generation();
  if (!HostStack::recall(at, &s->unwind, epoch, &host)) {
    int n, unchanged;
    const uint64_t *root =
        HostStack::capture_root_first(at, int(g_agent.cfg.max_depth), &s->unwind, &n, &unchanged);
    if (n == 0) g_agent.unwind_failures.fetch_add(1, std::memory_order_relaxed);
    // The previous capture was interned with host_path: its outer frames are known.
    host = g_agent.stacks.intern([root, n](int i) { return FrameKey{root[n - 1 - i], 0}; }, n,
                                 s->host_path, unchanged);
    HostStack::remember(&s->unwind, epoch, host);
  }
  return host;
}

// Captures and interns the calling thread's stacks.
[[gnu::always_inline]] inline Where capture(const CallSite &at, ThreadScratch *s) {
  Where w;
  w.host = capture_host(at, s);
  if (!guest_registered()) return w;

  int vmstate = 0, unchanged = 0, g = 0;
  // The frames may lie in the recaller's memory: read, never kept.
  const prof_guest_frame *guest = guest_recall_backtrace(
      s->guest, int(sizeof s->guest / sizeof s->guest[0]), &g, &vmstate, &unchanged);
  if (guest_stack_cut(guest, g))
    g_agent.guest_stacks_cut.fetch_add(1, std::memory_order_relaxed);
  w.loc.source = kAsourceInternal;
  // The memprof location: the innermost Lua frame when a built-in or C
  // function it called allocates (as LuaJIT charges its fast functions to
  // the calling frame, and the memprof RFC's report charges string.rep to
  // the Lua line); else the C function. The guest stack keeps both.
  const int lua = g > 1 && guest[0].type != PROF_FRAME_LFUNC &&
                          guest[1].type == PROF_FRAME_LFUNC ? 1 : 0;
  if (g > 0 && guest[lua].type == PROF_FRAME_LFUNC)
    w.loc = GuestLoc{kAsourceLfunc, guest[lua].addr, guest[lua].line, 0};
  else if (g > 0 && guest[0].type == PROF_FRAME_CFUNC)
    w.loc = GuestLoc{kAsourceCfunc, guest[0].addr, 0, 0};
  w.guest = g_agent.stacks.intern(
      [guest](int i) {
        return FrameKey{guest[i].addr, kGuestBit | guest[i].line << 2 | (guest[i].type & 3)};
      },
      g, s->guest_path, unchanged);
  s->guest_walk = nullptr;  // the path is no adapter walk's now
  drain_guest_symbols();
  return w;
}

static_assert(kMaxRingEventBytes <= EventRing::kMaxInPlace, "events are stored in place");

// Beside other producers: the event's exact length reserved first.
__attribute__((noinline)) void emit_in_place(const AllocEvent &e, uint8_t object_type,
                                             uint32_t tid) {
  g_agent.ring.append_in_place(ring_event_size(ring_event_header(e)), [&](uint8_t *dst) {
    put_ring_event(dst, e, object_type, tid);
  });
}

// The thread's first event: its id, kept, and its name, written before it.
__attribute__((noinline, cold)) uint32_t first_event_of_thread() {
  const pid_t tid = gettid();
  t_state.tid = uint32_t(tid);
  write_thread_name_to_memory(tid);
  return uint32_t(tid);
}

// osize 0: the agent cannot know what free() releases (memprof.h); a guest
// VM's allocator tells. The event goes to the ring as stored words
// (ring_event.h): the writer encodes it. Inline: each caller's constants
// (a free's kind, no stacks) leave only its own stores.
[[gnu::always_inline]] inline void emit(uint8_t aevent, const Where &w, bool stacks,
                                        const void *oaddr, const void *naddr, size_t nsize,
                                        size_t osize = 0) {
  const AllocEvent e{aevent, w.loc, stacks, w.host, w.guest, uint64_t(oaddr), osize,
                     uint64_t(naddr), nsize};
  const uint8_t object_type = aevent == kAeventFree ? 0 : t_state.object_type;
  const uint32_t tid = __builtin_expect(t_state.tid != 0, 1) ? t_state.tid : first_event_of_thread();
  // The solo producer stores at the head at once.
  if (!g_agent.ring.append_solo(kMaxRingEventBytes, [&](uint8_t *dst) {
        return put_ring_event(dst, e, object_type, tid);
      }))
    emit_in_place(e, object_type, tid);
}

void emit_with_stacks(const CallSite &at, uint8_t aevent, const void *oaddr, const void *naddr,
                      size_t nsize) {
  ThreadScratch *s = thread_scratch();
  if (!s) {
    emit(aevent, Where{}, false, oaddr, naddr, nsize);
    return;
  }
  emit(aevent, capture(at, s), true, oaddr, naddr, nsize);
}

}  // namespace

void record_alloc(const CallSite &at, const void *p, size_t size) {
  GuardScope guard(at);
  if (!memory_stream_ready()) return;
  remember_sampled(g_agent.cfg.sample_bytes, p);
  emit_with_stacks(at, kAeventAlloc, nullptr, p, size);
}

void record_free(const CallSite &at, const void *p) {
  GuardScope guard(at);
  if (!memory_stream_ready()) return;
  if (g_agent.cfg.free_stacks)
    emit_with_stacks(at, kAeventFree, p, nullptr, 0);
  else
    emit(kAeventFree, Where{}, false, p, nullptr, 0);
}

void record_realloc(const CallSite &at, const void *old, const void *p, size_t size) {
  GuardScope guard(at);
  if (!memory_stream_ready()) return;
  remember_sampled(g_agent.cfg.sample_bytes, p);
  emit_with_stacks(at, kAeventRealloc, old, p, size);
}

void record_map(const CallSite &at, const void *p, size_t len) {
  GuardScope guard(at);
  if (!memory_stream_ready()) return;
  ThreadScratch *s = thread_scratch();
  const Where w = s ? capture(at, s) : Where{};
  uint8_t buf[ext::Map::kMaxBytes];
  SpanWriter out(buf);
  put_ext(out, ext::Map{uint64_t(p), len, w.host, w.guest});
  g_agent.ring.append(out.data(), out.size());
}

void record_unmap(const void *p, size_t len) {
  GuardScope guard;
  if (!memory_stream_ready()) return;
  uint8_t buf[ext::Unmap::kMaxBytes];
  SpanWriter out(buf);
  put_ext(out, ext::Unmap{uint64_t(p), len});
  g_agent.ring.append(out.data(), out.size());
}

void record_guest(const CallSite &at, uint8_t aevent, const GuestLoc &loc,
                  const prof_guest_frame *frames, int nframes, const prof_guest_walk *walk,
                  const void *oaddr, size_t osize, const void *naddr, size_t nsize) {
  GuardScope guard(at);
  if (!memory_stream_ready()) return;
  if (naddr) remember_sampled(g_agent.cfg.sample_bytes, naddr);
  ThreadScratch *s = thread_scratch();
  if (!s) {
    emit(aevent, Where{loc}, false, oaddr, naddr, nsize, osize);
    return;
  }
  Where w{loc};
  if (loc.source == kAsourceCfunc) w.host = capture_host(at, s);
  // An empty stack (the collector's frees, which capture nothing) is id 0
  // without the interner, whose path cache keeps the last stack for the
  // next allocation's.
  if (nframes > 0) {
    // The adapter's unchanged frames hold if the path is its previous capture's.
    const bool follows = walk && walk->walk && s->guest_walk == walk->walk &&
                         s->guest_walk_seq + 1 == walk->seq;
    w.guest = g_agent.stacks.intern(
        [frames](int i) {
          return FrameKey{frames[i].addr, kGuestBit | frames[i].line << 2 | (frames[i].type & 3)};
        },
        nframes, s->guest_path, follows ? walk->same : 0);
    s->guest_walk = walk ? walk->walk : nullptr;
    s->guest_walk_seq = walk ? walk->seq : 0;
  } else if (walk) {
    s->guest_walk = nullptr;  // a capture of no frames: the path is an older one's
  }
  drain_guest_symbols();
  emit(aevent, w, true, oaddr, naddr, nsize, osize);
}

void record_guest_internal_free(const CallSite &at, const void *p, size_t osize) {
  GuardScope guard(at);
  if (!memory_stream_ready()) return;
  emit(kAeventFree, Where{GuestLoc{kAsourceInternal, 0, 0, 0}}, false, p, nullptr, 0, osize);
}

namespace {
std::atomic<bool> g_draining{false};
GuestSymbolCursor g_symbol_cursor;  // what this stream has written
}  // namespace

void restart_guest_symbols() {
  g_symbol_cursor.restart();
  g_draining.store(false);  // a parent thread may have been draining at fork()
}

void drain_guest_symbols() {
  // Nearly every event finds nothing new: then no locked exchange, which
  // would drain the store buffer under the ring's fresh stores.
  if (!g_symbol_cursor.behind() || g_draining.exchange(true, std::memory_order_acquire)) return;
  g_symbol_cursor.drain([](const GuestSymbol &g) {
    uint8_t buf[kMaxSymbolRecordBytes];  // the encoder cuts long names to fit
    SpanWriter out(buf);
    put_guest_symbol(out, g,
                     [](SpanWriter &o, const GuestSymbol &s) { put_memprof_symbol(o, s); });
    g_agent.ring.append(out.data(), out.size());
  });
  g_draining.store(false, std::memory_order_release);
}

}  // namespace prof
