// dlopen and dlclose, interposed so that each stream records the modules
// loaded and unloaded (for offline symbolization) and the CPU sampler's
// unwinder learns of them, and so that RTLD_DEEPBIND cannot bypass the
// allocation hooks.
#include <atomic>
#include <dlfcn.h>
#include <unistd.h>

#include "agent.h"
#include "next_symbol.h"

namespace prof {
void on_modules_changed();  // lifecycle.cpp
}

using namespace prof;

namespace {
std::atomic<void *(*)(const char *, int)> g_dlopen{nullptr};
std::atomic<int (*)(void *)> g_dlclose{nullptr};
}  // namespace

extern "C" __attribute__((visibility("default"))) void *dlopen(const char *file, int mode) {
  const auto real_dlopen = next_symbol("dlopen", g_dlopen);
  if ((mode & RTLD_DEEPBIND) && g_agent.on.load(std::memory_order_relaxed)) {
    // XXX: a library bound deep would call its own allocator, past our hooks;
    // an agent that records nothing leaves the program's flags alone.
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) {
      static const char kMsg[] = "libprof: dropping RTLD_DEEPBIND from dlopen() so that its "
                                 "allocations stay visible\n";
      (void)!write(2, kMsg, sizeof kMsg - 1);
    }
    mode &= ~RTLD_DEEPBIND;
  }
  void *h = real_dlopen(file, mode);
  if (h) on_modules_changed();
  return h;
}

extern "C" __attribute__((visibility("default"))) int dlclose(void *handle) {
  const int rc = next_symbol("dlclose", g_dlclose)(handle);
  if (rc == 0) on_modules_changed();
  return rc;
}
