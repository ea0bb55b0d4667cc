#include "thread_state.h"

#include <cerrno>
#include <csignal>
#include <pthread.h>
#include <sys/mman.h>

#include "agent.h"

namespace prof {

__thread ThreadState t_state __attribute__((tls_model("initial-exec")));

namespace {
pthread_key_t g_scratch_key;
pthread_once_t g_scratch_once = PTHREAD_ONCE_INIT;

// Thread exit. XXX: later destructors of this thread may still allocate:
// they must find no scratch rather than the unmapped one.
void release(void *p) {
  if (t_state.scratch == p) t_state.scratch = nullptr;
  munmap(p, sizeof(ThreadScratch));
}
void make_key() { pthread_key_create(&g_scratch_key, release); }
}  // namespace

ThreadScratch *map_thread_scratch() {
  void *p = mmap(nullptr, sizeof(ThreadScratch), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  t_state.scratch = static_cast<ThreadScratch *>(p);
  pthread_once(&g_scratch_once, make_key);
  pthread_setspecific(g_scratch_key, p);
  return t_state.scratch;
}

__attribute__((noinline, cold)) bool guard_abandoned() {
  // The caller's stack pointer: a hook at the depth of the one that entered
  // the agent is above where the GuardScope began, at least a call deeper.
  const uintptr_t caller_sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0)) + 16;
  if (caller_sp <= t_state.guard) return false;
  // XXX: a handler on an alternate stack may run anywhere, the agent live below it.
  stack_t alt;
  if (sigaltstack(nullptr, &alt) == 0 && (alt.ss_flags & SS_ONSTACK)) return false;
  const ErrnoKept errno_kept;
  t_state.guard = 0;
  g_agent.guards_abandoned.fetch_add(1, std::memory_order_relaxed);
  // The lost frames may have been half-way through the thread's stack
  // caches: back to the zeroed pages they started as.
  if (t_state.scratch) madvise(t_state.scratch, sizeof(ThreadScratch), MADV_DONTNEED);
  g_agent.ring.recover_abandoned_append();
  release_deferred_signals();
  return true;
}

}  // namespace prof
