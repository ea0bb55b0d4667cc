#include "resume_links.h"

#include <stdbool.h>

#define SIGNAL_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

struct ReportedResumes {
  struct ResumeLink link[RESUME_LINKS_MAX];
  int depth;                    /* enters not yet left */
  int pushed;                   /* of them, those with a link */
  bool own[RESUME_LINKS_MAX];   /* by depth: whether that enter pushed a link */
};
static __thread struct ReportedResumes g_reported __attribute__((tls_model("initial-exec")));

int resume_links_enter(struct ResumeLink **top, lua_State *co) {
  struct ReportedResumes *r = &g_reported;
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
  struct ReportedResumes *r = &g_reported;
  if (r->depth == 0) return;
  const int d = --r->depth;
  if (d >= RESUME_LINKS_MAX || !r->own[d]) return;
  SIGNAL_FENCE();
  *top = r->link[--r->pushed].prev;
  SIGNAL_FENCE();
}
