#include "walk_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool walk_check_on;
static unsigned long long checked, served, differed, told_unchanged, changed;
static char first_difference[200];
static struct prof_guest_frame last[VM_CAPTURE_MAX_FRAMES];
static int last_n;

static void report(void) {
  fprintf(stderr,
          "prof_luajit walk check: %llu checked, %llu served by the trail, %llu differ%s; "
          "%llu frames told unchanged, %llu of them changed\n",
          checked, served, differed, first_difference, told_unchanged, changed);
}

void walk_check_start(void) {
  const char *on = getenv("PROF_LUAJIT_CHECK_WALKS");
  if (walk_check_on || !on || strcmp(on, "1") != 0) return;
  walk_check_on = true;
  atexit(report);
}

static bool same_frame(const struct prof_guest_frame *a, const struct prof_guest_frame *b) {
  return a->type == b->type && a->addr == b->addr && a->line == b->line;
}

void walk_check(const struct Universe *u, int max, const struct VmCapture *c) {
  struct VmCapture fresh;
  vm_capture(u->g, u->main, false, max, &u->code, NULL, NULL, &fresh);
  checked++;
  if (c->fresh < c->n) served++;
  int at = -1; /* the first frame that differs, c->n if the counts do */
  for (int i = 0; at < 0 && i < c->n && i < fresh.n; i++)
    if (!same_frame(&c->frames[i], &fresh.frames[i]) || c->kinds[i] != fresh.kinds[i]) at = i;
  if (at < 0 && c->n != fresh.n) at = c->n < fresh.n ? c->n : fresh.n;
  if (at < 0 && c->vmstate == fresh.vmstate && c->site.source == fresh.site.source &&
      c->site.addr == fresh.site.addr && c->site.line == fresh.site.line)
    return;
  if (differed++ > 0) return;
  const struct prof_guest_frame none = {0, 0, 0};
  const struct prof_guest_frame *m = at >= 0 && at < c->n ? &c->frames[at] : &none;
  const struct prof_guest_frame *f = at >= 0 && at < fresh.n ? &fresh.frames[at] : &none;
  snprintf(first_difference, sizeof first_difference,
           " (first: frame %d of %d, fresh %d: type %u addr 0x%llx line %llu, fresh type %u "
           "addr 0x%llx line %llu)",
           at, c->n, fresh.n, m->type, (unsigned long long)m->addr, (unsigned long long)m->line,
           f->type, (unsigned long long)f->addr, (unsigned long long)f->line);
}

void walk_check_unchanged(const struct prof_guest_walk *walk, const struct VmCapture *c) {
  for (int i = 0; i < walk->same; i++) { /* root first */
    told_unchanged++;
    if (i >= c->n || i >= last_n || !same_frame(&c->frames[c->n - 1 - i], &last[last_n - 1 - i]))
      changed++;
  }
  memcpy(last, c->frames, (size_t)c->n * sizeof *last);
  last_n = c->n;
}
