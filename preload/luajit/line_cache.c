#include "line_cache.h"

#include <string.h>

#include "frame_walk.h"

struct LineEntry line_cache_entries[LINE_CACHE_SLOTS];

uint32_t line_cache_fill(struct LineEntry *e, const LJProto *pt, const uint32_t *pc,
                         const struct LjLayout *o) {
  const uint32_t line = frame_walk_line(pt, pc, false, o);
  *e = (struct LineEntry){pc, pt, line};
  return line;
}

void line_cache_forget(void) { memset(line_cache_entries, 0, sizeof line_cache_entries); }
