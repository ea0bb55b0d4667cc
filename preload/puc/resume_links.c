#include "resume_links.h"

#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>

#define SIGNAL_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

struct ReportedResumes {
  struct ResumeLink link[RESUME_LINKS_MAX];
  int depth;                    /* enters not yet left */
  int pushed;                   /* of them, those with a link */
  bool own[RESUME_LINKS_MAX];   /* by depth: whether that enter pushed a link */
};
/* XXX: mapped for each thread that resumes from C, not a thread-local of
** its size: a dlopen'd adapter's thread-locals come out of the process's
** small static TLS reserve (its initial-exec slot, read in signal handlers,
** puts them all there), which an attached agent has mostly used already. */
static __thread struct ReportedResumes *g_reported __attribute__((tls_model("initial-exec")));
static pthread_key_t g_unmap_key;
static pthread_once_t g_unmap_key_once = PTHREAD_ONCE_INIT;

static void unmap_reported(void *r) { munmap(r, sizeof(struct ReportedResumes)); }
static void make_unmap_key(void) { pthread_key_create(&g_unmap_key, unmap_reported); }

/* This thread's reported resumes (NULL: no memory for them). */
static struct ReportedResumes *reported(void) {
  if (g_reported) return g_reported;
  void *p = mmap(NULL, sizeof(struct ReportedResumes), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  pthread_once(&g_unmap_key_once, make_unmap_key);
  pthread_setspecific(g_unmap_key, p);
  g_reported = p;
  return p;
}

int resume_links_enter(struct ResumeLink **top, lua_State *co) {
  struct ReportedResumes *r = reported();
  if (!r) return 0;
  const int d = r->depth++;
  if (d >= RESUME_LINKS_MAX) return 0;
  r->own[d] = !(*top && (*top)->co == co) && r->pushed < RESUME_LINKS_MAX;
  if (!r->own[d]) return 0;
  struct ResumeLink *link = &r->link[r->pushed++];
  link->co = co;
  link->prev = *top;
  SIGNAL_FENCE();
  *top = link;
  SIGNAL_FENCE();
  return 1;
}

void resume_links_leave(struct ResumeLink **top) {
  struct ReportedResumes *r = g_reported;
  if (!r || r->depth == 0) return;
  const int d = --r->depth;
  if (d >= RESUME_LINKS_MAX || !r->own[d]) return;
  SIGNAL_FENCE();
  *top = r->link[--r->pushed].prev;
  SIGNAL_FENCE();
}
