// RawThread: a thread of the program's made by clone() rather than
// pthread_create(): the ring's writer.
// - glibc does not know of it, so it keeps its single-threaded fast paths
//   while only such a thread runs beside the program's one thread: malloc
//   and free without atomic fastbins or arena locks, which one idle pthread
//   alone would cost an allocating program (the bench report has the figure).
// - It is a thread of the program (CLONE_THREAD): ps, pidof, pgrep, a
//   subreaper, /proc/*/cmdline and the program's wait() see the program as
//   they would without the agent (one thread more). It dies with the
//   program: what the program completed is kept by the ring's file instead
//   (event_ring.h).
// - Under a low task limit (RLIMIT_NPROC below kLowTaskLimit, not root),
//   nothing is made: the program's forks and threads fail no more often
//   than without the agent, and its threads write their own events.
//
// Invariants:
// - The thread shares its creator's thread pointer (no CLONE_SETTLS), so its
//   function must touch no thread-local, no errno and nothing of glibc that
//   does: only the raw_* calls below, atomics and plain memory. It never
//   allocates.
// - It runs with every signal blocked: no handler of the program (or of the
//   agent's CPU sampler) ever runs on it.
// - join() waits for its exit through CLONE_CHILD_CLEARTID and a futex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/resource.h>
#include <sys/types.h>

namespace prof {

class RawThread {
 public:
  // Starts fn(arg) on a new thread of the program's; false if none can be
  // made.
  bool start(int (*fn)(void *), void *arg);
  // From the program: the thread has not exited.
  bool alive() const { return tid_ != 0; }
  // Waits until the thread has exited, then frees its stack.
  void join();
  // Waits up to ns for the thread to exit; true (its stack freed) once it
  // has, false while it still runs (its stack then stays: it may go on).
  bool join_within(long ns);
  // The thread's id (0 once it has exited).
  pid_t tid() const { return tid_; }
  // In a forked child, where the thread is not ours: frees its stack.
  void forget();

 private:
  // Whether the user's task limit leaves room for one more task than the
  // program itself makes (else no thread is made).
  static bool tasks_to_spare();
  static constexpr rlim_t kLowTaskLimit = 4096;
  static constexpr size_t kStackSize = 64 * 1024;
  void *stack_ = nullptr;
  // Its id while it runs, 0 once it has exited (set by the kernel).
  alignas(4) volatile int tid_ = 0;
};

// System calls without errno: the result, or -errno.
long raw_syscall3(long number, long a, long b, long c);
long raw_syscall4(long number, long a, long b, long c, long d);
long raw_syscall6(long number, long a, long b, long c, long d, long e, long f);
// Maps len bytes of zeroed memory (nullptr when it cannot), and unmaps them.
// A forked child finds them zeroed again (raw_wipe_on_fork): their users
// make their structures anew in a child.
void *raw_map(size_t len);
void raw_unmap(void *p, size_t len);
// Asks for transparent huge pages over [p, p + len) (MADV_HUGEPAGE), where
// the kernel gives them on request: for tables reached all over, which
// would otherwise miss the TLB at nearly every access.
void raw_advise_huge(void *p, size_t len);
// Has a forked child find [p, p + len) zeroed (MADV_WIPEONFORK), for the
// agent's tables and buffers, which a child resets or makes anew: fork()
// then copies none of their page tables, and the parent's next writes to
// them take no copy-on-write faults (a shell under the agent forks for
// every command). Before Linux 4.14 they are copied as any memory.
void raw_wipe_on_fork(void *p, size_t len);
// Writes all of [data, data + len) to fd; 0, or -errno.
long raw_write_all(int fd, const uint8_t *data, size_t len);
// CLOCK_MONOTONIC in ns, and a sleep of ns.
uint64_t raw_monotonic_ns();
void raw_nap(long ns);
// Sleeps up to ns while *word == seen (a FUTEX_WAIT), and wakes every
// such sleeper (FUTEX_WAKE); private to tasks sharing this memory.
void raw_wait_on(const uint32_t *word, uint32_t seen, long ns);
void raw_wake(const uint32_t *word);

}  // namespace prof
