// The CPU sampler's ".sysprof" file, written with no thread of its own.
//
// XXX: a helper thread would cost the program more than the sampling: the
// moment a process has a second thread, glibc's malloc takes its arena lock
// on every call (raw_thread.h). So the bytes leave by
// whoever holds the stream's one writer flag: a signal handler whose slot
// has filled up (write() is async-signal-safe), the first handler after each
// 100 ms (every slot), a thread that exits, a dlopen/dlclose, and the end of
// the stream.
//
// Invariants:
// - One writer at a time: the flag is taken with an atomic exchange. A
//   handler only tries (and retries at its next sample); normal code waits
//   for it, which is never long (a handler holding it never blocks), and
//   cannot deadlock (a handler never waits).
// - The writer is the only consumer of every slot while it holds the flag.
// - Order in the file: guest symbols published so far, then samples, so a
//   sample follows the symbols of the functions it names; module loads
//   precede the samples written after them, and unloads follow every sample
//   taken before them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/types.h>

#include "cpu/slots.h"
#include "ext.h"
#include "span.h"

namespace prof {
namespace sysprof_stream {

// Creates the file and writes what precedes samples (not in a handler).
// False (one line said) when it cannot.
bool open(pid_t ppid);
// In the handler: writes `own` once it holds `min_bytes`, and every slot
// once 100 ms have passed since the last time (as the memory stream is
// flushed: a killed process loses no more), if no one else is writing.
void flush_from_handler(SampleSlot &own, size_t min_bytes);
// Not in a handler: writes every slot; with `modules`, syncs the module map
// first (loads before, unloads after the samples).
void flush_all(bool modules);
// Writes `own` (its thread is exiting).
void flush_slot(SampleSlot &own);
// Not in a handler: writes every slot, then the encoded record (a marker, a
// thread's name), so that it follows every sample taken before it.
void write_record(const uint8_t *record, size_t len);
// Stats, epilogue, close; says so when a write failed.
void finish(Span<ext::StatView> stats);
// True from open() until finish() (or a forked child forgets it).
bool is_open();
pid_t owner_pid();
// A forked child: the parent's file is not ours to write.
void forget_in_child();

}  // namespace sysprof_stream
}  // namespace prof
