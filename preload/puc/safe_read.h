/*
** safe_read.h: copies memory that a walk of a Lua VM may find unmapped or
** freed under it (a frame caught half-way, a foreign layout), reporting
** failure instead of faulting. Shared by the PUC Lua adapters (5.1 to 5.4).
*/
#ifndef PROF_PUC_SAFE_READ_H
#define PROF_PUC_SAFE_READ_H

#include <stdbool.h>
#include <stddef.h>

/* Copies n bytes from src, or returns false if they are not readable. */
bool safe_read(void *dst, const void *src, size_t n);
/* Whether safe_read works here (process_vm_readv may be forbidden). */
bool safe_read_available(void);

#endif /* PROF_PUC_SAFE_READ_H */
