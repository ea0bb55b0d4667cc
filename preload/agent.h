// Agent: the state shared by the hooks, the recorder and the lifecycle of
// libprof.so's memory profiler.
//
// Invariants: everything here is set up by the lifecycle before `on` is
// raised and torn down after it is lowered; the hooks read `on` (relaxed) and
// the per-thread guard and nothing else before deciding to record.
#pragma once

#include <cstring>

#include <atomic>
#include <cstdint>

#include "config.h"
#include "stream/event_ring.h"
#include "memory/stack_interner.h"

namespace prof {

struct Agent {
  Config cfg;
  EventRing ring;
  StackInterner stacks;
  std::atomic<bool> on{false};         // recording memory events
  std::atomic<bool> stream_open{false};  // the memory stream is open (below)
  std::atomic<bool> paused{false};     // prof_stop() / toggle signal
  uint64_t start_ns = 0;               // CLOCK_MONOTONIC at start
  // Counted for the stats record.
  std::atomic<uint64_t> unwind_failures{0};
  std::atomic<uint64_t> guest_stacks_cut{0};  // memory events' guest stacks cut at their limit
  std::atomic<uint64_t> guards_abandoned{0};  // guarded frames left by longjmp (thread_state.h)
  // Calls of glibc's own allocator names (__libc_malloc, ...), recorded as
  // the calls they stand for (memory/hooks.cpp).
  std::atomic<uint64_t> libc_direct_calls{0};
  // Allocations made before the agent's constructor ran (other libraries'
  // constructors: libstdc++'s emergency exception pool), which no stream
  // can hold yet: counted, as missed (memory/hooks.cpp).
  std::atomic<bool> constructed{false};
  std::atomic<uint64_t> allocs_before_start{0}, bytes_before_start{0};
  // 0 for an agent loaded with the program; attached to a running one
  // (attach/), the attaches so far. Attached, the heap is not counted
  // (memory/heap_total.h): the blocks from before would be freed uncounted.
  uint64_t attach_number = 0;
};

extern Agent g_agent;

inline bool agent_recording() {
  return g_agent.on.load(std::memory_order_relaxed) &&
         !g_agent.paused.load(std::memory_order_relaxed);
}

// The memory stream opens with the first event to record (lifecycle.cpp),
// not at start: a process that records nothing pays nothing. Recorders call
// memory_stream_ready() first: false when the stream cannot be opened, or
// another thread is opening it (that event is then counted, as
// events_while_opening()).
bool open_memory_stream();
uint64_t events_while_opening();
inline bool memory_stream_opened() { return g_agent.stream_open.load(std::memory_order_acquire); }
inline bool memory_stream_ready() { return memory_stream_opened() || open_memory_stream(); }

// Attached to a running process (attach/), the memory stream opens at each
// attach, a new one in its own file, and is finished at the detach (the
// agent then off): false, the line said, when it cannot be opened.
bool open_attached_memory_stream();
void finish_attached_memory_stream();

uint64_t monotonic_ns();

// errno's text, untranslated: strerror() takes the locale lock, which a hook
// called inside setlocale() must not touch (glibc then releases the caller's
// write lock, and the program's next setlocale() waits forever).
inline const char *errno_text(int err) {
  const char *text = strerrordesc_np(err);
  return text ? text : "unknown error";
}

// One line on stderr, "libprof: " and the parts; no stdio, no allocation.
void say(const char *a, const char *b = "", const char *c = "", const char *d = "",
         const char *e = "");
// One line on a failed write to `file` at `path` (errno `err`), where the
// stream ends if the program closed its descriptor, and what follows (`then`,
// "; ..." ).
class OwnedFile;
void say_write_failure(const char *path, const OwnedFile &file, int err, const char *then);

}  // namespace prof
