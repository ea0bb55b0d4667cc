#include "thread_state.h"

#include <pthread.h>
#include <sys/mman.h>

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

ThreadScratch *thread_scratch() {
  if (t_state.scratch) return t_state.scratch;
  void *p = mmap(nullptr, sizeof(ThreadScratch), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  t_state.scratch = static_cast<ThreadScratch *>(p);
  pthread_once(&g_scratch_once, make_key);
  pthread_setspecific(g_scratch_key, p);
  return t_state.scratch;
}

}  // namespace prof
