#include "host_stack.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "module_map.h"
#include "proc_maps.h"

namespace prof {

namespace {

// The latest unmapped ranges, for the threads' cached stack mappings. An
// entry is valid for unmap number n when its stamp is n + 1.
struct Unmapped {
  std::atomic<uint64_t> lo, hi, stamp;
};
constexpr uint64_t kUnmapLog = 64;
Unmapped g_unmapped[kUnmapLog];
std::atomic<uint64_t> g_unmaps{0};
std::atomic<uint64_t> g_fallbacks{0};

using Step = HostStackCache::Step;

uint64_t g_self_lo = 0, g_self_hi = 0;
bool g_rule_walk = false;

// True when the words watch[0..n), whose addresses lie in [lo, hi], are all
// inside this capture's stack (it may have been unmapped and mapped again,
// smaller) and each still holds the value it held.
bool words_hold(const HostStackCache *c, const HostStackCache::Watch *watch, int n, uint64_t lo,
                uint64_t hi) {
  if (lo < c->read_lo || hi > c->read_hi - 8) return false;
  // Inner first (changes are near), four words a test: they nearly always hold.
  int i = n;
  for (; i >= 4; i -= 4) {
    const HostStackCache::Watch *w = watch + i - 4;
    if ((load_word(w[3].at) ^ w[3].value) | (load_word(w[2].at) ^ w[2].value) |
        (load_word(w[1].at) ^ w[1].value) | (load_word(w[0].at) ^ w[0].value))
      return false;
  }
  for (; i > 0; i--)
    if (load_word(watch[i - 1].at) != watch[i - 1].value) return false;
  return true;
}

// True when every stack word that the previous walk read from its root-first
// step r outward still holds what it read: a walk from steps[r] would
// repeat the previous one.
bool outer_unchanged(const HostStackCache *c, int r) {
  return words_hold(c, c->watch, c->watch_end[r], c->watch_lo[r], c->watch_hi[r]);
}

// Lists the words read by steps[from..n) (root first) that the walk depends
// on in the watch list, and their ips in the packed list.
void watch_steps(HostStackCache *c, int from, int n) {
  int k = from ? c->watch_end[from - 1] : 0;
  uint64_t lo = from ? c->watch_lo[from - 1] : ~uint64_t(0), hi = from ? c->watch_hi[from - 1] : 0;
  auto watch = [&](uint64_t at, uint64_t value) {
    if (!at) return;
    c->watch[k++] = {at, value};
    lo = at < lo ? at : lo;
    hi = at > hi ? at : hi;
  };
  for (int m = from; m < n; m++) {
    const Step &s = c->steps[m], &next = m ? c->steps[m - 1] : c->beyond;
    watch(s.reads.ra_at, next.ip);
    // The caller's rbp only matters when its walk depends on it (most code
    // keeps no frame pointer: rbp holds any variable, saved by the callee).
    if (m == 0 || next.rbp_needed) watch(s.reads.rbp_at, next.rbp);
    watch(s.reads.cfa_at, next.sp);
    c->watch_end[m] = k;
    c->watch_lo[m] = lo;
    c->watch_hi[m] = hi;
    c->ips[m] = s.ip;
  }
}

// Records the frame in state `at` into `frame`, with the addresses its rule
// reads, and steps `at` to the caller's state (apply_unwind_rule's result).
// (XXX: field by field, in scalars: copying whole Steps right after storing
// their fields stalls on store forwarding.)
int step(HostStackCache *c, CallSite &at, Step &frame) {
  const UnwindRule &r = c->rules.at(at.ip - 1);  // the call instruction's rule
  frame.ip = at.ip;
  frame.sp = at.sp;
  frame.rbp = at.rbp;
  frame.reads_rbp = r.cfa == UnwindRule::kRbp || r.cfa == UnwindRule::kRbpDeref || r.rbp == UnwindRule::kAtRbp;
  frame.keeps_rbp = r.rbp == UnwindRule::kSame;
  return apply_unwind_rule(r, at, c->read_lo, c->read_hi, frame.reads);
}

// The state after a walk's outermost step.
void set_beyond(HostStackCache *c, const CallSite &at) {
  c->beyond = Step{};
  c->beyond.ip = at.ip, c->beyond.sp = at.sp, c->beyond.rbp = at.rbp;
}

// Sets rbp_needed of the root-first steps[from..n), outward to inward.
void mark_rbp_needed(Step *steps, int from, int n) {
  for (int r = from; r < n; r++)
    steps[r].rbp_needed = steps[r].reads_rbp || (steps[r].keeps_rbp && r > 0 && steps[r - 1].rbp_needed);
}

// Stores the new inner frames walk[0..i) (innermost first) root-first above
// steps[0..outer), and keeps at most `want` frames, dropping outermost ones.
int keep_walk(HostStackCache *c, int outer, int i, int want, bool cut) {
  for (int k = 0; k < i; k++) c->steps[outer + k] = c->walk[i - 1 - k];
  int n = outer + i;
  int fresh = outer;  // steps[fresh..n) are new or moved
  if (n > want) {  // only when the stack is deeper than the limit
    const int drop = n - want;
    c->beyond = c->steps[drop - 1];
    memmove(c->steps, c->steps + drop, sizeof(Step) * size_t(want));
    n = want;
    cut = true;
    fresh = 0;
  }
  mark_rbp_needed(c->steps, n - i > 0 ? n - i : 0, n);
  watch_steps(c, fresh, n);
  c->depth = n;
  c->cut = cut;
  c->joined = outer;
  return n;
}

// Sets the bounds this capture may read: from sp to the end of its mapping.
bool find_stack(HostStackCache *c, uint64_t sp) {
  const uint64_t unmaps = g_unmaps.load(std::memory_order_acquire);
  for (; c->unmaps_seen < unmaps; c->unmaps_seen++) {
    const Unmapped &u = g_unmapped[c->unmaps_seen % kUnmapLog];
    const uint64_t stamp = u.stamp.load(std::memory_order_acquire);
    const uint64_t lo = u.lo.load(std::memory_order_relaxed), hi = u.hi.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    const bool known = stamp == c->unmaps_seen + 1 && u.stamp.load(std::memory_order_relaxed) == stamp;
    for (auto &range : c->stacks)
      if (!known || (range.lo < hi && lo < range.hi)) range = HostStackCache::Range{0, 0};
  }
  for (const auto &range : c->stacks) {
    if (sp >= range.lo && sp < range.hi) {
      c->read_lo = sp, c->read_hi = range.hi;
      return true;
    }
  }
  HostStackCache::Range found;
  if (!mapping_of(sp, &found.lo, &found.hi)) return false;
  c->stacks[c->next_stack] = found;
  c->next_stack = (c->next_stack + 1) % HostStackCache::kStacks;
  c->read_lo = sp, c->read_hi = found.hi;
  return true;
}

// The rule walk from `at`: keeps the stack root-first in c->steps[0..n)
// and returns n, or -1.
int rule_walk(CallSite at, int want, HostStackCache *c) {
  if (c->rules.generation != unwind_rules_generation()) {
    c->rules.check_generation();
    c->depth = 0;  // the previous walk may name unloaded code
  }
  if (!find_stack(c, at.sp)) return -1;

  const Step *prev = c->steps;
  int r = c->depth - 1;  // the previous walk's candidate, root-first
  for (int i = 0;; i++) {
    // Joining the previous walk at r: frames r..0 stay as they are.
    while (r >= 0 && prev[r].sp < at.sp) r--;
    if (r >= 0 && prev[r].sp == at.sp && prev[r].ip == at.ip &&
        (!prev[r].rbp_needed || prev[r].rbp == at.rbp) && (!c->cut || r + 1 + i >= want) &&
        outer_unchanged(c, r))
      return keep_walk(c, r + 1, i, want, c->cut);
    if (i == want) {
      set_beyond(c, at);
      return keep_walk(c, 0, i, want, true);
    }
    const int stepped = step(c, at, c->walk[i]);
    if (stepped < 0) {
      c->depth = 0;
      return -1;
    }
    if (stepped == 0) {
      set_beyond(c, at);
      return keep_walk(c, 0, i + 1, want, false);
    }
  }
}

// How many innermost frames are the agent's own.
template <class IpAt>
int agent_frames(IpAt ip_at, int n) {
  int first = 0;
  while (first < n && ip_at(first) >= g_self_lo && ip_at(first) < g_self_hi) first++;
  return first;
}

// The memo set for walks starting in state (ip, sp).
int memo_set(uint64_t ip, uint64_t sp) {
  const uint64_t h = (ip ^ sp * 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
  return int((h >> 32) % HostStackCache::kMemoSets);
}

// True when the walk remembered in m would repeat from `from`.
bool memo_holds(HostStackCache *c, const HostStackCache::Memo &m, const CallSite &from,
                uint64_t epoch, uint64_t generation) {
  if (!m.words || m.ip != from.ip || m.sp != from.sp || (m.rbp_needed && m.rbp != from.rbp) ||
      m.epoch != epoch || m.rules_generation != generation)
    return false;
  return words_hold(c, m.watch, m.words, m.lo, m.hi);
}

}  // namespace

void HostStack::init(const void *any_agent_address, bool rule_walk) {
  ModuleMap::extent_of(any_agent_address, &g_self_lo, &g_self_hi);
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  g_rule_walk = rule_walk;
}

void HostStack::forget_mapping(uint64_t addr, uint64_t len) {
  const uint64_t n = g_unmaps.fetch_add(1, std::memory_order_acq_rel);
  Unmapped &u = g_unmapped[n % kUnmapLog];
  // A seqlock write: readers that see the stamp change in between retry-free
  // treat the entry as unknown and drop all their ranges (only slower).
  u.stamp.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  u.lo.store(addr, std::memory_order_relaxed);
  u.hi.store(addr + len, std::memory_order_relaxed);
  u.stamp.store(n + 1, std::memory_order_release);
}

uint64_t HostStack::fallbacks() { return g_fallbacks.load(std::memory_order_relaxed); }
void HostStack::reset_fallbacks() { g_fallbacks.store(0, std::memory_order_relaxed); }

// How many frames to walk for `max` of the program's: room for the agent's
// own frames, dropped after.
int frames_wanted(int max) {
  constexpr int kSpare = 8;
  return max + kSpare < HostStackCache::kMaxFrames ? max + kSpare : HostStackCache::kMaxFrames;
}

// libunwind's stack: the program's frames are raw[*first..*first + result).
int libunwind_frames(void **raw, int max, int *first) {
  const int n = unw_backtrace(raw, frames_wanted(max));
  *first = agent_frames([raw](int i) { return reinterpret_cast<uint64_t>(raw[i]); }, n);
  return n - *first < max ? n - *first : max;
}

const uint64_t *HostStack::capture_root_first(const CallSite &from, int max, HostStackCache *cache,
                                              int *count, int *unchanged) {
  *unchanged = 0;
  if (g_rule_walk) {
    const int n = rule_walk(from, frames_wanted(max), cache);
    cache->walked = n > 0;
    if (n >= 0) {
      const int first = agent_frames([cache, n](int i) { return cache->ips[n - 1 - i]; }, n);
      const int out = n - first < max ? n - first : max;
      // Root-aligned (no frame left out at the root end): the frames are
      // steps[0..out), and the joined steps are the previous capture's.
      const bool aligned = out == n - first && !cache->cut;
      if (aligned) *unchanged = std::min({cache->joined, out, cache->prev_program});
      cache->prev_program = aligned ? out : 0;
      *count = out;
      return cache->ips + (n - first - out);
    }
    cache->prev_program = 0;
    g_fallbacks.fetch_add(1, std::memory_order_relaxed);
  }
  // The walk's packed ips are free: its previous walk is forgotten.
  void **raw = cache->fallback;
  int first;
  const int out = libunwind_frames(raw, max, &first);
  for (int k = 0; k < out; k++) cache->ips[out - 1 - k] = reinterpret_cast<uint64_t>(raw[first + k]);
  *count = out;
  return cache->ips;
}

bool HostStack::recall(const CallSite &from, HostStackCache *c, uint64_t epoch, uint64_t *tag) {
  if (!g_rule_walk || !find_stack(c, from.sp)) return false;
  const uint64_t generation = unwind_rules_generation();
  const int set = memo_set(from.ip, from.sp);
  for (int way = 0; way < HostStackCache::kMemoWays; way++) {
    const HostStackCache::Memo &m = c->memos[way][set];
    if (!m.words) break;  // (and so are the ways after it)
    if (memo_holds(c, m, from, epoch, generation)) {
      *tag = m.tag;
      return true;
    }
  }
  return false;
}

void HostStack::remember(HostStackCache *c, uint64_t epoch, uint64_t tag) {
  if (!c->walked) return;
  const int n = c->depth, words = c->watch_end[n - 1];
  const Step &start = c->steps[n - 1];
  // (A walk that read no word is never recalled: no empty way before a full one.)
  if (words == 0 || words > HostStackCache::kMemoWords) return;
  const int set = memo_set(start.ip, start.sp);
  HostStackCache::Memo &m = c->memos[c->memo_next[set]][set];
  c->memo_next[set] = uint8_t((c->memo_next[set] + 1) % HostStackCache::kMemoWays);
  m.ip = start.ip, m.sp = start.sp, m.rbp = start.rbp;
  m.rbp_needed = start.rbp_needed;
  m.words = words;
  m.rules_generation = c->rules.generation;
  m.epoch = epoch;
  m.tag = tag;
  m.lo = c->watch_lo[n - 1], m.hi = c->watch_hi[n - 1];
  memcpy(m.watch, c->watch, sizeof(HostStackCache::Watch) * size_t(words));
}

}  // namespace prof
