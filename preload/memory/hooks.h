// The interposed allocator and mmap entry points, and the real ones behind
// them.
#pragma once

#include <cstddef>

namespace prof {

// Resolves the real functions with dlsym(RTLD_NEXT); safe to call repeatedly.
// While it runs (dlsym may allocate), allocations come from a static arena.
void resolve_real_functions();

}  // namespace prof
