// The records that end the memprof stream: its stats and the epilogue, after
// an unclean-end record when the process ended without finishing the stream
// (exit_group past exit(), a signal, a kill), which the ring's writer, which
// outlives it, then writes (stream/event_ring.h).
//
// Invariants: both run on the writer too, so they touch no thread-local and
// no errno and allocate nothing (raw_thread.h): they read the agent's
// counters (atomics) and encode into the caller's buffer of kMaxStreamEnd.
#pragma once

#include <cstddef>
#include <cstdint>

namespace prof {

constexpr size_t kMaxStreamEnd = 1024;

// The stats and the epilogue; returns their length.
size_t put_memprof_end(uint8_t *buf);
// An unclean-end record (now; `lost_bytes` left out), the stats and the
// epilogue; returns their length.
size_t put_memprof_unclean_end(uint8_t *buf, uint64_t lost_bytes);

}  // namespace prof
