#define _GNU_SOURCE
#include "safe_read.h"

#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

bool safe_read(void *dst, const void *src, size_t n) {
  struct iovec local = {dst, n};
  struct iovec remote = {(void *)src, n};
  /* XXX: getpid() every time, not a cached pid: after fork() a cached one
  ** would read the parent's memory. */
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

bool safe_read_available(void) {
  static int state; /* 0 unknown, 1 works, -1 forbidden (seccomp, ...) */
  if (state == 0) {
    const uint64_t probe = 0x5a5a5a5a5a5a5a5aull;
    uint64_t copy = 0;
    state = safe_read(&copy, &probe, sizeof copy) && copy == probe ? 1 : -1;
  }
  return state == 1;
}
