// Thread names (ext.h thread-name): a name the program gives a thread with
// pthread_setname_np or prctl(PR_SET_NAME), both interposed, goes into each
// stream the process writes, as a marker does (control.cpp); so does the
// name a thread sampled from its start has then (cpu/threads.cpp).
//
// XXX: pthread_setname_np on another thread gives no tid (glibc has no
// pthread_gettid_np before 2.42): the threads whose /proc comm now holds the
// name are the ones named, each written.
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <linux/prctl.h>
#include <pthread.h>
#include <stdarg.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "agent.h"
#include "cpu/sampler.h"
#include "cpu/stream.h"
#include "ext.h"
#include "next_symbol.h"
#include "stream_writer.h"
#include "thread_names.h"
#include "thread_state.h"

namespace prof {
namespace {

void write_name(pid_t tid, std::string_view name) {
  GuardScope guard;
  uint8_t buf[ext::ThreadNameView::kMaxBytes];
  SpanWriter out(buf);
  put_ext(out, ext::ThreadNameView{uint64_t(tid), name});
  if (g_agent.on.load() && memory_stream_ready()) g_agent.ring.append(out.data(), out.size());
  if (cpu_sampler_on()) sysprof_stream::write_record(out.data(), out.size());
}

bool profiling() { return g_agent.on.load() || cpu_sampler_on(); }

// A thread's name from its /proc comm file, its length (0 unread).
size_t read_comm(const char *path, char (&name)[kMaxThreadName + 2]) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, name, sizeof name - 1);
  close(fd);
  if (n > 0 && name[n - 1] == '\n') n--;
  return n > 0 ? size_t(n) : 0;
}

// Writes every thread of the process whose name is now `name`.
void write_threads_named(std::string_view name) {
  GuardScope guard;  // opendir allocates: the agent's
  DIR *dir = opendir("/proc/self/task");
  if (!dir) return;
  while (const dirent *e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[64], comm[kMaxThreadName + 2];
    snprintf(path, sizeof path, "/proc/self/task/%.24s/comm", e->d_name);
    const size_t n = read_comm(path, comm);
    if (n && std::string_view(comm, n) == name) write_name(pid_t(atoi(e->d_name)), name);
  }
  closedir(dir);
}

using SetnameFn = int (*)(pthread_t, const char *);
using PrctlFn = int (*)(int, unsigned long, unsigned long, unsigned long, unsigned long);
std::atomic<SetnameFn> g_setname{nullptr};
std::atomic<PrctlFn> g_prctl{nullptr};

}  // namespace

void write_thread_name_at_start() {
  if (!profiling()) return;
  char comm[kMaxThreadName + 2];
  const size_t n = read_comm("/proc/thread-self/comm", comm);
  if (n) write_name(gettid(), std::string_view(comm, n));
}

void write_thread_name_to_memory(pid_t tid) {
  char comm[kMaxThreadName + 2];
  const size_t n = read_comm("/proc/thread-self/comm", comm);
  if (n == 0) return;
  uint8_t buf[ext::ThreadNameView::kMaxBytes];
  SpanWriter out(buf);
  put_ext(out, ext::ThreadNameView{uint64_t(tid), std::string_view(comm, n)});
  g_agent.ring.append(out.data(), out.size());
}

}  // namespace prof

extern "C" __attribute__((visibility("default"))) int pthread_setname_np(pthread_t thread,
                                                                         const char *name) noexcept {
  const auto setname = prof::next_symbol("pthread_setname_np", prof::g_setname);
  const int rc = setname(thread, name);
  if (rc != 0 || !prof::profiling() || prof::t_state.guard) return rc;
  const std::string_view text(name, strnlen(name, prof::kMaxThreadName));
  if (pthread_equal(thread, pthread_self()))
    prof::write_name(gettid(), text);
  else
    prof::write_threads_named(text);
  return rc;
}

extern "C" __attribute__((visibility("default"))) int prctl(int option, ...) noexcept {
  va_list ap;
  va_start(ap, option);
  unsigned long a[4];
  for (unsigned long &v : a) v = va_arg(ap, unsigned long);
  va_end(ap);
  const auto real = prof::next_symbol("prctl", prof::g_prctl);
  const int rc = real(option, a[0], a[1], a[2], a[3]);
  if (rc == 0 && option == PR_SET_NAME && a[0] && prof::profiling() && !prof::t_state.guard) {
    const char *name = reinterpret_cast<const char *>(a[0]);
    prof::write_name(gettid(), std::string_view(name, strnlen(name, prof::kMaxThreadName)));
  }
  return rc;
}
