// The GOT rewrite of an attached agent: the program's calls of the
// allocator reach the agent's hooks (memory/hooks.h) because every loaded
// object's relocation slots for them (JUMP_SLOT and GLOB_DAT) are rewritten
// to point there, as heaptrack's injector does; dlopen, dlmopen and dlclose
// are rewritten too, so that objects loaded later get theirs rewritten and
// the stream learns of module changes.
//
// Invariants:
// - A slot is rewritten only when it holds the program's definition of the
//   name (what dlsym(RTLD_DEFAULT) finds: the function the hook calls) or a
//   lazy-binding stub of its own object: a slot bound elsewhere (a library
//   with an allocator of its own, an object of another dlmopen namespace)
//   keeps its allocator. The agent and libunwind (its own unwinder) are
//   never rewritten.
// - Every slot rewritten is remembered with what it held; restore() writes
//   that back into the slots of loaded objects that still hold the hook.
//   RELRO pages are made writable only while written, and read-only again.
// - The hooks stay mapped for good (the agent is never unloaded): a thread
//   that read a slot before restore() finishes its call in the hook, which,
//   with the agent off, passes it to the real function.
// - install(), the rewrite after a dlopen, and restore() are serialized.
#pragma once

#include <cstddef>

namespace prof {
namespace got_rewrite {

// Rewrites the allocator slots of every object loaded now (mmap's family
// too when `mappings`); returns the slots rewritten.
size_t install(bool mappings);
// Writes back every slot still holding a hook; returns how many.
size_t restore();

}  // namespace got_rewrite
}  // namespace prof
