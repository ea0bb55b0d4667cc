// RawThread: a thread of this process that glibc does not know of, made by
// clone() rather than pthread_create(). glibc keeps its single-threaded fast
// paths while only such a thread runs beside the program's one: malloc and
// free without atomic fastbins or arena locks. One idle pthread alone made
// lua5.4 binary-trees 8.6% slower (0.805 s against 0.741 s, best of 7).
//
// Invariants:
// - The thread shares its creator's thread pointer (no CLONE_SETTLS), so its
//   function must touch no thread-local, no errno and nothing of glibc that
//   does: only the raw_* calls below, atomics and plain memory. It never
//   allocates.
// - It runs with every signal blocked: no handler of the program (or of the
//   agent's CPU sampler) ever runs on it, and process-directed signals go to
//   the program's threads.
// - join() waits for its exit through CLONE_CHILD_CLEARTID and a futex.
#pragma once

#include <cstddef>
#include <cstdint>

namespace prof {

class RawThread {
 public:
  // Starts fn(arg) on a new raw thread; false if clone() or mmap() fail.
  bool start(int (*fn)(void *), void *arg);
  // Waits until the thread has exited, then frees its stack.
  void join();
  // In a forked child, where the thread does not exist: frees its stack.
  void forget();

 private:
  static constexpr size_t kStackSize = 64 * 1024;
  void *stack_ = nullptr;
  // The thread's id while it runs, 0 once it has exited (set by the kernel).
  alignas(4) volatile int tid_ = 0;
};

// System calls without errno: the result, or -errno.
long raw_syscall3(long number, long a, long b, long c);
long raw_syscall4(long number, long a, long b, long c, long d);
// Writes all of [data, data + len) to fd; 0, or -errno.
long raw_write_all(int fd, const uint8_t *data, size_t len);
// CLOCK_MONOTONIC in ns, and a sleep of ns.
uint64_t raw_monotonic_ns();
void raw_nap(long ns);

}  // namespace prof
