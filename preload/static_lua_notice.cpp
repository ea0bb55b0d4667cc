#include "static_lua_notice.h"

#include <atomic>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent.h"
#include "guest_registry.h"
#include "static_lua_probe.h"
#include "thread_state.h"

namespace prof {
namespace {

// XXX: the probe reads up to 32 MiB of .rodata, which is nothing beside a
// process that runs this long, or a fork (scripts/bench.sh starts: its cost).
constexpr uint64_t kMinRunNs = 1000000000;

std::atomic<bool> g_armed{false};
std::atomic<bool> g_probed{false};  // by this process or the one it was forked from
pid_t g_armed_pid;  // a vfork child shares our memory, not our pid: it leaves the probe to us

// The executable's name, from the kernel (the program may rewrite its argv[0]).
const char *executable_name(char *buf, size_t size) {
  const ssize_t n = readlink("/proc/self/exe", buf, size - 1);
  if (n <= 0) return "the executable";
  buf[n] = 0;
  constexpr char kDeleted[] = " (deleted)";
  char *deleted = strstr(buf, kDeleted);
  if (deleted && deleted[sizeof kDeleted - 1] == 0) *deleted = 0;
  const char *slash = strrchr(buf, '/');
  return slash ? slash + 1 : buf;
}

void probe() {
  if (!g_armed.load(std::memory_order_acquire) || getpid() != g_armed_pid ||
      g_probed.exchange(true))
    return;
  const ErrnoKept errno_kept;
  GuardScope guard;  // the scratch's mmap is the agent's
  const int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  void *scratch = mmap(nullptr, kProbeScratchBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char release[16];
  const BuiltInLua found = scratch != MAP_FAILED
                               ? built_in_lua(fd, static_cast<char *>(scratch), release)
                               : BuiltInLua::kNone;
  if (scratch != MAP_FAILED) munmap(scratch, kProbeScratchBytes);
  close(fd);
  char buf[512];
  if (found == BuiltInLua::kHidden)
    say(executable_name(buf, sizeof buf), " has ", release,
        " built in without its API exported: its Lua code shows as native frames only (see "
        "docs/lua.md)");
  // (Its API exported, but not bound to by any adapter: Redis, whose Lua
  // cannot require a module, or a stock interpreter run without `-l`.)
  else if (found == BuiltInLua::kExported && !guest_registered())
    say(executable_name(buf, sizeof buf), " has ", release,
        " built in and no Lua adapter loaded: its Lua code shows as native frames only (see "
        "docs/lua.md)");
}

}  // namespace

void static_lua_notice_start(const Config &cfg) {
  if (!cfg.lua) return;
  g_armed_pid = getpid();
  g_armed.store(true, std::memory_order_release);
  // (Before the fork: children inherit that it was probed.)
  pthread_atfork(probe, nullptr, nullptr);
}

void say_if_lua_built_in(uint64_t ran_ns) {
  if (ran_ns >= kMinRunNs && !g_probed.load(std::memory_order_relaxed)) probe();
}

}  // namespace prof
