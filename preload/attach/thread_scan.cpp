// The threads of an attached process: the agent's pthread_create hook does
// not reach a program that was running before it came, so the threads are
// read from /proc/self/task, at attach and then from the sampling signal's
// handler every 100 ms (attach.cpp), with raw system calls only.
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach/attach.h"
#include "cpu/sampler.h"
#include "cpu/timer.h"

namespace prof {
namespace attached_threads {
namespace {

// Per slot of the table (sample_slots::at(i)): the slot's thread is
// sampled (Armed), or gone with samples maybe still to write (Gone).
enum : uint8_t { kUnknown, kArmed, kGone };
constexpr size_t kMaxKnown = 4096;
std::atomic<uint8_t> g_mark[kMaxKnown];  // (read by every thread's handler)
uint32_t g_seen_in[kMaxKnown];  // the last scan that listed its thread
uint32_t g_scan = 0;

size_t index_of(const SampleSlot *slot) {
  for (size_t i = 0; i < sample_slots::mapped_count() && i < kMaxKnown; i++)
    if (sample_slots::at(i) == slot) return i;
  return kMaxKnown;
}

// The thread's slot index if it is armed, else kMaxKnown.
size_t armed_index(uint64_t tid) {
  for (size_t i = 0; i < sample_slots::mapped_count() && i < kMaxKnown; i++) {
    if (g_mark[i].load(std::memory_order_acquire) != kArmed) continue;
    const SampleSlot *s = sample_slots::at(i);
    if (s->tid == tid && s->state.load(std::memory_order_acquire) == SampleSlot::Live) return i;
  }
  return kMaxKnown;
}

void arm(uint64_t tid) {
  // XXX: claim() is not for signal context in general: here the one
  // scanner is the only thread that claims (no pthread_create hook runs).
  SampleSlot *slot = sample_slots::claim(tid);
  if (!slot) {
    g_cpu.arm_failures.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const size_t i = index_of(slot);
  if (i == kMaxKnown || !arm_thread(g_cpu.backend, g_cpu.sig, g_cpu.interval_ns, slot)) {
    // (A thread that ended since it was listed is no failure.)
    if (errno != ESRCH) g_cpu.arm_failures.fetch_add(1, std::memory_order_relaxed);
    sample_slots::release(slot);
    return;
  }
  g_seen_in[i] = g_scan;
  g_mark[i].store(kArmed, std::memory_order_release);
}

void see(uint64_t tid) {
  const size_t i = armed_index(tid);
  if (i == kMaxKnown) arm(tid);
  else g_seen_in[i] = g_scan;
}

uint64_t parse_tid(const char *name) {
  uint64_t tid = 0;
  for (; *name; name++) {
    if (*name < '0' || *name > '9') return 0;
    tid = tid * 10 + uint64_t(*name - '0');
  }
  return tid;
}

struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

}  // namespace

void adopt(SampleSlot *slot) {
  const size_t i = index_of(slot);
  if (i == kMaxKnown) return;
  g_seen_in[i] = g_scan;
  g_mark[i].store(kArmed, std::memory_order_release);
}

void scan() {
  const int fd = int(syscall(SYS_open, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd < 0) return;
  g_scan++;
  alignas(8) char buf[4096];
  for (;;) {
    const long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      const auto *d = reinterpret_cast<const LinuxDirent64 *>(buf + at);
      if (const uint64_t tid = parse_tid(d->d_name)) see(tid);
      at += d->d_reclen;
    }
  }
  syscall(SYS_close, fd);
  // Threads no longer listed have ended: their clock goes now, their slot
  // once its samples are written (the writer drains live slots).
  for (size_t i = 0; i < sample_slots::mapped_count() && i < kMaxKnown; i++) {
    SampleSlot *s = sample_slots::at(i);
    const uint8_t mark = g_mark[i].load(std::memory_order_relaxed);
    if (mark == kArmed && g_seen_in[i] != g_scan) {
      disarm_thread(g_cpu.backend, s);
      g_mark[i].store(kGone, std::memory_order_release);
    } else if (mark == kGone && s->head.load(std::memory_order_acquire) ==
                                         s->tail.load(std::memory_order_acquire)) {
      g_mark[i].store(kUnknown, std::memory_order_release);
      sample_slots::release(s);
    }
  }
}

SampleSlot *slot_of(uint64_t tid) {
  const size_t i = armed_index(tid);
  return i == kMaxKnown ? nullptr : sample_slots::at(i);
}

void forget() {
  for (auto &mark : g_mark) mark.store(kUnknown, std::memory_order_relaxed);
}

}  // namespace attached_threads
}  // namespace prof
