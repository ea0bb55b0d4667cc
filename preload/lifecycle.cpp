// The agent's life: armed in a constructor (settings only), the memory
// stream opened by its first event (stack tables, the output file with its
// header and module map, the ring and its writer), module changes, a tick
// for time marks and write errors, fork children with their own stream, and
// the flush and epilogue at exit. A process that records no event writes no
// memory stream.
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "attach/attach.h"
#include "lua_attach.h"
#include "memory/alloc_sampling.h"
#include "memory/allocator_reach.h"
#include "memory/heap_total.h"
#include "memory/hooks.h"
#include "host_stack.h"
#include "inheritance.h"
#include "memprof.h"
#include "module_map.h"
#include "stream/module_record.h"
#include "stream/output_file.h"
#include "program_signals.h"
#include "proc_maps.h"
#include "stream/owned_file.h"
#include "stream/stream_compactor.h"
#include "stream/stream_compressor.h"
#include "prologue.h"
#include "memory/recorder.h"
#include "memory/stream_end.h"
#include "cpu/sampler.h"
#include "stream/stream_opening.h"
#include "static_lua_notice.h"
#include "stream_writer.h"
#include "symtab.h"
#include "thread_state.h"

extern char **environ;

namespace prof {

Agent g_agent;

void finish_stream();  // below, and at exec, _exit and quick_exit

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// One line on stderr, no stdio (the agent may be mid-way through anything).
void say(const char *a, const char *b, const char *c, const char *d, const char *e) {
  char line[1024] = "libprof: ";
  for (const char *part : {a, b, c, d, e}) strncat(line, part, sizeof line - strlen(line) - 2);
  strcat(line, "\n");
  (void)!write(2, line, strlen(line));
}

void say_write_failure(const char *path, const OwnedFile &file, int err, const char *then) {
  if (!file.lost()) {
    say("cannot write ", path, ": ", errno_text(err), then);
    return;
  }
  char end[160];
  snprintf(end, sizeof end, "); the profile ends at byte %llu%s", (unsigned long long)file.written(),
           then);
  say("the program closed the descriptor of ", path, " and it cannot be opened again (",
      errno_text(err), end);
}

namespace {

ModuleMap g_modules;
pthread_mutex_t g_modules_mutex = PTHREAD_MUTEX_INITIALIZER;
OwnedFile g_file;  // the memprof file
StreamCompressor g_compressor;  // its compression, unless PROF_COMPRESS=0
StreamCompactor g_compactor;    // its events, compact when compressed
pid_t g_stream_pid = 0;  // the process the open stream belongs to
enum : int { kStreamOpen, kStreamFinishing, kStreamFinished };
std::atomic<int> g_stream_state{kStreamOpen};
char g_path[600];

// Module records while running go through the ring.
void ring_load(const ModuleInfo &m, void *) {
  uint8_t buf[ext::ModuleLoadView::kMaxBytes];
  SpanWriter out(buf);
  put_ext(out, module_load_record(m));
  g_agent.ring.append(out.data(), out.size());
}
void ring_unload(uint64_t base, void *) {
  uint8_t buf[ext::ModuleUnload::kMaxBytes];
  SpanWriter out(buf);
  put_ext(out, ext::ModuleUnload{base});
  g_agent.ring.append(out.data(), out.size());
}

uint64_t rss_bytes() {
  const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char *p = strchr(buf, ' ');
  return p ? strtoull(p + 1, nullptr, 10) * uint64_t(sysconf(_SC_PAGESIZE)) : 0;
}

// Says once why the stream stopped before its end, and pauses recording.
void say_stopped() {
  static std::atomic<bool> said{false};
  if (said.exchange(true)) return;
  say("the event stream cannot go on (a thread left the agent half-way through a record, "
      "or the output blocks); recording stopped");
  g_agent.paused.store(true);
}

// Says that the stream ended without waiting longer for a writer that made
// no progress (stopped by a signal or a debugger, or starved), and who
// finished it.
void say_writer_unanswered() {
  char who[64];
  snprintf(who, sizeof who, "thread %d", int(g_agent.ring.writer_tid()));
  if (g_agent.ring.left_to_writer())
    say("the agent's writer ", who, " is stopped in the middle of a write; the program ends "
        "without it, and ", g_path, " is finished if the writer runs again");
  else
    say("the agent's writer ", who, " made no progress for 2 s (stopped or starved); the "
        "program finished ", g_path, " itself");
}

// Says once that this process, a copy of the profiled one made without
// fork(), records nothing: its parent's stream cannot go on here.
void leave_unforked_copy() {
  static std::atomic<bool> said{false};
  g_agent.on.store(false);
  if (said.exchange(true)) return;
  char pid[16];
  snprintf(pid, sizeof pid, "%d", int(getpid()));
  say("process ", pid, " was made by a raw clone() without fork(), which the agent cannot "
      "follow; it is not profiled");
}

// Says once that the stream's file was removed (by name, or with its
// directory) while the program runs, and where the profile is then: only
// in the deleted file, until the program ends.
bool g_said_removed = false;  // (a fork child's file is another)
void say_if_removed(bool at_end) {
  if (g_said_removed || !g_file.removed()) return;
  g_said_removed = true;
  char where[64];
  snprintf(where, sizeof where, "/proc/%d/fd/%d", int(getpid()), g_file.fd());
  if (at_end)
    say(g_path, " was removed while the program ran (its directory too?); the profile, "
        "written to the deleted file, is lost with it");
  else
    say(g_path, " was removed while the program runs (its directory too?); the profile goes "
        "on in the deleted file, which can be copied from ", where, " until the program ends");
}

// Runs about every 100 ms, on a thread that has just appended (stream/event_ring.h).
void tick() {
  GuardScope guard;
  if (g_agent.ring.in_unforked_copy()) {
    leave_unforked_copy();
    return;
  }
  if (g_agent.ring.write_failed() && g_agent.on.exchange(false)) {
    say_write_failure(g_path, g_file, g_agent.ring.write_errno(), "; profiling disabled");
    return;
  }
  // (Paused, not off: the stats and the epilogue are still written at exit.)
  if (g_agent.ring.stopped()) say_stopped();
  say_if_removed(false);
  const uint64_t now = monotonic_ns() - g_agent.start_ns;
  uint8_t buf[ext::TimeMark::kMaxBytes];
  SpanWriter out(buf);
  // (The heap's exact count goes in heap-total records, not here.)
  put_ext(out, ext::TimeMark{now, rss_bytes(), 0});
  g_agent.ring.append(out.data(), out.size());
  g_agent.ring.note_time(now);
  write_heap_total(now);
  drain_guest_symbols();
  say_if_lua_built_in(now);
}

// Creates this process's file: its descriptor, or -1 (said why).
int create_stream_file() {
  const int fd = create_output_file(g_agent.cfg.output, getpid(), "memprof", g_path, sizeof g_path);
  if (fd < 0) say("cannot create ", g_path, ": ", errno_text(errno), "; profiling disabled");
  return fd;
}

// The stream's ring file (stream/event_ring.h), beside a stream in a
// regular file: its descriptor, or -1 (said why, if it could not be made).
char g_ring_path[sizeof g_path + 8];
int create_stream_ring_file(int stream_fd) {
  g_ring_path[0] = 0;
  struct stat st {};
  if (fstat(stream_fd, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  const int fd = create_ring_file(g_path, g_ring_path, sizeof g_ring_path);
  if (fd < 0)
    say("cannot create ", g_ring_path, ": ", errno_text(errno), "; should the process be "
        "killed, its last 100 ms of events are lost");
  if (fd < 0) g_ring_path[0] = 0;
  return fd;
}

void remove_ring_file() {
  if (g_ring_path[0]) unlink(g_ring_path);
  g_ring_path[0] = 0;
}

// The stream's file from now on (its compressor and compactor, if any,
// given before: they start with it).
void adopt_stream_file(int fd) {
  g_file.adopt(fd, g_path);
  g_stream_pid = getpid();
}

// Writes everything that precedes events to the file just created.
bool write_stream_opening(pid_t ppid) {
  static uint8_t buf[1 << 16];
  StreamWriter out(buf, sizeof buf, owned_file_sink, &g_file);
  put_stream_opening(out, SectionKind::Memprof, ppid, g_agent.attach_number);
  put_ext(out, ext::Sampling{g_agent.cfg.sample_bytes});
  pthread_mutex_lock(&g_modules_mutex);
  g_modules.reset();
  g_modules.sync(
      [](const ModuleInfo &m, void *w) {
        put_ext(*static_cast<StreamWriter *>(w), module_load_record(m));
      },
      [](uint64_t, void *) {}, &out);
  pthread_mutex_unlock(&g_modules_mutex);
  // Synced: the opening reaches the file (compressed, it would wait in
  // zstd), so an unwritable file is known now.
  const long rc = out.flush() ? g_file.sync() : -out.saved_errno();
  g_file.events_follow();
  if (rc < 0) {
    say_write_failure(g_path, g_file, int(-rc), "; profiling disabled");
    g_file.close();
    return false;
  }
  return true;
}

void toggle(int) {
  g_agent.paused.store(!g_agent.paused.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

// Whether the memory stream is open (kOpened), being opened by its first
// event, or could not be (the agent is then off).
enum : int { kUnopened, kOpening, kOpened, kOpenFailed };
std::atomic<int> g_open_state{kUnopened};
std::atomic<uint64_t> g_events_while_opening{0};

bool g_ring_inherited = false;  // this process is a fork child of one that opened it

// A new memory stream's stack table and counts start afresh.
void forget_stream_counts() {
  g_agent.stacks.reset();
  g_agent.unwind_failures.store(0);
  g_agent.guest_stacks_cut.store(0);
  g_agent.guards_abandoned.store(0);
  g_agent.libc_direct_calls.store(0);
  g_said_removed = false;
  HostStack::reset_fallbacks();
  restart_guest_symbols();
}

// The memory stream of a forked child: its own file, stack table and ring,
// opened by its own first event (a child that only execs records nothing).
void restart_memory_stream_in_child() {
  const bool was_on = g_agent.on.exchange(false);
  g_file.close();  // the parent's (unless the program closed it)
  g_stream_state.store(kStreamOpen);  // even if a parent thread was finishing it
  if (!was_on || !g_agent.cfg.follow_children) return;
  g_events_while_opening.store(0);
  restart_heap_total_in_child();
  if (memory_stream_opened()) {
    // XXX: a parent thread may have held it across fork() (dlopen); ours now.
    pthread_mutex_init(&g_modules_mutex, nullptr);
    forget_stream_counts();  // the stats count the child's events only
    if (g_agent.cfg.sample_bytes) g_sampled.reset();
    g_ring_inherited = true;
    g_agent.stream_open.store(false);
  }
  g_agent.start_ns = monotonic_ns();
  g_open_state.store(kUnopened);
  g_agent.on.store(true);
}

// Stack walks read the thread's map through /proc: held open from the first
// walk's setup (a process that records nothing holds nothing), it stays
// readable should the program chroot (a daemon's jail) and start threads.
// Once per process: the descriptor lives on in fork children.
void hold_proc_dir() {
  static bool held = false;
  if (held) return;
  held = true;
  const int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (proc >= 0) read_maps_through(move_fd_high(proc));
}

// Maps the tables that events need and hands the file its compressor and
// compactor, or says which could not be mapped.
bool map_stream_tables() {
  if (!g_agent.stacks.init(&g_agent.ring) ||
      (g_agent.cfg.sample_bytes && !g_sampled.init())) {
    say("cannot map the agent's tables; profiling disabled");
    return false;
  }
  if (g_agent.cfg.compress) {
    if (!g_compressor.init()) {
      say("cannot map the stream's compressor; profiling disabled");
      return false;
    }
    g_file.compress_with(&g_compressor);
  }
  // The ring's events become compact events (a stream about ten times
  // smaller) where the stream is compressed, memprof events where not.
  if (!g_compactor.init(g_agent.cfg.compress)) {
    say("cannot map the stream's compactor; profiling disabled");
    return false;
  }
  g_file.compact_with(&g_compactor);
  return true;
}

// The agent is off for good in this process: the address space it took
// goes back to the program (about 100 MiB, most of it never touched, which
// still counts against `ulimit -v`).
void release_stream_tables() {
  g_agent.stacks.release();
  g_sampled.release();
  g_compressor.release();
  g_compactor.release();
}

bool open_memory_stream_now() {
  // The file first: where it cannot be made (the commonest failure) nothing
  // else is made.
  const int fd = create_stream_file();
  if (g_ring_inherited) {  // a fork child's: the parent's tables and ring, reset
    g_ring_path[0] = 0;  // (the parent's)
    if (fd >= 0) adopt_stream_file(fd);
    if (fd >= 0 && write_stream_opening(getppid()) &&
        g_agent.ring.restart_in_child(&g_file, create_stream_ring_file(g_file.fd())))
      return true;
    remove_ring_file();
    release_stream_tables();
    return false;
  }
  if (fd < 0) return false;
  HostStack::init(reinterpret_cast<const void *>(&open_memory_stream_now), g_agent.cfg.rule_walk);
  hold_proc_dir();
  if (!map_stream_tables()) {
    unlink(g_path);  // empty, and the line says why
    close(fd);
    release_stream_tables();
    return false;
  }
  adopt_stream_file(fd);
  if (!write_stream_opening(getppid())) {
    release_stream_tables();
    return false;
  }
  static_assert(kMaxStreamEnd <= EventRing::kMaxUncleanEnd, "the writer's buffer");
  if (!g_agent.ring.start(&g_file, create_stream_ring_file(g_file.fd()), tick,
                         put_memprof_unclean_end, put_skip_header)) {
    say("cannot map the event ring; profiling disabled");
    g_file.close();
    remove_ring_file();
    release_stream_tables();
    return false;
  }
  return true;
}

// Each stream the agent writes starts, restarts after fork and finishes
// here (finish_stream() below also runs from the exec and _exit hooks).
void after_fork_child() {
  GuardScope guard;
  t_state.tid = 0;  // the child's thread has an id of its own
  restart_memory_stream_in_child();
  restart_cpu_sampler_in_child();
}

__attribute__((constructor(101))) void agent_start() {
  const ErrnoKept errno_kept;
  g_agent.constructed.store(true, std::memory_order_relaxed);
#ifdef PROF_CPU_ONLY
  // libprof-cpu.so: no allocation hooks to resolve, CPU sampling by default.
  g_agent.cfg.cpu = CpuMode::Callgraph;
#else
  resolve_real_functions();
#endif
  GuardScope guard;
  if (getauxval(AT_SECURE)) return;  // setuid/setgid: stay inert
  // dlopen'd into a running process: prof_attach_start() starts it (attach/).
  if (!loaded_with_program()) return;
  // (Whatever the settings: the trampoline wraps handlers all the same.)
  claim_signal_table();
  pthread_atfork(nullptr, nullptr, claim_signal_table);
  if (!parse_config(environ, &g_agent.cfg)) {
    say(g_agent.cfg.error, "; profiling disabled");
    return;
  }
  if (!records_here(g_agent.cfg)) return;  // a child, under PROF_FOLLOW=0
  if (!pin_inherited_settings(&g_agent.cfg)) return;
#ifdef PROF_CPU_ONLY
  g_agent.cfg.memory = false;
#endif
  g_agent.start_ns = monotonic_ns();  // markers' clock, also without a memory stream
  pthread_atfork(nullptr, nullptr, after_fork_child);
  // quick_exit() leaves through glibc's own _exit, after the handlers
  // registered with this, last of all as registered first.
  at_quick_exit(finish_stream);
  if (g_agent.cfg.toggle_signal) {
    // An ignored signal (nohup's SIGHUP) is the program's to keep ignoring,
    // it and its children.
    struct sigaction found {};
    if (real_sigaction(g_agent.cfg.toggle_signal, nullptr, &found) == 0 &&
        !(found.sa_flags & SA_SIGINFO) && found.sa_handler == SIG_IGN) {
      char num[8];
      snprintf(num, sizeof num, "%d", g_agent.cfg.toggle_signal);
      say("PROF_TOGGLE_SIGNAL ", num, " is ignored in this program (as nohup leaves SIGHUP); "
          "profiling disabled (pick another signal)");
      return;
    }
    // XXX: with a toggle signal the user picks the window: start paused.
    struct sigaction sa {};
    sa.sa_handler = toggle;
    sa.sa_flags = SA_RESTART;
    if (real_sigaction(g_agent.cfg.toggle_signal, &sa, nullptr) != 0) {
      say("cannot catch PROF_TOGGLE_SIGNAL (", errno_text(errno), "); profiling disabled");
      return;
    }
    g_agent.paused.store(true);
  }
#ifndef PROF_CPU_ONLY
  if (g_agent.cfg.memory) say_if_allocator_hidden();
#endif
  if (g_agent.cfg.memory) g_agent.on.store(true, std::memory_order_release);  // armed
  lua_attach_start(g_agent.cfg);
  static_lua_notice_start(g_agent.cfg);
  if (g_agent.cfg.cpu != CpuMode::Off) {
    hold_proc_dir();
    start_cpu_sampler();
  }
}

// Writes the stats and the epilogue and closes the memory stream.
void write_memory_stream_end() {
  GuardScope guard;
  drain_guest_symbols();
  write_heap_total(monotonic_ns() - g_agent.start_ns);
  uint8_t end[kMaxStreamEnd];
  g_agent.ring.finish(end, put_memprof_end(end));
  if (g_agent.ring.writer_unanswered()) say_writer_unanswered();
  if (g_agent.ring.write_failed())
    say_write_failure(g_path, g_file, g_agent.ring.write_errno(), "; the profile is truncated");
  say_if_removed(true);
  // XXX: a writer thread stopped inside a write may go on with it: its
  // descriptor must not name another file then (and it voids the ring file).
  if (!g_agent.ring.left_to_writer()) {
    g_file.close();
    remove_ring_file();
  }
}

// Ends the memory stream, once.
void finish_memory_stream() {
  // XXX: a vfork child shares our memory and must leave the parent's stream be.
  if (getpid() != g_stream_pid) {
    // (A fork child the agent saw, but does not follow, is off already.)
    if (g_agent.on.load() && memory_stream_opened() && g_agent.ring.in_unforked_copy())
      leave_unforked_copy();
    return;
  }
  // One thread finishes the stream; any other waits until it is finished
  // (several threads in exit(): the stream must end before the process).
  int expected = kStreamOpen;
  if (!g_stream_state.compare_exchange_strong(expected, kStreamFinishing)) {
    while (g_stream_state.load(std::memory_order_acquire) == kStreamFinishing) sched_yield();
    return;
  }
  if (g_agent.on.exchange(false) && memory_stream_opened()) write_memory_stream_end();
  g_stream_state.store(kStreamFinished, std::memory_order_release);
}

}  // namespace

bool open_memory_stream() {
  int state = g_open_state.load(std::memory_order_acquire);
  if (state == kOpened) return true;
  if (state == kUnopened) {
    // (The first event's thread: opening probes paths, and fails aloud.)
    const ErrnoKept errno_kept;
    GuardScope guard;
    // XXX: a handler the agent never saw (raw rt_sigaction) that longjmps
    // out would leave the stream half-opened for good: from claiming the
    // opening to its outcome, once and briefly, every signal waits.
    sigset_t all, held;
    sigfillset(&all);
    real_sigmask(SIG_BLOCK, &all, &held);
    const bool mine = g_open_state.compare_exchange_strong(state, kOpening);
    bool opened = false;
    if (mine) {
      opened = open_memory_stream_now();
      if (opened) g_agent.stream_open.store(true, std::memory_order_release);
      else g_agent.on.store(false);
      g_open_state.store(opened ? kOpened : kOpenFailed, std::memory_order_release);
    }
    real_sigmask(SIG_SETMASK, &held, nullptr);
    if (mine) return opened;
  }
  // XXX: a thread that finds another opening the stream does not wait (it
  // may hold the loader's lock that opening takes): its event is counted.
  if (g_open_state.load(std::memory_order_acquire) == kOpened) return true;
  g_events_while_opening.fetch_add(1, std::memory_order_relaxed);
  return false;
}

namespace {

// Another stream after a finished one (attached again): new file, stack
// table, counts and ring; the tables stay mapped.
bool reopen_memory_stream() {
  if (g_agent.ring.left_to_writer()) {
    say("the last stream's writer is still stopped inside a write (", g_path,
        "); no memory stream while it holds it");
    return false;
  }
  g_events_while_opening.store(0);
  forget_stream_counts();
  if (g_agent.cfg.sample_bytes) {
    if (g_sampled.mapped()) g_sampled.reset();
    else if (!g_sampled.init()) return false;
  }
  const int fd = create_stream_file();
  if (fd < 0) return false;
  adopt_stream_file(fd);  // (which moves it: g_file.fd() from now on)
  if (!write_stream_opening(getppid())) return false;
  if (!g_agent.ring.restart(&g_file, create_stream_ring_file(g_file.fd()))) {
    say("cannot map the event ring; profiling disabled");
    g_file.close();
    remove_ring_file();
    return false;
  }
  g_stream_state.store(kStreamOpen);
  return true;
}

}  // namespace

bool open_attached_memory_stream() {
  GuardScope guard;
  bool opened;
  if (g_open_state.load() == kOpened) {
    opened = reopen_memory_stream();
  } else {
    g_open_state.store(kUnopened);  // (or an attach before could not open it)
    opened = open_memory_stream();
  }
  if (opened) g_agent.on.store(true, std::memory_order_release);
  return opened;
}

void finish_attached_memory_stream() { finish_memory_stream(); }

uint64_t events_while_opening() { return g_events_while_opening.load(std::memory_order_relaxed); }

// Ends both streams (exit, exec, _exit).
void finish_stream() {
  say_if_lua_built_in(monotonic_ns() - g_agent.start_ns);
  finish_cpu_stream();
  finish_memory_stream();
}

namespace {
__attribute__((destructor(101))) void agent_stop() { finish_stream(); }
}  // namespace

void on_modules_changed() {
  GuardScope guard;
  cpu_modules_changed();
  // (An unopened stream records the modules of the moment it opens.)
  if (!g_agent.on.load(std::memory_order_relaxed) || !memory_stream_opened()) return;
  forget_unwind_rules();
  pthread_mutex_lock(&g_modules_mutex);
  g_modules.sync(ring_load, ring_unload, nullptr);
  pthread_mutex_unlock(&g_modules_mutex);
}

}  // namespace prof
