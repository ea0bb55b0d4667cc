#include "stream/raw_thread.h"

#include <cerrno>
#include <csignal>
#include <ctime>
#include <linux/capability.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace prof {

#if defined(__x86_64__)

long raw_syscall6(long number, long a, long b, long c, long d, long e, long f) {
  long ret;
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  register long r9 asm("r9") = f;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return ret;
}

long raw_syscall4(long number, long a, long b, long c, long d) {
  return raw_syscall6(number, a, b, c, d, 0, 0);
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
  if (!tasks_to_spare()) return false;
  stack_ = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                -1, 0);
  if (stack_ == MAP_FAILED) {
    stack_ = nullptr;
    return false;
  }
  raw_wipe_on_fork(stack_, kStackSize);  // a child's thread is not this one
  tid_ = 0;
  // XXX: every signal blocked in the creator for the instant of clone(), so
  // that the thread starts with all of them blocked (glibc's sigprocmask
  // would keep its own internal ones open).
  sigset_t all, old;
  sigfillset(&all);
  raw_sigmask(&all, &old);
  const int saved_errno = errno;
  clone(fn, static_cast<char *>(stack_) + kStackSize,
        CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
            CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
        arg, const_cast<int *>(&tid_), nullptr, const_cast<int *>(&tid_));
  errno = saved_errno;
  raw_sigmask(&old, nullptr);
  if (tid_ == 0) {
    munmap(stack_, kStackSize);
    stack_ = nullptr;
    return false;
  }
  return true;
}

bool RawThread::tasks_to_spare() {
  // XXX: RLIMIT_NPROC counts every task of the user (threads too) and is
  // not enforced for root or with CAP_SYS_RESOURCE or CAP_SYS_ADMIN; how
  // many the user runs is not known cheaply, so a limit below
  // kLowTaskLimit is taken as one the program may reach.
  rlimit tasks{};
  if (raw_syscall3(SYS_getrlimit, RLIMIT_NPROC, long(&tasks), 0) != 0 ||
      tasks.rlim_cur == RLIM_INFINITY || tasks.rlim_cur >= kLowTaskLimit ||
      raw_syscall3(SYS_getuid, 0, 0, 0) == 0)
    return true;
  __user_cap_header_struct head{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct caps[2] = {};
  if (raw_syscall3(SYS_capget, long(&head), long(caps), 0) != 0) return false;
  auto has = [&caps](int cap) { return (caps[cap / 32].effective >> (cap % 32)) & 1; };
  return has(CAP_SYS_RESOURCE) || has(CAP_SYS_ADMIN);
}

void RawThread::join() {
  if (!stack_) return;
  for (int tid; (tid = tid_) != 0;)
    raw_syscall4(SYS_futex, long(&tid_), FUTEX_WAIT, tid, 0);
  munmap(stack_, kStackSize);
  stack_ = nullptr;
}

bool RawThread::join_within(long ns) {
  if (!stack_) return true;
  const int tid = tid_;
  if (tid != 0) {
    const timespec t{ns / 1000000000, ns % 1000000000};
    raw_syscall4(SYS_futex, long(&tid_), FUTEX_WAIT, tid, long(&t));
  }
  if (tid_ != 0) return false;
  join();
  return true;
}

void RawThread::forget() {
  if (stack_) munmap(stack_, kStackSize);
  stack_ = nullptr;
  tid_ = 0;
}

#else  // Elsewhere no raw thread (callers fall back), so syscall() will do.

long raw_syscall6(long number, long a, long b, long c, long d, long e, long f) {
  const int saved_errno = errno;
  long r = syscall(number, a, b, c, d, e, f);
  if (r < 0) r = -errno;
  errno = saved_errno;
  return r;
}
long raw_syscall4(long number, long a, long b, long c, long d) {
  return raw_syscall6(number, a, b, c, d, 0, 0);
}
long raw_syscall3(long number, long a, long b, long c) { return raw_syscall4(number, a, b, c, 0); }
bool RawThread::start(int (*)(void *), void *) { return false; }
void RawThread::join() {}
bool RawThread::join_within(long) { return true; }
void RawThread::forget() {}

#endif

void *raw_map(size_t len) {
  const long p = raw_syscall6(SYS_mmap, 0, long(len), PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p < 0 && p > -4096) return nullptr;
  raw_wipe_on_fork(reinterpret_cast<void *>(p), len);
  return reinterpret_cast<void *>(p);
}

void raw_wipe_on_fork(void *p, size_t len) {
  raw_syscall3(SYS_madvise, long(p), long(len), MADV_WIPEONFORK);
}

void raw_advise_huge(void *p, size_t len) {
  raw_syscall3(SYS_madvise, long(p), long(len), MADV_HUGEPAGE);
}

void raw_unmap(void *p, size_t len) {
  if (p) raw_syscall3(SYS_munmap, long(p), long(len), 0);
}

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

void raw_wait_on(const uint32_t *word, uint32_t seen, long ns) {
  const timespec t{ns / 1000000000, ns % 1000000000};
  raw_syscall4(SYS_futex, long(word), FUTEX_WAIT_PRIVATE, seen, long(&t));
}

void raw_wake(const uint32_t *word) {
  raw_syscall4(SYS_futex, long(word), FUTEX_WAKE_PRIVATE, 0x7fffffff, 0);
}

}  // namespace prof
