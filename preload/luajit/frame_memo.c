#include "frame_memo.h"

#include <string.h>

void frame_memo_forget(struct FrameMemo *m) {
  /* XXX: after 2^32 epochs an old entry's would come back: start over. */
  if (++m->epoch == 0) {
    memset(m->e, 0, sizeof m->e);
    m->epoch = 1;
  }
}
