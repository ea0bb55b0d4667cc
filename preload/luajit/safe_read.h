/*
** safe_read.h: copies memory that may be unmapped or freed under the reader
** (a signal handler walking a VM caught half-way), reporting failure
** instead of faulting.
*/
#ifndef PROF_LUAJIT_SAFE_READ_H
#define PROF_LUAJIT_SAFE_READ_H

#include <stdbool.h>
#include <stddef.h>

/* Copies n bytes from src, or returns false if they are not readable. */
bool lj_safe_read(void *dst, const void *src, size_t n);
/* Whether lj_safe_read works in this process (process_vm_readv may be
** forbidden by a seccomp filter). */
bool lj_safe_read_available(void);

#endif /* PROF_LUAJIT_SAFE_READ_H */
