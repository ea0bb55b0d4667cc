// The cost of the agent's probe for a Lua built into the executable
// (preload/static_lua_probe.h), which a process pays once: at its first
// fork, or once it has run 1 s. For each executable named: the Lua the
// probe finds built in, and its time, the median of 101 probes (the file
// in the page cache, as a running program's is).
//   static_lua_probe EXECUTABLE...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "static_lua_probe.h"

int main(int argc, char **argv) {
  constexpr int kProbes = 101;
  for (int i = 1; i < argc; i++) {
    char release[16] = "";
    prof::BuiltInLua found = prof::BuiltInLua::kNone;
    double us[kProbes];
    if (access(argv[i], R_OK) != 0) {
      std::printf("  %-36s (cannot be read)\n", argv[i]);
      continue;
    }
    for (int n = 0; n < kProbes; n++) {
      const auto t0 = std::chrono::steady_clock::now();
      // (As the agent does it: its file opened, a scratch mapped, both let go.)
      const int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
      if (fd < 0) return 1;
      void *scratch = mmap(nullptr, prof::kProbeScratchBytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (scratch == MAP_FAILED) return 1;
      found = prof::built_in_lua(fd, static_cast<char *>(scratch), release);
      munmap(scratch, prof::kProbeScratchBytes);
      close(fd);
      us[n] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                  .count();
    }
    std::nth_element(us, us + kProbes / 2, us + kProbes);
    static const char *const kFound[] = {"no Lua", "API hidden", "API exported"};
    std::printf("  %-36s %-11s %-13s %8.1f us\n", argv[i], release,
                kFound[static_cast<int>(found)], us[kProbes / 2]);
  }
}
