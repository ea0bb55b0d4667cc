// RawThread: a task that shares this process's memory but nothing else,
// made by clone() rather than pthread_create(): the ring's writer.
// - glibc does not know of it, so it keeps its single-threaded fast paths
//   while only such a task runs beside the program's one thread: malloc and
//   free without atomic fastbins or arena locks, which one idle pthread alone
//   would cost an allocating program (the bench report has the figure).
// - It is a process of its own that shares the program's memory (no
//   CLONE_THREAD), and no child of the program's: a short-lived launcher
//   task makes it and exits, so init (or the nearest subreaper above the
//   program) adopts it. The program's wait(), even with __WALL (strace,
//   debuggers, supervisors), never sees it, and no SIGCHLD comes of it.
//   It outlives the program's exit_group() and fatal signals (all but a
//   SIGKILL that reaches it too, sent to the process group or to its own
//   pid), and ends the stream once the program is gone (program_gone(),
//   through a pidfd of the program's).
// - It has a descriptor table of its own, holding only the descriptor given
//   to start() and that pidfd: the program's closes cannot touch it, and it
//   keeps none of the program's pipes or sockets open (the launcher closes
//   its copies of them before the task is made, and start() returns once
//   the launcher has ended).
// - Under a low task limit (RLIMIT_NPROC below kLowTaskLimit, not root),
//   nothing is made: the program's forks and threads fail no more often
//   than without the agent, and its threads write their own events.
// - Where such a task cannot be made (no close_range before Linux 5.9, no
//   pidfd_open, a seccomp filter, an emulator refusing the clone flags,
//   Valgrind, which would end the program, or a program that would adopt
//   it: a subreaper, or a namespace's init), it is a thread of the
//   program's, sharing its descriptors, that dies with it.
//
// Invariants:
// - The task shares its creator's thread pointer (no CLONE_SETTLS), so its
//   function must touch no thread-local, no errno and nothing of glibc that
//   does: only the raw_* calls below, atomics and plain memory. It never
//   allocates.
// - It runs with every signal blocked: no handler of the program (or of the
//   agent's CPU sampler) ever runs on it, and signals sent to the program's
//   process group (^C, ^Z) leave it be.
// - join() waits for its exit through CLONE_CHILD_CLEARTID and a futex (its
//   adopter reaps it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/resource.h>
#include <sys/types.h>

namespace prof {

class RawThread {
 public:
  // Starts fn(arg) on a new task whose descriptor table holds only
  // `keep_fd` and the pidfd, or else on a thread of the program's; false
  // if neither can be made.
  bool start(int (*fn)(void *), void *arg, int keep_fd);
  // On the task: the process that started it has ended (every thread of it:
  // exit, exit_group, a signal). Never on a thread, which ends with it.
  bool program_gone() const;
  // From the program: the task has not exited.
  bool alive() const { return tid_ != 0; }
  // Waits until the task has exited, then frees its stack.
  void join();
  // Waits up to ns for the task to exit; true (its stack freed) once it
  // has, false while it still runs (its stack then stays: it may go on).
  bool join_within(long ns);
  // The task's id (0 once it has exited), and whether it is a task of its
  // own (else a thread of the program's).
  pid_t tid() const { return tid_; }
  bool own_task() const { return own_group_; }
  // In a forked child, where the task is not ours: frees its stack.
  void forget();

 private:
  static int entry(void *self);
  // On the launcher: trims its table, then makes the task.
  static int launch(void *self);
  // Whether a task of its own would leave the program's children for good.
  static bool can_leave_program();
  // Whether the user's task limit leaves room for one more task than the
  // program itself makes (else no task and no thread is made).
  static bool tasks_to_spare();
  static constexpr rlim_t kLowTaskLimit = 4096;
  static constexpr size_t kStackSize = 64 * 1024;
  // The task's stack, then the launcher's above it.
  static constexpr size_t kMapSize = kStackSize + 16 * 1024;
  void *stack_ = nullptr;
  int (*fn_)(void *) = nullptr;
  void *arg_ = nullptr;
  int keep_fd_ = -1;
  bool own_group_ = false;  // a task of its own, not a thread of the program's
  pid_t program_ = 0;       // the process that started it
  int program_fd_ = -1;     // a pidfd of it, in the task's table
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
