#include "stream/raw_thread.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

namespace {

// XXX: Valgrind ends the program on a clone() that is neither a thread nor
// a fork; its preloaded core library names it.
bool under_valgrind() {
  const char *preload = getenv("LD_PRELOAD");
  return preload && strstr(preload, "/vgpreload_");
}

}  // namespace

bool RawThread::start(int (*fn)(void *), void *arg, int keep_fd) {
  stack_ = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                -1, 0);
  if (stack_ == MAP_FAILED) {
    stack_ = nullptr;
    return false;
  }
  fn_ = fn, arg_ = arg, keep_fd_ = keep_fd;
  trimmed_ = 0;
  program_ = pid_t(raw_syscall3(SYS_getpid, 0, 0, 0));
  // XXX: every signal blocked in the creator for the instant of clone(), so
  // that the task starts with all of them blocked (glibc's sigprocmask
  // would keep its own internal ones open).
  sigset_t all, old;
  sigfillset(&all);
  raw_sigmask(&all, &old);
  const int saved_errno = errno;
  int tid = -1;
  // A task of its own: no CLONE_THREAD, CLONE_FILES, CLONE_SIGHAND (see
  // raw_thread.h), exit signal 0 (the low byte). Closing an empty range
  // tells whether close_range exists.
  own_group_ = keep_fd >= 0 && !under_valgrind() && raw_syscall3(SYS_close_range, ~0u, ~0u, 0) == 0;
  if (own_group_)
    tid = clone(entry, static_cast<char *>(stack_) + kStackSize,
                CLONE_VM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID, this, const_cast<int *>(&tid_),
                nullptr, const_cast<int *>(&tid_));
  if (tid <= 0) {
    own_group_ = false;
    tid = clone(entry, static_cast<char *>(stack_) + kStackSize,
                CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                    CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
                this, const_cast<int *>(&tid_), nullptr, const_cast<int *>(&tid_));
  }
  errno = saved_errno;
  raw_sigmask(&old, nullptr);
  if (tid <= 0) {
    munmap(stack_, kStackSize);
    stack_ = nullptr;
    return false;
  }
  pid_ = tid;
  if (own_group_) wait_until_trimmed();
  return true;
}

void RawThread::wait_until_trimmed() {
  const uint64_t deadline = raw_monotonic_ns() + kTrimWaitNs;
  while (!__atomic_load_n(&trimmed_, __ATOMIC_ACQUIRE)) {
    const uint64_t now = raw_monotonic_ns();
    if (now >= deadline) return;
    raw_wait_on(&trimmed_, 0, long(deadline - now));
  }
}

int RawThread::entry(void *self) {
  auto *t = static_cast<RawThread *>(self);
  if (!t->own_group_) return t->fn_(t->arg_);
  // Its table is a copy of the program's: keep only its own file.
  if (t->keep_fd_ > 0) raw_syscall3(SYS_close_range, 0, unsigned(t->keep_fd_ - 1), 0);
  raw_syscall3(SYS_close_range, unsigned(t->keep_fd_ + 1), ~0u, 0);
  __atomic_store_n(&t->trimmed_, 1, __ATOMIC_RELEASE);
  raw_wake(&t->trimmed_);
  // What ps and top show for it (its command line is the program's).
  static const char kName[] = "libprof-writer";
  raw_syscall3(SYS_prctl, PR_SET_NAME, long(kName), 0);
  return t->fn_(t->arg_);
}

bool RawThread::program_gone() const {
  // Once the program's every thread has ended, the task is given another
  // parent (init, or a subreaper).
  return own_group_ && raw_syscall3(SYS_getppid, 0, 0, 0) != program_;
}

void RawThread::join() {
  if (!stack_) return;
  for (int tid; (tid = tid_) != 0;)
    raw_syscall4(SYS_futex, long(&tid_), FUTEX_WAIT, tid, 0);
  if (own_group_) raw_syscall4(SYS_wait4, pid_, 0, __WCLONE, 0);
  munmap(stack_, kStackSize);
  stack_ = nullptr;
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
bool RawThread::start(int (*)(void *), void *, int) { return false; }
int RawThread::entry(void *) { return 0; }
bool RawThread::program_gone() const { return false; }
void RawThread::join() {}
void RawThread::forget() {}

#endif

void *raw_map(size_t len) {
  const long p = raw_syscall6(SYS_mmap, 0, long(len), PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p < 0 && p > -4096 ? nullptr : reinterpret_cast<void *>(p);
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
