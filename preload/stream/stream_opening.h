// What opens every stream file the agent writes (memprof and sysprof): an
// empty symtab, the section's extended prologue, the Process record (pid,
// ppid, start time, executable), the working directory (what relative
// chunk names are relative to), and, in a process the agent was attached
// to, the Attached record (attach_number: 0 when loaded with the program).
#pragma once

#include <cstdint>
#include <ctime>
#include <string_view>
#include <unistd.h>

#include "ext.h"
#include "prologue.h"
#include "symtab.h"

namespace prof {

template <class Out>
void put_stream_opening(Out &out, SectionKind section, pid_t ppid, uint64_t attach_number) {
  put_prologue(out, SectionKind::Symtab, false);
  put_symtab_final(out);
  put_prologue(out, section, true);
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  put_ext(out, ext::ProcessView{uint64_t(getpid()), uint64_t(ppid),
                                uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec),
                                std::string_view(exe, n > 0 ? size_t(n) : 0)});
  // The buffer is given, so getcwd is the bare system call: no allocation.
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd)) put_ext(out, ext::WorkingDirView{cwd});
  if (attach_number) put_ext(out, ext::Attached{attach_number});
}

}  // namespace prof
