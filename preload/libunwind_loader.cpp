// libunwind, loaded into the program only when the agent first needs it,
// instead of linked: Debian ships no position-independent libunwind.a, and a
// linked libunwind.so (with its liblzma) would sit in every profiled
// program's memory. The agent's code calls libunwind as usual; the names it
// calls are defined here, hidden, and forward to the library once loaded.
//
// Invariants:
// - Loading (dlopen, through the agent's own dlopen hook, so that the
//   streams and the signal unwinder learn of the module) happens on first
//   use by the calls that never run in a signal handler: unw_getcontext,
//   unw_init_local, unw_backtrace, _U_dyn_register. The calls of the signal
//   handler's walk (unw_init_local2, unw_step, unw_get_reg,
//   unw_is_signal_frame) and unw_flush_cache never load: before the library
//   is loaded they fail (a walk that stops at once), as libunwind's own
//   errors do.
// - One thread loads; a thread that finds another loading does not wait (it
//   may hold the loader's lock the loader needs) and fails that call, as
//   does a call on an alternate signal stack.
// - x86-64 only (the names and unw_getcontext's jump below).
// - unw_set_caching_policy is remembered and applied when the library loads:
//   setting it up must not load it.
#include <atomic>
#include <csignal>
#include <dlfcn.h>
#define UNW_LOCAL_ONLY  // the names unwind/ calls
#include <libunwind.h>

#include "agent.h"
#include "thread_state.h"

namespace {

struct Libunwind {
  decltype(&unw_get_reg) get_reg;
  decltype(&unw_init_local) init_local;
  decltype(&unw_init_local2) init_local2;
  decltype(&unw_is_signal_frame) is_signal_frame;
  decltype(&unw_set_caching_policy) set_caching_policy;
  decltype(&unw_step) step;
  decltype(&_U_dyn_register) dyn_register;
  decltype(&unw_flush_cache) flush_cache;
  decltype(&unw_backtrace) backtrace;
  void *getcontext;  // entered by a jump (below)
  unw_addr_space_t *local_addr_space;
};
Libunwind g_real;
enum : int { kUnloaded, kLoading, kLoaded, kFailed };
std::atomic<int> g_state{kUnloaded};
std::atomic<int> g_wanted_policy{-1};  // set before the library was loaded

bool loaded() { return g_state.load(std::memory_order_acquire) == kLoaded; }

template <class Fn>
bool resolve(void *lib, const char *name, Fn *out) {
  *out = reinterpret_cast<Fn>(dlsym(lib, name));
  return *out != nullptr;
}

bool load() {
  int state = g_state.load(std::memory_order_acquire);
  if (state == kLoaded) return true;
  if (state != kUnloaded) return false;
  // XXX: dlopen wants tens of KiB of stack; a handler on its alternate
  // stack (SIGSTKSZ is 8 KiB) has not that: the call fails, a later one
  // off it loads.
  stack_t alternate{};
  if (sigaltstack(nullptr, &alternate) == 0 && (alternate.ss_flags & SS_ONSTACK)) return false;
  if (!g_state.compare_exchange_strong(state, kLoading)) return false;
  prof::GuardScope guard;  // what the loader allocates is the agent's
  void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  Libunwind f{};
  const bool ok =
      lib && resolve(lib, "_ULx86_64_get_reg", &f.get_reg) &&
      resolve(lib, "_ULx86_64_init_local", &f.init_local) &&
      resolve(lib, "_ULx86_64_init_local2", &f.init_local2) &&
      resolve(lib, "_ULx86_64_is_signal_frame", &f.is_signal_frame) &&
      resolve(lib, "_ULx86_64_set_caching_policy", &f.set_caching_policy) &&
      resolve(lib, "_ULx86_64_step", &f.step) && resolve(lib, "_U_dyn_register", &f.dyn_register) &&
      resolve(lib, "_Ux86_64_flush_cache", &f.flush_cache) &&
      resolve(lib, "unw_backtrace", &f.backtrace) &&
      resolve(lib, "_Ux86_64_getcontext", &f.getcontext) &&
      resolve(lib, "_ULx86_64_local_addr_space", &f.local_addr_space);
  if (!ok) {
    prof::say("cannot load libunwind.so.8 (", lib ? "a symbol is missing" : dlerror(),
              "); stacks it would walk are counted as unwind failures");
    g_state.store(kFailed, std::memory_order_release);
    return false;
  }
  g_real = f;
  const int policy = g_wanted_policy.load(std::memory_order_relaxed);
  if (policy >= 0) f.set_caching_policy(*f.local_addr_space, unw_caching_policy_t(policy));
  g_state.store(kLoaded, std::memory_order_release);
  return true;
}

}  // namespace

// The definitions the agent's calls bind to (libunwind.h's macros name them).
extern "C" {

// Only the local address space is ever used: the real one stands for it.
unw_addr_space_t unw_local_addr_space = nullptr;

int unw_set_caching_policy(unw_addr_space_t, unw_caching_policy_t policy) {
  g_wanted_policy.store(int(policy), std::memory_order_relaxed);
  return loaded() ? g_real.set_caching_policy(*g_real.local_addr_space, policy) : 0;
}

void unw_flush_cache(unw_addr_space_t, unw_word_t lo, unw_word_t hi) {
  if (loaded()) g_real.flush_cache(*g_real.local_addr_space, lo, hi);
}

int unw_init_local(unw_cursor_t *cursor, unw_context_t *context) {
  return load() ? g_real.init_local(cursor, context) : -UNW_EUNSPEC;
}

int unw_init_local2(unw_cursor_t *cursor, unw_context_t *context, int flag) {
  return loaded() ? g_real.init_local2(cursor, context, flag) : -UNW_EUNSPEC;
}

int unw_step(unw_cursor_t *cursor) { return loaded() ? g_real.step(cursor) : 0; }

int unw_get_reg(unw_cursor_t *cursor, unw_regnum_t reg, unw_word_t *value) {
  return loaded() ? g_real.get_reg(cursor, reg, value) : -UNW_EUNSPEC;
}

int unw_is_signal_frame(unw_cursor_t *cursor) {
  return loaded() ? g_real.is_signal_frame(cursor) : 0;
}

void _U_dyn_register(unw_dyn_info_t *info) {
  if (load()) g_real.dyn_register(info);
}

int unw_backtrace(void **buffer, int size) { return load() ? g_real.backtrace(buffer, size) : 0; }

// The real unw_getcontext, loaded first (null if it cannot be).
void *prof_libunwind_getcontext() { return load() ? g_real.getcontext : nullptr; }

}  // extern "C"

// unw_getcontext records its caller's registers: it is entered by a jump,
// with the caller's stack as it was (-1 when libunwind cannot be loaded).
asm(R"(
  .text
  .globl _Ux86_64_getcontext
  .hidden _Ux86_64_getcontext
  .type _Ux86_64_getcontext, @function
_Ux86_64_getcontext:
  push %rdi
  call prof_libunwind_getcontext
  pop %rdi
  test %rax, %rax
  jz 1f
  jmp *%rax
1:
  mov $-1, %eax
  ret
  .size _Ux86_64_getcontext, .-_Ux86_64_getcontext
)");
