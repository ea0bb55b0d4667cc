#include "stream/raw_thread.h"

#include <cerrno>
#include <csignal>
#include <ctime>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace prof {

#if defined(__x86_64__)

long raw_syscall4(long number, long a, long b, long c, long d) {
  long ret;
  register long r10 asm("r10") = d;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10)
               : "rcx", "r11", "memory");
  return ret;
}

namespace {

// Sets the calling thread's signal mask; the old one in *old.
void raw_sigmask(const sigset_t *set, sigset_t *old) {
  // (The kernel's set is the first 8 bytes of glibc's sigset_t.)
  raw_syscall4(SYS_rt_sigprocmask, SIG_SETMASK, long(set), long(old), 8);
}

}  // namespace

long raw_syscall3(long number, long a, long b, long c) { return raw_syscall4(number, a, b, c, 0); }

bool RawThread::start(int (*fn)(void *), void *arg) {
  stack_ = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                -1, 0);
  if (stack_ == MAP_FAILED) {
    stack_ = nullptr;
    return false;
  }
  // XXX: every signal blocked in the creator for the instant of clone(), so
  // that the thread starts with all of them blocked (glibc's sigprocmask
  // would keep its own internal ones open).
  sigset_t all, old;
  sigfillset(&all);
  raw_sigmask(&all, &old);
  const int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                    CLONE_SYSVSEM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
  const int saved_errno = errno;
  const int tid = clone(fn, static_cast<char *>(stack_) + kStackSize, flags, arg,
                        const_cast<int *>(&tid_), nullptr, const_cast<int *>(&tid_));
  errno = saved_errno;
  raw_sigmask(&old, nullptr);
  if (tid <= 0) {
    munmap(stack_, kStackSize);
    stack_ = nullptr;
    return false;
  }
  return true;
}

void RawThread::join() {
  if (!stack_) return;
  for (int tid; (tid = tid_) != 0;)
    raw_syscall4(SYS_futex, long(&tid_), FUTEX_WAIT, tid, 0);
  munmap(stack_, kStackSize);
  stack_ = nullptr;
}

void RawThread::forget() {
  if (stack_) munmap(stack_, kStackSize);
  stack_ = nullptr;
  tid_ = 0;
}

#else  // Elsewhere no raw thread (callers fall back), so syscall() will do.

long raw_syscall4(long number, long a, long b, long c, long d) {
  const int saved_errno = errno;
  long r = syscall(number, a, b, c, d);
  if (r < 0) r = -errno;
  errno = saved_errno;
  return r;
}
long raw_syscall3(long number, long a, long b, long c) { return raw_syscall4(number, a, b, c, 0); }
bool RawThread::start(int (*)(void *), void *) { return false; }
void RawThread::join() {}
void RawThread::forget() {}

#endif

long raw_write_all(int fd, const uint8_t *data, size_t len) {
  while (len > 0) {
    const long n = raw_syscall3(SYS_write, fd, long(data), long(len));
    if (n == -EINTR) continue;
    if (n < 0) return n;
    if (n == 0) return -EIO;
    data += n;
    len -= size_t(n);
  }
  return 0;
}

uint64_t raw_monotonic_ns() {
  timespec t{};
  raw_syscall3(SYS_clock_gettime, CLOCK_MONOTONIC, long(&t), 0);
  return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

void raw_nap(long ns) {
  const timespec t{0, ns};
  raw_syscall3(SYS_nanosleep, long(&t), 0, 0);
}

}  // namespace prof
