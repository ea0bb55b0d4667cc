/* A library that allocates, loaded with dlopen and unloaded. */
#include <stdlib.h>
void *plugin_alloc(void) {
  void *volatile p = malloc(9009); /* not a tail call: keep this frame */
  return p;
}
