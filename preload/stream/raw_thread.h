// RawThread: a task that shares this process's memory but nothing else,
// made by clone() rather than pthread_create(): the ring's writer.
// - glibc does not know of it, so it keeps its single-threaded fast paths
//   while only such a task runs beside the program's one thread: malloc and
//   free without atomic fastbins or arena locks, which one idle pthread alone
//   would cost an allocating program (the bench report has the figure).
// - It is a thread group of its own (no CLONE_THREAD; exit signal 0, so the
//   program's wait() never sees it, nor does SIGCHLD come of it): it
//   outlives the program's exit_group() and fatal signals (all but a
//   SIGKILL that reaches it too, sent to the process group or to its own
//   pid), and can end the stream once the program is gone (program_gone()).
// - It has a descriptor table of its own, where only the descriptor given
//   to start() stays open: the program's closes cannot touch it, and it
//   keeps none of the program's pipes or sockets open. Its table starts as
//   a copy of the program's, so start() returns only once the task has
//   closed the copies (or after kTrimWaitNs, should it not get a CPU):
//   until then a pipe the program closes would not read EOF, nor a clock
//   it closes stop.
// - Where such a task cannot be made (no close_range before Linux 5.9, a
//   seccomp filter, an emulator refusing the clone flags, Valgrind, which
//   would end the program), it is a thread of the program's, sharing its
//   descriptors, that dies with it, as the writer was before.
//
// Invariants:
// - The task shares its creator's thread pointer (no CLONE_SETTLS), so its
//   function must touch no thread-local, no errno and nothing of glibc that
//   does: only the raw_* calls below, atomics and plain memory. It never
//   allocates.
// - It runs with every signal blocked: no handler of the program (or of the
//   agent's CPU sampler) ever runs on it, and signals sent to the program's
//   process group (^C, ^Z) leave it be.
// - join() waits for its exit through CLONE_CHILD_CLEARTID and a futex, then
//   reaps it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/types.h>

namespace prof {

class RawThread {
 public:
  // Starts fn(arg) on a new task whose descriptor table holds only
  // `keep_fd`, or else on a thread of the program's; false if neither can
  // be made.
  bool start(int (*fn)(void *), void *arg, int keep_fd);
  // On the task: the process that started it has ended (every thread of it:
  // exit, exit_group, a signal). Never on a thread, which ends with it.
  bool program_gone() const;
  // From the program: the task has not exited.
  bool alive() const { return tid_ != 0; }
  // Waits until the task has exited, reaps it, then frees its stack.
  void join();
  // In a forked child, where the task is not ours: frees its stack.
  void forget();

 private:
  static int entry(void *self);
  // Until the task has closed its copies of the program's descriptors.
  void wait_until_trimmed();
  static constexpr size_t kStackSize = 64 * 1024;
  void *stack_ = nullptr;
  int (*fn_)(void *) = nullptr;
  void *arg_ = nullptr;
  int keep_fd_ = -1;
  bool own_group_ = false;  // a task of its own, not a thread of the program's
  pid_t program_ = 0;  // the process that started it
  pid_t pid_ = 0;      // its own, to reap it
  // Its id while it runs, 0 once it has exited (set by the kernel).
  alignas(4) volatile int tid_ = 0;
  // 1 once the task holds only keep_fd_ (a futex start() waits on).
  alignas(4) uint32_t trimmed_ = 0;
  static constexpr long kTrimWaitNs = 1000000000;
};

// System calls without errno: the result, or -errno.
long raw_syscall3(long number, long a, long b, long c);
long raw_syscall4(long number, long a, long b, long c, long d);
long raw_syscall6(long number, long a, long b, long c, long d, long e, long f);
// Maps len bytes of zeroed memory (nullptr when it cannot), and unmaps them.
void *raw_map(size_t len);
void raw_unmap(void *p, size_t len);
// Asks for transparent huge pages over [p, p + len) (MADV_HUGEPAGE), where
// the kernel gives them on request: for tables reached all over, which
// would otherwise miss the TLB at nearly every access.
void raw_advise_huge(void *p, size_t len);
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
