// The next definition of a function the agent interposes (dlsym(RTLD_NEXT)),
// looked up on first use and kept.
#pragma once

#include <atomic>
#include <dlfcn.h>

#include "thread_state.h"

namespace prof {

template <class Fn>
Fn next_symbol(const char *name, std::atomic<Fn> &cache) {
  Fn fn = cache.load(std::memory_order_acquire);
  if (!fn) {
    GuardScope guard;  // dlsym may allocate: the agent's, not the program's
    fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
    cache.store(fn, std::memory_order_release);
  }
  return fn;
}

}  // namespace prof
