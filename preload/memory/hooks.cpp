// Hot paths. Each hook decides once what its call records (the agent's
// state, the thread's guard and sampling; malloc, free and realloc also find
// a guard that a longjmp left behind) and passes the call through when
// nothing; otherwise it calls the real function and records. Frees are
// recorded before the real free, everything else after (event_ring.h says
// why).
#include "memory/hooks.h"

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent.h"
#include "memory/alloc_sampling.h"
#include "memory/block_size.h"
#include "memory/heap_total.h"
#include "memory/recorder.h"
#include "thread_state.h"

using namespace prof;

namespace {

// The functions hooked here, the one list of them (memray's hooks.h keeps
// its own the same way): each is exported below, and the real one, of the
// type libc declares, is looked up under its name.
#define HOOKED_FUNCTIONS(X)                                                                   \
  X(malloc) X(free) X(calloc) X(realloc) X(reallocarray) X(posix_memalign) X(aligned_alloc) \
  X(memalign) X(valloc) X(pvalloc) X(mmap) X(munmap) X(mremap)

struct RealFunctions {
#define REAL_FUNCTION(name) decltype(&::name) name;
  HOOKED_FUNCTIONS(REAL_FUNCTION)
#undef REAL_FUNCTION
};
RealFunctions real;
// The heap count's measure of a block (memory/heap_total.h).
BlockSize block_size;
RealAllocator g_real_allocator;
std::atomic<int> g_resolved{0};  // 0 not yet, 1 resolving, 2 done

// Serves allocations made while dlsym resolves the real allocator.
alignas(64) char g_arena[1 << 16];
std::atomic<size_t> g_arena_used{0};

void *arena_alloc(size_t size) {
  const size_t need = ((size + 15) & ~size_t(15)) + 16;
  const size_t off = g_arena_used.fetch_add(need);
  if (off + need > sizeof g_arena) return nullptr;
  memcpy(g_arena + off, &size, sizeof size);
  return g_arena + off + 16;
}
bool in_arena(const void *p) {
  return p >= static_cast<const void *>(g_arena) && p < static_cast<const void *>(g_arena + sizeof g_arena);
}
size_t arena_size(const void *p) {
  size_t size;
  memcpy(&size, static_cast<const char *>(p) - 16, sizeof size);
  return size;
}

inline bool ready() {
  if (__builtin_expect(g_resolved.load(std::memory_order_acquire) == 2, 1)) return true;
  resolve_real_functions();
  return g_resolved.load(std::memory_order_acquire) == 2;
}

// Frees are recorded even while paused, so blocks made before the pause do
// not look leaked.
inline bool recording_frees() { return !t_state.guard && g_agent.on.load(std::memory_order_relaxed); }
inline bool paused() { return g_agent.paused.load(std::memory_order_relaxed); }
inline bool recording() { return recording_frees() && !paused(); }
inline uint64_t sample_mean() { return g_agent.cfg.sample_bytes; }

// Whether a call records a new block of `size` bytes, the free of block p,
// or for a realloc either or both: decided once per call, inline where the
// agent's state and sampling settle it, else in the hook's out-of-line half
// (alloc_sampling.h).
// An allocation before the agent's constructor ran is counted, as missed.
__attribute__((noinline)) Sampled count_before_start(size_t size) {
  g_agent.allocs_before_start.fetch_add(1, std::memory_order_relaxed);
  g_agent.bytes_before_start.fetch_add(size, std::memory_order_relaxed);
  return Sampled::kNo;
}
inline Sampled alloc_sampled(size_t size) {
  if (recording()) return sample_allocation(sample_mean(), size);
  if (__builtin_expect(!g_agent.constructed.load(std::memory_order_relaxed), 0) && !t_state.guard)
    return count_before_start(size);
  return Sampled::kNo;
}
inline Sampled free_sampled(const void *p) {
  return recording_frees() ? sample_free(sample_mean(), p) : Sampled::kNo;
}
// A realloc: its old block's free, and the block it returns (none for size
// 0: glibc frees).
struct ReallocSampled {
  Sampled old_block, new_block;
};
inline ReallocSampled realloc_sampled(const void *old, size_t size) {
  if (!recording_frees()) return ReallocSampled{Sampled::kNo, Sampled::kNo};
  const uint64_t mean = sample_mean();
  return ReallocSampled{sample_free(mean, old),
                        size && !paused() ? sample_allocation(mean, size) : Sampled::kNo};
}
// The heap count (memory/heap_total.h) takes every block of the program's
// while the agent is armed: recorded, sampled out or paused alike.
inline bool counting() {
  return !t_state.guard && g_agent.on.load(std::memory_order_relaxed) && !g_agent.attach_number;
}
inline void count_alloc(const void *p) {
  if (p && counting()) count_heap(int64_t(block_size(p)));
}
inline void count_free(void *p) {
  if (counting()) count_heap(-int64_t(block_size(p)));
}

// The calls recorded after the fact (calloc, memalign, ...) decide in one go.
inline bool records_alloc(size_t size) {
  return settle_allocation(alloc_sampled(size), sample_mean(), size);
}

// The first block counted: the allocator is tested now, not at start.
size_t measure_first_block(void *p) {
  block_size.choose(g_real_allocator);
  return block_size(p);
}

}  // namespace

void prof::resolve_real_functions() {
  int expected = 0;
  if (!g_resolved.compare_exchange_strong(expected, 1)) return;
  GuardScope guard;
#define RESOLVE(name) real.name = reinterpret_cast<decltype(real.name)>(dlsym(RTLD_NEXT, #name));
  HOOKED_FUNCTIONS(RESOLVE)
#undef RESOLVE
  // XXX: an allocator without malloc_usable_size leaves the heap uncounted
  // (records of 0).
  g_real_allocator = RealAllocator{
      real.malloc, real.calloc, real.memalign, real.free,
      reinterpret_cast<size_t (*)(void *)>(dlsym(RTLD_NEXT, "malloc_usable_size"))};
  block_size.choose_on_first_use(measure_first_block);
  g_resolved.store(2, std::memory_order_release);
}

#define EXPORT extern "C" __attribute__((visibility("default")))
// Where the program called the hook this expands in (host_stack.h).
#define HERE caller_of(__builtin_frame_address(0))

// The hot hooks (malloc, free, realloc) decide first and leave through a
// tail call: passing a call through then saves no register and builds no
// frame, so their inline decision makes no call either. What they record,
// and what sampling leaves open, is done out of line, in functions they
// also reach by a tail call where the compiler makes one, so that HERE there
// is the program's call site (else it is in the hook, whose frame the walk
// drops with the agent's own).
namespace {

inline void *malloc_counted(size_t size) {
  void *p = real.malloc(size);
  count_alloc(p);
  return p;
}

__attribute__((noinline)) void *malloc_recorded(size_t size) {
  void *p = malloc_counted(size);
  if (p) record_alloc(HERE, p, size);
  return p;
}

// Sampling left this malloc open (Sampled::kOpen): it is settled here.
__attribute__((noinline)) void *malloc_settled(size_t size) {
  if (!countdown_crossed(sample_mean(), size)) return malloc_counted(size);
  return malloc_recorded(size);
}

__attribute__((noinline)) void free_recorded(void *p) {
  record_free(HERE, p);
  real.free(p);
}

// Sampling left this free open (Sampled::kOpen): it is settled here.
__attribute__((noinline)) void free_settled(void *p) {
  if (!sampled_free(p)) return real.free(p);
  return free_recorded(p);
}

__attribute__((noinline)) void *realloc_recorded(void *old, size_t size, Sampled old_sampled,
                                                 Sampled new_sampled) {
  const uint64_t mean = sample_mean();
  const bool old_block = settle_free(old_sampled, old);
  const bool new_block = settle_allocation(new_sampled, mean, size);
  if (!old_block && !new_block) return real.realloc(old, size);
  if (size == 0) {  // glibc frees the block and returns NULL
    record_free(HERE, old);
    return real.realloc(old, 0);
  }
  void *p = real.realloc(old, size);
  if (!p) {  // the old block lives on
    if (old_block) remember_sampled(mean, old);
  } else if (old_block && new_block) {
    record_realloc(HERE, old, p, size);
  } else if (new_block) {
    record_alloc(HERE, p, size);
  } else {
    // XXX: after the fact, but there is no new block to pair it with (paused,
    // or sampling left the new block out).
    record_free(HERE, old);
  }
  return p;
}

void *malloc_in_agent(size_t size);

inline void *malloc_body(size_t size) {
  if (!ready()) return arena_alloc(size);
  if (__builtin_expect(t_state.guard, 0)) return malloc_in_agent(size);
  // XXX: sampling decides before the block exists; a failed malloc then
  // used up some of the countdown, or a sample.
  const Sampled sampled = alloc_sampled(size);
  if (sampled == Sampled::kNo) return malloc_counted(size);
  if (sampled == Sampled::kOpen) return malloc_settled(size);
  return malloc_recorded(size);
}

inline void free_body(void *p) {
  count_free(p);
  const Sampled sampled = free_sampled(p);
  if (sampled == Sampled::kNo) return real.free(p);
  if (sampled == Sampled::kOpen) return free_settled(p);
  free_recorded(p);
}

void *realloc_block(void *old, size_t size);

// The guard is set: the agent's own call, unless the guarded frames were
// left by longjmp (thread_state.h), which clears the guard. Out of line,
// reached by a tail call, so that the hot hooks stay frameless.
__attribute__((noinline)) void *malloc_in_agent(size_t size) {
  if (guard_abandoned()) return malloc_body(size);
  return real.malloc(size);
}

__attribute__((noinline)) void free_in_agent(void *p) {
  if (guard_abandoned()) return free_body(p);
  real.free(p);
}

__attribute__((noinline)) void *realloc_in_agent(void *old, size_t size) {
  if (guard_abandoned()) return realloc_block(old, size);
  return real.realloc(old, size);
}

__attribute__((noinline)) void *realloc_from_arena(void *old, size_t size) {
  void *p = malloc_body(size);
  if (p) memcpy(p, old, arena_size(old) < size ? arena_size(old) : size);
  return p;
}

inline void *realloc_decided(void *old, size_t size) {
  const ReallocSampled sampled = realloc_sampled(old, size);
  if (sampled.old_block == Sampled::kNo && sampled.new_block == Sampled::kNo)
    return real.realloc(old, size);
  return realloc_recorded(old, size, sampled.old_block, sampled.new_block);
}

// XXX: out of line, apart from realloc(NULL, n) (Lua's every allocation):
// in one function, the compiler saves registers for this path on that one.
__attribute__((noinline)) void *realloc_block(void *old, size_t size) {
  if (in_arena(old)) return realloc_from_arena(old, size);
  if (!ready()) return arena_alloc(size);
  if (__builtin_expect(t_state.guard, 0)) return realloc_in_agent(old, size);
  if (!counting()) return realloc_decided(old, size);
  const int64_t before = int64_t(block_size(old));
  void *p = realloc_decided(old, size);
  if (p)
    count_heap(int64_t(block_size(p)) - before);
  else if (size == 0)  // glibc freed it (else a failed realloc left it be)
    count_heap(-before);
  return p;
}

// The entry points, exported under their own names and under glibc's
// (below), inline in each so that HERE is the program's call site.
#define ENTRY [[gnu::always_inline]] inline

ENTRY void free_entry(void *p) {
  if (!p || in_arena(p)) return;
  if (!ready()) return;  // XXX: only arena blocks exist before resolution
  if (__builtin_expect(t_state.guard, 0)) return free_in_agent(p);
  free_body(p);
}

ENTRY void *calloc_entry(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (!ready()) return arena_alloc(total);  // the arena is zeroed static memory
  void *p = real.calloc(n, size);
  count_alloc(p);
  if (p && records_alloc(total)) record_alloc(HERE, p, total);
  return p;
}

ENTRY void *realloc_entry(void *old, size_t size) {
  if (!old) return malloc_body(size);  // Lua allocates this way
  return realloc_block(old, size);
}

// An allocation made after the fact by `real_call`, recorded as `size`.
template <class RealCall>
ENTRY void *aligned_entry(size_t size, RealCall &&real_call) {
  if (!ready()) return nullptr;
  void *p = real_call();
  count_alloc(p);
  if (p && records_alloc(size)) record_alloc(HERE, p, size);
  return p;
}

// A call of glibc's own name for its allocator (__libc_malloc, ...), which
// a program makes to pass any interposed allocator by: it is recorded all
// the same (else its blocks would read as leaks, its frees as unknown), and
// counted.
inline void note_libc_direct() { g_agent.libc_direct_calls.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

EXPORT void *malloc(size_t size) { return malloc_body(size); }
EXPORT void free(void *p) { free_entry(p); }
EXPORT void *calloc(size_t n, size_t size) { return calloc_entry(n, size); }
EXPORT void *realloc(void *old, size_t size) { return realloc_entry(old, size); }

EXPORT void *__libc_malloc(size_t size) {
  note_libc_direct();
  return malloc_body(size);
}
EXPORT void __libc_free(void *p) {
  note_libc_direct();
  free_entry(p);
}
EXPORT void *__libc_calloc(size_t n, size_t size) {
  note_libc_direct();
  return calloc_entry(n, size);
}
EXPORT void *__libc_realloc(void *old, size_t size) {
  note_libc_direct();
  return realloc_entry(old, size);
}
EXPORT void *__libc_memalign(size_t align, size_t size) {
  note_libc_direct();
  return aligned_entry(size, [=] { return real.memalign(align, size); });
}
EXPORT void *__libc_valloc(size_t size) {
  note_libc_direct();
  return aligned_entry(size, [=] { return real.valloc(size); });
}
EXPORT void *__libc_pvalloc(size_t size) {
  note_libc_direct();
  return aligned_entry(size, [=] { return real.pvalloc(size); });
}

EXPORT void *reallocarray(void *old, size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(old, total);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size) {
  if (!ready()) return ENOMEM;
  const int rc = real.posix_memalign(out, align, size);
  if (rc == 0) count_alloc(*out);
  if (rc == 0 && records_alloc(size)) record_alloc(HERE, *out, size);
  return rc;
}

EXPORT void *aligned_alloc(size_t align, size_t size) {
  return aligned_entry(size, [=] { return real.aligned_alloc(align, size); });
}

EXPORT void *memalign(size_t align, size_t size) {
  return aligned_entry(size, [=] { return real.memalign(align, size); });
}

EXPORT void *valloc(size_t size) {
  return aligned_entry(size, [=] { return real.valloc(size); });
}

EXPORT void *pvalloc(size_t size) {
  return aligned_entry(size, [=] { return real.pvalloc(size); });
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  if (!ready()) {
    errno = ENOMEM;
    return MAP_FAILED;
  }
  void *p = real.mmap(addr, len, prot, flags, fd, off);
  if (p != MAP_FAILED && (flags & MAP_ANONYMOUS) && g_agent.cfg.mmap && recording())
    record_map(HERE, p, len);
  return p;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len) {
  if (!ready()) {
    errno = EINVAL;
    return -1;
  }
  if (g_agent.on.load(std::memory_order_relaxed)) HostStack::forget_mapping(uint64_t(addr), len);
  if (g_agent.cfg.mmap && recording_frees()) record_unmap(addr, len);
  return real.munmap(addr, len);
}

EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...) {
  if (!ready()) {
    errno = ENOMEM;
    return MAP_FAILED;
  }
  void *target = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    target = va_arg(ap, void *);
    va_end(ap);
  }
  const bool track = g_agent.cfg.mmap && recording_frees();
  if (g_agent.on.load(std::memory_order_relaxed)) HostStack::forget_mapping(uint64_t(old), old_len);
  if (track) record_unmap(old, old_len);
  void *p = real.mremap(old, old_len, new_len, flags, target);
  if (track) record_map(HERE, p != MAP_FAILED ? p : old, p != MAP_FAILED ? new_len : old_len);
  return p;
}

// The entries an attached agent writes into the program's GOT
// (attach/got_rewrite.h). XXX: by hidden aliases: the agent's own reference
// to `malloc` goes through its GOT too, which, dlopen'd, binds to libc's.
#define GOT_HOOKED_FUNCTIONS(X)                                                                \
  X(malloc) X(free) X(calloc) X(realloc) X(reallocarray) X(posix_memalign) X(aligned_alloc)  \
  X(memalign) X(valloc) X(pvalloc) X(__libc_malloc) X(__libc_free) X(__libc_calloc)         \
  X(__libc_realloc) X(__libc_memalign) X(__libc_valloc) X(__libc_pvalloc)
#define GOT_HOOKED_MAPPINGS(X) X(mmap) X(mmap64) X(munmap) X(mremap)
#define HOOK_ALIAS(name) \
  extern "C" __attribute__((visibility("hidden"), alias(#name))) decltype(::name) prof_hook_##name;
GOT_HOOKED_FUNCTIONS(HOOK_ALIAS)
GOT_HOOKED_MAPPINGS(HOOK_ALIAS)
#undef HOOK_ALIAS

const prof::GotHook *prof::got_hooks(size_t *count) {
#define HOOK_ROW(name) {#name, reinterpret_cast<void *>(&prof_hook_##name), false},
#define MAPPING_ROW(name) {#name, reinterpret_cast<void *>(&prof_hook_##name), true},
  static const GotHook hooks[] = {GOT_HOOKED_FUNCTIONS(HOOK_ROW) GOT_HOOKED_MAPPINGS(MAPPING_ROW)};
#undef HOOK_ROW
#undef MAPPING_ROW
  *count = sizeof hooks / sizeof hooks[0];
  return hooks;
}

void prof::resolve_real_functions_in_program() {
  GuardScope guard;
  // XXX: dlopen'd, RTLD_NEXT would search the agent's own dependencies
  // (libc) and miss an allocator the program has ahead of libc (jemalloc
  // linked or preloaded): the program's scope has the one its GOT holds.
#define RESOLVE(name)                                                      \
  if (void *fn = dlsym(RTLD_DEFAULT, #name)) real.name = reinterpret_cast<decltype(real.name)>(fn);
  HOOKED_FUNCTIONS(RESOLVE)
#undef RESOLVE
  if (void *usable = dlsym(RTLD_DEFAULT, "malloc_usable_size"))
    g_real_allocator = RealAllocator{real.malloc, real.calloc, real.memalign, real.free,
                                     reinterpret_cast<size_t (*)(void *)>(usable)};
}
