#include "host_stack.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "module_map.h"

namespace prof {
namespace {
uint64_t g_self_lo = 0, g_self_hi = 0;
}

void HostStack::init_self_range(const void *any_agent_address) {
  ModuleMap::extent_of(any_agent_address, &g_self_lo, &g_self_hi);
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

int HostStack::capture(uint64_t *ips, int max) {
  // XXX: a few spare slots for the agent's frames, dropped below.
  constexpr int kSpare = 8;
  void *raw[1024 + kSpare];
  const int want = max + kSpare < int(sizeof raw / sizeof raw[0]) ? max + kSpare : 1024 + kSpare;
  const int n = unw_backtrace(raw, want);
  int first = 0;
  while (first < n && reinterpret_cast<uint64_t>(raw[first]) >= g_self_lo &&
         reinterpret_cast<uint64_t>(raw[first]) < g_self_hi)
    first++;
  int out = 0;
  for (int i = first; i < n && out < max; i++) ips[out++] = reinterpret_cast<uint64_t>(raw[i]);
  return out;
}

}  // namespace prof
