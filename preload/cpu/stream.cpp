#include "cpu/stream.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include "agent.h"
#include "ext.h"
#include "guest_registry.h"
#include "module_map.h"
#include "stream/module_record.h"
#include "stream/output_file.h"
#include "stream/owned_file.h"
#include "stream/stream_compressor.h"
#include "stream/stream_opening.h"
#include "cpu/sampler.h"
#include "stream_writer.h"
#include "sysprof.h"

namespace prof {
namespace sysprof_stream {
namespace {

OwnedFile g_file;
StreamCompressor g_compressor;  // the file's, unless PROF_COMPRESS=0
pid_t g_owner = 0;
char g_path[600];
std::atomic<bool> g_writing{false};  // the one writer flag
std::atomic<bool> g_failed{false};
int g_failed_errno = 0;  // the first failure's
// XXX: cleared under the flag before the file is closed: a thread exiting
// after the end must not write to whatever file reuses the descriptor.
std::atomic<bool> g_open{false};
// The writer's state: touched only by the holder of g_writing.
// XXX: a pointer, set by open(): the agent starts before this library's
// static constructors run.
uint8_t g_buf[1 << 16];
StreamWriter *g_out = nullptr;
ModuleMap g_modules;
GuestSymbolCursor g_symbols;
uint64_t g_last_tid = 0;  // the thread of the samples written last
uint64_t g_unloads[256];  // seen by a sync, written after the samples
size_t g_unload_count = 0;
std::atomic<uint64_t> g_next_timed_flush_ns{0};  // CLOCK_MONOTONIC_COARSE

// Takes the flag; false (and not taken) when the stream has ended.
bool try_take() {
  if (g_writing.exchange(true, std::memory_order_acquire)) return false;
  if (g_open) return true;
  g_writing.store(false, std::memory_order_release);
  return false;
}
bool take() {
  while (g_writing.exchange(true, std::memory_order_acquire)) sched_yield();
  if (g_open) return true;
  g_writing.store(false, std::memory_order_release);
  return false;
}
// Writes out what the holder encoded (synced: a compressed file then
// decodes up to there) and lets go.
void release(bool sync = false) {
  const long rc = !g_out->flush() ? -g_out->saved_errno() : sync ? g_file.sync() : 0;
  if (rc < 0 && !g_failed.exchange(true)) {
    g_failed_errno = int(-rc);
    g_cpu.on.store(false);
  }
  g_writing.store(false, std::memory_order_release);
}

void write_module(const ModuleInfo &m, void *) { put_ext(*g_out, module_load_record(m)); }
void defer_unload(uint64_t base, void *) {
  if (g_unload_count < sizeof g_unloads / sizeof g_unloads[0]) g_unloads[g_unload_count++] = base;
}

// Guest symbols published since the last call, as sysprof's sample-symtab.
void write_symbols() {
  g_symbols.drain([](const GuestSymbol &g) {
    put_guest_symbol(*g_out, g, [](auto &o, const GuestSymbol &s) { put_sysprof_symbol(o, s); });
  });
}

void write_slot(SampleSlot &s) {
  if (s.head.load(std::memory_order_acquire) == s.tail.load(std::memory_order_relaxed)) return;
  if (s.tid != g_last_tid) {
    put_ext(*g_out, ext::Thread{s.tid});
    g_last_tid = s.tid;
  }
  s.drain([](const uint8_t *p, size_t n) { g_out->put_bytes(p, n); });
}

// Everything: symbols, module loads, every slot, module unloads.
void write_all(bool modules) {
  write_symbols();
  if (modules) g_modules.sync(write_module, defer_unload, nullptr);
  sample_slots::for_each([](SampleSlot &s) {
    if (s.state.load(std::memory_order_acquire) == SampleSlot::Live) write_slot(s);
  });
  for (size_t i = 0; i < g_unload_count; i++) put_ext(*g_out, ext::ModuleUnload{g_unloads[i]});
  g_unload_count = 0;
}

// True for the one caller that finds the timed flush due (and sets the next).
bool timed_flush_due() {
  constexpr uint64_t kPeriodNs = 100000000;
  timespec now;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  const uint64_t ns = uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
  uint64_t due = g_next_timed_flush_ns.load(std::memory_order_relaxed);
  return ns >= due && g_next_timed_flush_ns.compare_exchange_strong(due, ns + kPeriodNs);
}

}  // namespace

bool open(pid_t ppid) {
  if (g_agent.cfg.compress) {
    if (!g_compressor.init()) {
      say("cannot map the CPU stream's compressor; CPU profiling disabled");
      return false;
    }
    g_file.compress_with(&g_compressor);
  }
  const int fd = create_output_file(g_agent.cfg.output, getpid(), "sysprof", g_path, sizeof g_path);
  if (fd < 0) {
    const int err = errno;
    // The memory stream, made at its first event beside this file, would
    // fail the same way: one line says so for both.
    const bool memory_too = !memory_stream_opened() && g_agent.on.exchange(false);
    say("cannot create ", g_path, ": ", errno_text(err),
        memory_too ? "; profiling disabled" : "; CPU profiling disabled");
    return false;
  }
  g_file.adopt(fd, g_path);
  g_owner = getpid();
  g_failed.store(false);
  g_writing.store(false);
  g_open = true;
  static StreamWriter out(g_buf, sizeof g_buf, owned_file_sink, nullptr);
  out = StreamWriter(g_buf, sizeof g_buf, owned_file_sink, &g_file);
  g_out = &out;
  g_modules.reset();
  g_symbols.restart();
  g_last_tid = 0;
  g_unload_count = 0;
  put_stream_opening(*g_out, SectionKind::Sysprof, ppid, g_agent.attach_number);
  static const uint8_t kModes[] = {0, 0, 1, 2};  // CpuMode -> the record's mode
  put_ext(*g_out,
          ext::Sampler{uint64_t(g_cpu.backend), kModes[uint8_t(g_cpu.mode)], g_cpu.interval_ns});
  write_all(true);
  // Synced: the opening reaches the file (compressed, it would wait in
  // zstd), so an unwritable file is known now.
  const long rc = g_out->flush() ? g_file.sync() : -g_out->saved_errno();
  if (rc < 0) {
    say_write_failure(g_path, g_file, int(-rc), "; CPU profiling disabled");
    g_open = false;
    g_file.close();
    return false;
  }
  return true;
}

void flush_from_handler(SampleSlot &own, size_t min_bytes) {
  const bool timed = timed_flush_due();
  if (!timed &&
      own.head.load(std::memory_order_relaxed) - own.tail.load(std::memory_order_relaxed) < min_bytes)
    return;
  if (!try_take()) {
    if (timed) g_next_timed_flush_ns.store(0, std::memory_order_relaxed);  // the next sample's
    return;
  }
  if (timed) {
    write_all(false);
  } else {
    write_symbols();
    write_slot(own);
  }
  release(timed);
}

void flush_all(bool modules) {
  if (!take()) return;
  write_all(modules);
  release();
}

void flush_slot(SampleSlot &own) {
  if (!take()) return;
  write_symbols();
  write_slot(own);
  release();
}

void write_record(const uint8_t *record, size_t len) {
  if (!take()) return;
  write_all(false);
  g_out->put_bytes(record, len);
  release();
}

void finish(Span<ext::StatView> stats) {
  if (!take()) return;
  write_all(false);
  put_ext(*g_out, ext::StatsView{stats});
  put_sysprof_epilogue(*g_out);
  const long rc = g_out->flush() ? g_file.end() : -g_out->saved_errno();
  if (rc < 0 && !g_failed.exchange(true)) g_failed_errno = int(-rc);
  g_open = false;
  g_writing.store(false, std::memory_order_release);
  if (g_failed.load())
    say_write_failure(g_path, g_file, g_failed_errno, "; the CPU profile is truncated");
  g_file.close();
}

bool is_open() { return g_open; }
pid_t owner_pid() { return g_owner; }

void forget_in_child() {
  g_open = false;
  g_file.close();  // the parent's (unless the program closed it)
  g_writing.store(false);
}

}  // namespace sysprof_stream
}  // namespace prof
