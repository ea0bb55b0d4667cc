#include "line_cache.h"

#include <string.h>

#include "frame_walk.h"

#define LINE_CACHE_SLOTS 512 /* direct-mapped, by PC */

struct LineEntry {
  const uint32_t *pc;
  const LJProto *pt;
  uint32_t line;
};
static struct LineEntry entries[LINE_CACHE_SLOTS];

uint32_t line_cache_line(const LJProto *pt, const uint32_t *pc) {
  struct LineEntry *e = &entries[((uintptr_t)pc >> 2) & (LINE_CACHE_SLOTS - 1)];
  if (e->pc == pc && e->pt == pt && pc) return e->line;
  const uint32_t line = frame_walk_line(pt, pc, false);
  *e = (struct LineEntry){pc, pt, line};
  return line;
}

void line_cache_forget(void) { memset(entries, 0, sizeof entries); }
