// The interposed allocator and mmap entry points, and the real ones behind
// them.
#pragma once

#include <cstddef>

namespace prof {

// Resolves the real functions with dlsym(RTLD_NEXT); safe to call repeatedly.
// While it runs (dlsym may allocate), allocations come from a static arena.
void resolve_real_functions();

// Attached (dlopen'd, not in the program's scope): the real functions are
// the program's, found in its scope (dlsym(RTLD_DEFAULT)); called before
// any GOT entry leads to a hook.
void resolve_real_functions_in_program();

// A hook by the name of the function it stands for, at its own address
// (not the program's definition of that name), for the GOT rewrite of an
// attached agent (attach/got_rewrite.h); `mapping`: one of mmap's family.
struct GotHook {
  const char *name;
  void *hook;
  bool mapping;
};
const GotHook *got_hooks(size_t *count);

}  // namespace prof
