/*
** line_cache.h: the current lines of the frames the allocator wrapper's
** walks meet again and again (every caller of an allocation's function),
** remembered by frame PC: a PC names one instruction of one live prototype,
** whose line never changes.
**
** Invariants callers rely on: normal context on the VM's thread only (the
** allocator wrapper's direct walks; signal handlers compute lines
** themselves); line_cache_forget() must run when a prototype is freed,
** before another can be allocated at its address.
*/
#ifndef PROF_LUAJIT_LINE_CACHE_H
#define PROF_LUAJIT_LINE_CACHE_H

#include <stdint.h>

#include "lj_layout.h"

#define LINE_CACHE_SLOTS 512 /* direct-mapped, by PC */

struct LineEntry {
  const uint32_t *pc;
  const LJProto *pt;
  uint32_t line;
};
extern struct LineEntry line_cache_entries[LINE_CACHE_SLOTS];

/* frame_walk_line(pt, pc, false, o) into the cache's entry e for pc. */
uint32_t line_cache_fill(struct LineEntry *e, const LJProto *pt, const uint32_t *pc,
                         const struct LjLayout *o);

/* frame_walk_line(pt, pc, false, o), from the cache when it holds pc
** (inline: every walked frame asks). */
static inline __attribute__((always_inline)) uint32_t line_cache_line(const LJProto *pt,
                                                                      const uint32_t *pc,
                                                                      const struct LjLayout *o) {
  struct LineEntry *e = &line_cache_entries[((uintptr_t)pc >> 2) & (LINE_CACHE_SLOTS - 1)];
  if (e->pc == pc && e->pt == pt && pc) return e->line;
  return line_cache_fill(e, pt, pc, o);
}
/* Drops every entry (a prototype was freed). */
void line_cache_forget(void);

#endif /* PROF_LUAJIT_LINE_CACHE_H */
