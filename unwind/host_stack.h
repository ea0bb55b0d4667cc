// HostStack: capture of the calling thread's native stack, innermost first,
// the agent's own frames removed. Two back ends behind one call:
// - the rule walk (default): steps frame to frame with the DWARF rules of
//   unwind_rule.h, cached per thread, and stops as soon as it reaches a
//   frame state (ip, sp, rbp) that the thread's previous walk also passed
//   through and every stack word that walk read above it still holds the
//   same value: the rest of the stack is then provably the same, so an event
//   pays only for the frames that changed. Only the words the walk depends
//   on count (a saved rbp only when an outer step reads rbp). Walks are
//   also remembered whole with their caller's name for the stack (recall()):
//   a walk that starts in a remembered state while every word it read still
//   holds its value is that stack again, and costs no walk at all;
// - libunwind's unw_backtrace (per-thread cache): used for the whole capture
//   whenever the rule walk meets anything it cannot prove (no rule, a signal
//   frame, a step leaving the thread's stack mapping), and always in the
//   safe mode (PROF_UNWIND=libunwind).
//
// Invariants: no malloc (the caller owns the per-thread HostStackCache,
// zero-initialised memory) and no lock of its own; not for signal handlers
// (libunwind and /proc reads). The rule walk reads only the live stack:
// between the starting sp and the end of the mapping that holds it, read
// from /proc/thread-self/maps when the thread first runs on that mapping (a few
// per thread are kept: the main stack growing, coroutine stacks). Return
// addresses are reported as they are (not minus one).
#pragma once

#include <cstddef>
#include <cstdint>

#include "unwind_rule.h"

namespace prof {

// What one thread keeps between captures (about 350 KiB; map it lazily:
// a capture touches only as much as its stack is deep).
struct HostStackCache {
  static constexpr int kMaxFrames = 1024 + 16;
  static constexpr int kRuleSlots = 4096;
  // One frame of the previous walk: the state on entry, and the addresses
  // its step read (0: not read); the values read are the next step's
  // ip, rbp and sp. rbp only counts when the rest of the walk depends on it
  // (most code keeps no frame pointer, and rbp then holds any value).
  struct Step {
    uint64_t ip, sp, rbp;
    RuleReads reads;
    bool reads_rbp;    // this frame's rule reads rbp
    bool keeps_rbp;    // this frame's rule hands rbp to its caller unchanged
    bool rbp_needed;   // the walk from this state depends on its rbp
  };

  struct Range {
    uint64_t lo, hi;
  };
  static constexpr int kStacks = 4;

  uint64_t unmaps_seen;      // how many of HostStack's unmaps `stacks` accounts for
  Range stacks[kStacks];     // mappings this thread ran its stack in (0, 0: none)
  int next_stack;            // the entry to replace next
  uint64_t read_lo, read_hi; // this capture's stack: the walk reads only here
  // The previous walk, root first: steps[0..depth), and `beyond`, the state
  // its outermost step led to (read by that step). cut: it stopped at the
  // depth limit, so steps[0] is not the stack's root.
  int depth;
  bool cut;
  int joined;          // the last walk kept steps[0..joined) of the one before
  int prev_program;    // the previous capture's frame count, if root-aligned (else 0)
  // Every stack word steps[0..depth) read, root first, with the value read:
  // steps[0..m] read watch[0..watch_end[m]). Kept apart from the steps so
  // that checking the outer frames is one tight pass.
  struct Watch {
    uint64_t at, value;
  };
  int watch_end[kMaxFrames];
  uint64_t watch_lo[kMaxFrames], watch_hi[kMaxFrames];  // the lowest, highest `at` up to m
  Watch watch[3 * kMaxFrames];
  uint64_t ips[kMaxFrames];  // steps[m].ip, root first, packed for the copy out
  // libunwind's frames, innermost first, before they are packed into ips
  // (here, not on the stack: a handler's alternate stack may be 8 KiB).
  void *fallback[kMaxFrames];
  bool walked;               // the last capture was a rule walk (remember() may keep it)

  // Remembered walks (HostStack::recall): where each started, every word it
  // read with the value read, and its caller's tag. Several per start state
  // (a set): calls from different paths often reach the allocator at the
  // same sp (Lua's l_alloc).
  static constexpr int kMemoSets = 16, kMemoWays = 4, kMemoWords = 48;
  struct Memo {
    uint64_t ip, sp, rbp;
    bool rbp_needed;
    int words;  // 0: an empty entry
    uint64_t rules_generation, epoch, tag;
    uint64_t lo, hi;  // the lowest and highest word read
    Watch watch[kMemoWords];
  };
  // Way-major, and a set's ways filled in order and never emptied: a short
  // process's walks, one way of each set, lie in a few pages (each a page
  // fault), and a lookup stops at the first empty way.
  Memo memos[kMemoWays][kMemoSets];
  uint8_t memo_next[kMemoSets];  // the way each set replaces next
  Step beyond;
  Step steps[kMaxFrames];
  Step walk[kMaxFrames + 1];  // a walk in progress, innermost first
  UnwindRuleCache<kRuleSlots> rules;  // its generation is also the walk's
};

// The call site of the function whose own frame is `frame`; pass it
// __builtin_frame_address(0), which makes the compiler keep a standard frame
// ([frame] = the caller's rbp, [frame + 8] = the return address) there.
inline CallSite caller_of(const void *frame) {
  const auto *fp = static_cast<const uint64_t *>(frame);
  return CallSite{fp[1], reinterpret_cast<uint64_t>(fp + 2), fp[0]};
}

class HostStack {
 public:
  // Records which addresses are the agent's and picks the back end (call
  // once, at start, before any capture).
  static void init(const void *any_agent_address, bool rule_walk);
  // The stack of `from` (a call site on the calling thread's stack, in a
  // frame that is still live), at most `max` frames: they stay root first
  // in the cache, *count of them from the pointer returned (valid until the
  // next capture with this cache). *unchanged: how many outermost frames
  // are provably those of the previous capture with this cache (0 when
  // unknown), so that a caller keeping its own copy of that stack need not
  // compare them.
  static const uint64_t *capture_root_first(const CallSite &from, int max, HostStackCache *cache,
                                            int *count, int *unchanged);
  // A shortcut for callers that name each stack (the interner's id): true
  // when the walk from `from` provably repeats one remembered under `epoch`
  // (it starts in the same state and every word it read still holds the
  // same value, so it would find the same frames); *tag is then the tag
  // remembered with it, and nothing else is done (the cache's previous
  // walk stays the last capture's). The caller changes `epoch` whenever its
  // tags, or anything else shaping the result (the depth limit), change.
  static bool recall(const CallSite &from, HostStackCache *cache, uint64_t epoch, uint64_t *tag);
  // Remembers the last capture's walk with `tag` under `epoch`, if it was a
  // rule walk that read few enough words.
  static void remember(HostStackCache *cache, uint64_t epoch, uint64_t tag);
  // [addr, addr + len) is being unmapped (munmap, mremap): threads drop the
  // stack mappings they cached there.
  static void forget_mapping(uint64_t addr, uint64_t len);
  // How many captures fell back to libunwind (for the stats record); a
  // forked child starts its own count.
  static uint64_t fallbacks();
  static void reset_fallbacks();
};

}  // namespace prof
