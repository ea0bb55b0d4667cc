#include "stream/raw_thread.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <linux/capability.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
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
  if (!tasks_to_spare()) return false;
  stack_ = mmap(nullptr, kMapSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                -1, 0);
  if (stack_ == MAP_FAILED) {
    stack_ = nullptr;
    return false;
  }
  raw_wipe_on_fork(stack_, kMapSize);  // a child's task is not this one
  fn_ = fn, arg_ = arg, keep_fd_ = keep_fd;
  program_ = pid_t(raw_syscall3(SYS_getpid, 0, 0, 0));
  program_fd_ = -1;
  tid_ = 0;
  // XXX: every signal blocked in the creator for the instant of clone(), so
  // that the task starts with all of them blocked (glibc's sigprocmask
  // would keep its own internal ones open), and so that nothing interrupts
  // the wait for the launcher.
  sigset_t all, old;
  sigfillset(&all);
  raw_sigmask(&all, &old);
  const int saved_errno = errno;
  own_group_ = keep_fd >= 0 && can_leave_program();
  if (own_group_) {
    // The launcher shares this memory but has a copy of the descriptor
    // table; exit signal 0 (the low byte), so only this wait sees it.
    const int launcher = clone(launch, static_cast<char *>(stack_) + kMapSize, CLONE_VM, this);
    // (-ECHILD: a thread of the program's that waits with __WALL reaped
    // it first; either way it has ended.)
    if (launcher > 0) raw_syscall4(SYS_wait4, launcher, 0, __WCLONE, 0);
    own_group_ = launcher > 0 && tid_ != 0;
  }
  if (!own_group_)
    clone(entry, static_cast<char *>(stack_) + kStackSize,
          CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
              CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
          this, const_cast<int *>(&tid_), nullptr, const_cast<int *>(&tid_));
  errno = saved_errno;
  raw_sigmask(&old, nullptr);
  if (tid_ == 0) {
    munmap(stack_, kMapSize);
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

bool RawThread::can_leave_program() {
  // Closing an empty range tells whether close_range exists.
  if (under_valgrind() || raw_syscall3(SYS_close_range, ~0u, ~0u, 0) != 0) return false;
  // An orphan goes to the nearest subreaper above its parent, or to the
  // namespace's init: were that the program, the task would come back to
  // it as an ordinary child.
  int subreaper = 0;
  raw_syscall3(SYS_prctl, PR_GET_CHILD_SUBREAPER, long(&subreaper), 0);
  return subreaper == 0 && raw_syscall3(SYS_getpid, 0, 0, 0) != 1;
}

int RawThread::launch(void *self) {
  // On the launcher, with a copy of the program's table: keep only the
  // task's file, and add what tells it of the program's end, so that the
  // task's own copy holds just these two.
  auto *t = static_cast<RawThread *>(self);
  if (t->keep_fd_ > 0) raw_syscall3(SYS_close_range, 0, unsigned(t->keep_fd_ - 1), 0);
  raw_syscall3(SYS_close_range, unsigned(t->keep_fd_ + 1), ~0u, 0);
  const long pidfd = raw_syscall3(SYS_pidfd_open, t->program_, 0, 0);
  if (pidfd < 0) return 1;
  t->program_fd_ = int(pidfd);
  // Exit signal 0, but the kernel makes it SIGCHLD when the launcher ends
  // and init (or a subreaper) adopts the task.
  clone(entry, static_cast<char *>(t->stack_) + kStackSize,
        CLONE_VM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID, t, const_cast<int *>(&t->tid_), nullptr,
        const_cast<int *>(&t->tid_));
  return 0;
}

int RawThread::entry(void *self) {
  auto *t = static_cast<RawThread *>(self);
  if (t->own_group_) {
    // What ps and top show for it (its command line is the program's).
    static const char kName[] = "libprof-writer";
    raw_syscall3(SYS_prctl, PR_SET_NAME, long(kName), 0);
  }
  return t->fn_(t->arg_);
}

bool RawThread::program_gone() const {
  // A pidfd reads once the process's every thread has ended.
  pollfd p{program_fd_, POLLIN, 0};
  return own_group_ && raw_syscall3(SYS_poll, long(&p), 1, 0) > 0;
}

void RawThread::join() {
  if (!stack_) return;
  for (int tid; (tid = tid_) != 0;)
    raw_syscall4(SYS_futex, long(&tid_), FUTEX_WAIT, tid, 0);
  munmap(stack_, kMapSize);
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
  if (stack_) munmap(stack_, kMapSize);
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
bool RawThread::program_gone() const { return false; }
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
