// How the agent came into the process: with the program, or attached.
#include <dlfcn.h>

#include "attach/attach.h"
#include "thread_state.h"

namespace prof {

bool loaded_with_program() {
  // XXX: dlopen'd without RTLD_GLOBAL (gdb's call), the agent is not in
  // the program's scope (RTLD_DEFAULT would still see it: the lookup
  // includes the caller's own scope); preloaded or linked, it is.
  GuardScope guard;  // dlopen and dlsym may allocate: the agent's
  void *program = dlopen(nullptr, RTLD_LAZY);
  return program &&
         dlsym(program, "prof_attach_start") == reinterpret_cast<void *>(&prof_attach_start);
}

}  // namespace prof
