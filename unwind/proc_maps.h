// The calling thread's view of its memory map, read from /proc/thread-self/maps with a
// buffer on the stack: no malloc, no lock, only open/read/close, so it may
// run in a signal handler (slowly: it reads the whole file in the worst case).
#pragma once

#include <cstdint>

namespace prof {

// The mapping [lo, hi) that contains addr; false when none does (or the
// file cannot be read).
bool mapping_of(uint64_t addr, uint64_t *lo, uint64_t *hi);

// Reads through proc_dir, a descriptor of /proc opened at start (O_PATH),
// while it still names that directory: after a chroot, where /proc is
// gone, the thread's map stays readable. Before, and without it: by path.
void read_maps_through(int proc_dir);

}  // namespace prof
