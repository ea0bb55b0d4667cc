// The kernel's vDSO of the analyzer's own process as a file libdw can read.
// A profiled program's vDSO exists only in its memory; where the analyzer
// runs on the same kernel (the build-ids agree), its own copy names the
// program's frames in it (clock_gettime, gettimeofday).
#pragma once

#include <string>

namespace prof {

// A path to the analyzer's vDSO image (an in-memory file), or "" if the
// kernel gave it none.
const std::string &own_vdso_path();

}  // namespace prof
