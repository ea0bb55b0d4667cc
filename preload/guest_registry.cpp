#include "guest_registry.h"

#include <atomic>
#include <cstring>
#include <pthread.h>
#include <string_view>
#include <sys/mman.h>

#include "symtab.h"
#include "signal_unwind.h"
#include "unwind_rule.h"

namespace prof {
namespace {

struct Registration {
  prof_guest_backtracer fn;
  void *ctx;
  prof_guest_recaller recall;  // nullptr: the backtracer alone
  prof_guest_stack_recaller stack_recall;  // preferred to recall
  void *recall_ctx;
};

// XXX: registrations are never freed (a sampler may still read the old one);
// a process registers a handful at most, later ones reuse the last slot.
constexpr int kMaxRegistrations = 64;
Registration g_registrations[kMaxRegistrations];
int g_registration_count = 0;
std::atomic<const Registration *> g_current{nullptr};

// The symbol log: a fixed directory of lazily mapped blocks.
constexpr uint64_t kBlockEntries = 4096;
constexpr uint64_t kMaxBlocks = 4096;  // 16 M symbols
GuestSymbol *g_blocks[kMaxBlocks];
std::atomic<uint64_t> g_symbol_count{0};
// XXX: a pthread mutex, not std::mutex: its lock() may throw, and the agent
// links no exception machinery (preload/CMakeLists.txt).
pthread_mutex_t g_publish_mutex = PTHREAD_MUTEX_INITIALIZER;
struct PublishLock {
  PublishLock() { pthread_mutex_lock(&g_publish_mutex); }
  ~PublishLock() { pthread_mutex_unlock(&g_publish_mutex); }
};

// Bump arena for names, in mmap'd chunks.
char *g_arena = nullptr;
size_t g_arena_left = 0;

void *map_bytes(size_t n) {
  void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

const char *copy_name(const char *name, size_t len) {
  if (len + 1 > g_arena_left) {
    const size_t chunk = len + 1 > (1u << 20) ? len + 1 : (1u << 20);
    g_arena = static_cast<char *>(map_bytes(chunk));
    g_arena_left = g_arena ? chunk : 0;
    if (!g_arena) return nullptr;
  }
  char *dst = g_arena;
  memcpy(dst, name, len);
  dst[len] = 0;
  g_arena += len + 1;
  g_arena_left -= len + 1;
  return dst;
}

// The symbol appended; the publish lock held.
void append(uint8_t type, uint64_t addr, const char *name, uint64_t line, uint64_t traceno) {
  if (!name) name = "";
  const uint64_t index = g_symbol_count.load(std::memory_order_relaxed);
  const uint64_t block = index / kBlockEntries;
  if (block >= kMaxBlocks) return;
  if (!g_blocks[block]) {
    g_blocks[block] = static_cast<GuestSymbol *>(map_bytes(kBlockEntries * sizeof(GuestSymbol)));
    if (!g_blocks[block]) return;
  }
  const size_t len = strlen(name);
  const char *copy = copy_name(name, len);
  if (!copy) return;
  g_blocks[block][index % kBlockEntries] =
      GuestSymbol{type, addr, line, traceno, std::string_view(copy, len)};
  g_symbol_count.store(index + 1, std::memory_order_release);
}

void publish(uint8_t type, uint64_t addr, const char *name, uint64_t line, uint64_t traceno = 0) {
  PublishLock lock;
  append(type, addr, name, line, traceno);
}

// From a signal handler: false, publishing nothing, when the lock is held
// (perhaps by the very thread interrupted). XXX: a normal mutex's trylock is
// one compare-and-swap, and append() calls nothing but mmap and memcpy.
bool publish_from_signal(uint8_t type, uint64_t addr, const char *name, uint64_t line) {
  if (pthread_mutex_trylock(&g_publish_mutex) != 0) return false;
  append(type, addr, name, line, 0);
  pthread_mutex_unlock(&g_publish_mutex);
  return true;
}

}  // namespace

int guest_backtrace(prof_guest_frame *frames, int max, int *vmstate) {
  const Registration *r = g_current.load(std::memory_order_acquire);
  if (!r) {
    *vmstate = -1;
    return 0;
  }
  return r->fn(r->ctx, frames, max, vmstate);
}

namespace {
// The interrupted context while a signal handler's backtrace runs.
__thread const void *t_signal_context __attribute__((tls_model("initial-exec")));
}  // namespace

int guest_backtrace_interrupted(prof_guest_frame *frames, int max, int *vmstate,
                                const void *ucontext) {
  const void *outer = t_signal_context;
  t_signal_context = ucontext;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const int n = guest_backtrace(frames, max, vmstate);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_signal_context = outer;
  return n;
}

const prof_guest_frame *guest_recall_backtrace(prof_guest_frame *room, int max, int *n,
                                               int *vmstate, int *unchanged) {
  const Registration *r = g_current.load(std::memory_order_acquire);
  *unchanged = 0;
  if (!r) {
    *vmstate = -1;
    *n = 0;
    return room;
  }
  if (r->stack_recall) return r->stack_recall(r->recall_ctx, room, max, n, vmstate, unchanged);
  *n = r->recall ? r->recall(r->recall_ctx, room, max, vmstate, unchanged)
                 : r->fn(r->ctx, room, max, vmstate);
  return room;
}

bool guest_registered() { return g_current.load(std::memory_order_acquire) != nullptr; }

uint64_t guest_symbol_count() { return g_symbol_count.load(std::memory_order_acquire); }

const GuestSymbol &guest_symbol(uint64_t index) {
  return g_blocks[index / kBlockEntries][index % kBlockEntries];
}

namespace {
// A new registration of the current backtracer with the recaller given: the
// one a walk may be reading stays as it is.
void register_recall(prof_guest_recaller recall, prof_guest_stack_recaller stack_recall,
                     void *ctx) {
  PublishLock lock;
  const Registration *now = g_current.load(std::memory_order_acquire);
  if (!now) return;
  const int slot = g_registration_count < kMaxRegistrations ? g_registration_count++
                                                            : kMaxRegistrations - 1;
  if (&g_registrations[slot] == now) return;
  g_registrations[slot] = Registration{now->fn, now->ctx, recall, stack_recall, ctx};
  g_current.store(&g_registrations[slot], std::memory_order_release);
}
}  // namespace
}  // namespace prof

extern "C" {

__attribute__((visibility("default"))) void prof_register_guest(prof_guest_backtracer fn,
                                                                 void *ctx) {
  using namespace prof;
  if (!fn) {
    g_current.store(nullptr, std::memory_order_release);
    return;
  }
  PublishLock lock;
  const int slot = g_registration_count < kMaxRegistrations ? g_registration_count++
                                                            : kMaxRegistrations - 1;
  g_registrations[slot] = Registration{fn, ctx, nullptr, nullptr, nullptr};
  g_current.store(&g_registrations[slot], std::memory_order_release);
}

__attribute__((visibility("default"))) void prof_register_guest_recall(prof_guest_recaller fn,
                                                                        void *ctx) {
  prof::register_recall(fn, nullptr, ctx);
}

__attribute__((visibility("default"))) void prof_register_guest_stack_recall(
    prof_guest_stack_recaller fn, void *ctx) {
  prof::register_recall(nullptr, fn, ctx);
}

__attribute__((visibility("default"))) const void *prof_guest_signal_context(void) {
  return prof::t_signal_context;
}
__attribute__((visibility("default"))) void prof_guest_symbol(uint64_t addr, const char *chunk,
                                                               uint64_t line) {
  prof::publish(prof::kSymLfunc, addr, chunk, line);
}

__attribute__((visibility("default"))) int prof_guest_symbol_from_signal(uint64_t addr,
                                                                          const char *chunk,
                                                                          uint64_t line) {
  return prof::publish_from_signal(prof::kSymLfunc, addr, chunk, line);
}
__attribute__((visibility("default"))) void prof_guest_cfunc_symbol(uint64_t addr,
                                                                     const char *name) {
  prof::publish(prof::kSymCfunc, addr, name, 0);
}
__attribute__((visibility("default"))) void prof_guest_trace_symbol(uint64_t traceno,
                                                                     uint64_t proto,
                                                                     uint64_t line) {
  prof::publish(prof::kSymTrace, proto, "", line, traceno);
}

__attribute__((visibility("default"))) void prof_register_guest_jit_step(prof_guest_jit_step step) {
  prof::SignalUnwind::set_jit_step(step);
}

__attribute__((visibility("default"))) int prof_guest_vm_function(uint64_t pc, const char *name) {
  uint64_t begin, end;
  if (!prof::function_extent(pc, &begin, &end)) return 0;
  prof::publish(prof::kGuestVmFunction, begin, name, end - begin);
  return 1;
}

}  // extern "C"
