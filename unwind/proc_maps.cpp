#include "proc_maps.h"

#include <atomic>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prof {
namespace {

// Parses a lowercase hex number at *p, advancing it.
uint64_t hex(const char **p, const char *end) {
  uint64_t v = 0;
  for (; *p < end; ++*p) {
    const char ch = **p;
    const int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (d < 0) break;
    v = v << 4 | uint64_t(d);
  }
  return v;
}

std::atomic<int> g_proc_dir{-1};
std::atomic<uint64_t> g_proc_dev{0}, g_proc_ino{0};

// The thread's map through g_proc_dir, if it still names /proc (the
// program may have closed it, and its number now names something else).
int open_through_proc_dir() {
  const int dir = g_proc_dir.load(std::memory_order_acquire);
  struct stat st {};
  if (dir < 0 || fstat(dir, &st) != 0 || st.st_dev != g_proc_dev.load() ||
      st.st_ino != g_proc_ino.load())
    return -1;
  return openat(dir, "thread-self/maps", O_RDONLY | O_CLOEXEC);
}

}  // namespace

void read_maps_through(int proc_dir) {
  struct stat st {};
  if (fstat(proc_dir, &st) != 0) return;
  g_proc_dev.store(st.st_dev);
  g_proc_ino.store(st.st_ino);
  g_proc_dir.store(proc_dir, std::memory_order_release);
}

bool mapping_of(uint64_t addr, uint64_t *lo, uint64_t *hi) {
  // XXX: the thread's own view: once the main thread has left with
  // pthread_exit, /proc/self/maps (the leader's) reads empty. Before Linux
  // 3.17 there is no thread-self.
  int fd = open("/proc/thread-self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) fd = open_through_proc_dir();
  if (fd < 0) fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // XXX: small, for a handler on a small alternate stack: only each line's
  // start ("lo-hi ") is read, the rest of a line longer than this skipped.
  char buf[512];
  size_t have = 0;
  bool found = false, skipping = false;  // skipping: the rest of a line already read
  ssize_t got;
  // Whether the line at [line, end) (its start at least) is addr's mapping.
  auto holds = [&](const char *line, const char *end) {
    const char *p = line;
    const uint64_t a = hex(&p, end);
    if (p >= end || *p != '-') return false;
    ++p;
    const uint64_t b = hex(&p, end);
    if (addr < a || addr >= b) return false;
    *lo = a, *hi = b;
    return true;
  };
  while (!found && (got = read(fd, buf + have, sizeof buf - have)) > 0) {
    have += size_t(got);
    const char *line = buf, *end = buf + have, *nl;
    while (!found && (nl = static_cast<const char *>(memchr(line, '\n', size_t(end - line))))) {
      found = !skipping && holds(line, nl);
      skipping = false;
      line = nl + 1;
    }
    if (line == buf && have == sizeof buf) {  // a line longer than buf: its start
      found = !skipping && holds(buf, buf + have);
      skipping = true;
      have = 0;
    } else {
      have = size_t(end - line);
      memmove(buf, line, have);
    }
  }
  close(fd);
  return found;
}

}  // namespace prof
