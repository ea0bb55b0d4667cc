// libunwind's validation pipe, kept the agent's own.
//
// libunwind (1.6, x86-64) checks that an address can be read before reading
// it (on every step, being built with conservative checks, and in its
// fallbacks): mincore() on the page, then it reads a byte from a pipe of its
// own and writes the byte at the address into it (EFAULT if unreadable).
// The pipe is made once, by pipe2() at libunwind's start, at the lowest free
// numbers. A program that closes every descriptor and makes a pipe of its
// own is given those numbers, and libunwind then takes the program's bytes
// and writes into its pipe; when its read fails, it closes both numbers
// (the program's, by then) and makes another.
//
// So pipe2() called by the agent (the thread's guard set: libunwind runs
// inside a hook, the sampling handler or the agent's start) puts the pipe at
// high numbers and remembers the array libunwind filled, its own static
// one. mincore() called under the guard, which libunwind does right before
// each use of the pipe, checks that both numbers still name that pipe (its
// inode) and else makes a new one, whose numbers it writes into libunwind's
// array: the old numbers are left alone, closed or the program's now.
//
// Invariants: the program's own calls pass straight through; the checks use
// raw system calls (signal handlers; errno untouched).
#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "module_map.h"
#include "next_symbol.h"
#include "stream/owned_file.h"
#include "stream/raw_thread.h"
#include "thread_state.h"

namespace {

std::atomic<int *> g_fds{nullptr};  // libunwind's array, once known
std::atomic<uint64_t> g_dev{0}, g_ino{0};  // the pipe it should hold
std::atomic<bool> g_replacing{false};
std::atomic<bool> g_array_checked{false};

bool names_pipe(int fd) {
  struct stat st {};
  return prof::raw_syscall3(SYS_fstat, fd, long(&st), 0) == 0 &&
         uint64_t(st.st_dev) == g_dev.load(std::memory_order_acquire) &&
         uint64_t(st.st_ino) == g_ino.load(std::memory_order_acquire);
}

// Moves a new pipe's ends high and makes it the one to keep.
void take_pipe(int fds[2]) {
  fds[0] = prof::move_fd_high(fds[0]);
  fds[1] = prof::move_fd_high(fds[1]);
  struct stat st {};
  prof::raw_syscall3(SYS_fstat, fds[0], long(&st), 0);
  g_dev.store(st.st_dev, std::memory_order_release);
  g_ino.store(st.st_ino, std::memory_order_release);
}

// Gives libunwind's array a pipe of the agent's again, if it lost it.
void keep_pipe() {
  int *fds = g_fds.load(std::memory_order_acquire);
  if (!fds || (names_pipe(fds[0]) && names_pipe(fds[1]))) return;
  if (g_replacing.exchange(true, std::memory_order_acquire)) return;  // another thread does
  if (!(names_pipe(fds[0]) && names_pipe(fds[1]))) {
    int fresh[2];
    if (prof::raw_syscall3(SYS_pipe2, long(fresh), O_CLOEXEC | O_NONBLOCK, 0) == 0) {
      for (int i = 0; i < 2; i++)
        if (names_pipe(fds[i])) prof::raw_syscall3(SYS_close, fds[i], 0, 0);
      take_pipe(fresh);
      fds[0] = fresh[0];
      fds[1] = fresh[1];
    }
  }
  g_replacing.store(false, std::memory_order_release);
}

std::atomic<int (*)(int *, int)> g_pipe2{nullptr};
std::atomic<int (*)(void *, size_t, unsigned char *)> g_mincore{nullptr};

}  // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT int pipe2(int fds[2], int flags) {
  const int rc = prof::next_symbol("pipe2", g_pipe2)(fds, flags);
  if (rc != 0 || !prof::t_state.guard) return rc;
  take_pipe(fds);
  // XXX: the array is remembered only if it lies in a loaded object (static
  // data): a caller's stack or heap array would be gone when written to. The
  // first such pipe is libunwind's, made while the agent starts (no handler
  // runs yet to make dl_iterate_phdr unsafe here).
  if (!g_array_checked.exchange(true)) {
    uint64_t lo, hi;
    if (prof::ModuleMap::extent_of(fds, &lo, &hi)) g_fds.store(fds, std::memory_order_release);
  }
  return 0;
}

EXPORT int mincore(void *addr, size_t len, unsigned char *vec) {
  if (prof::t_state.guard) keep_pipe();
  return prof::next_symbol("mincore", g_mincore)(addr, len, vec);
}
