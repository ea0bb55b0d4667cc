// The CPU sampler's clocks: what makes a thread receive the sampling signal
// every `interval` of its CPU time.
//
// Backends, best first (on kernels where CPU-time POSIX timers only fire on
// scheduler ticks, CONFIG_HZ times a second):
// - Perf: a perf_event_open software task-clock event per thread, its
//   overflow signalled to that thread (O_ASYNC, F_SETSIG, F_SETOWN_EX), only
//   while the thread runs in user mode (never into a system call, which a
//   signal could cut short with EINTR). Reaches the requested rate; a signal
//   weighs the CPU time since the previous one, kernel time included, as
//   below (a late timer folds periods into one signal).
// - Timer: timer_create(CLOCK_THREAD_CPUTIME_ID) per thread, delivered to
//   that thread (SIGEV_THREAD_ID). Fires on ticks, so one signal stands for
//   several intervals: the weight is the thread's CPU time since its
//   previous sample, in intervals (the kernel's si_overrun falls short).
// - Itimer: one process-wide setitimer(ITIMER_PROF). Fires on ticks in
//   whichever thread runs; weighted the same way.
//
// Invariants: arm/disarm run outside signal context. A thread's timer
// signals only that thread (Perf, Timer), and the handler tells a sampler
// signal from one sent by kill() with is_sampler_signal().
#pragma once

#include <csignal>
#include <cstdint>

#include "config.h"
#include "cpu/slots.h"

namespace prof {

// Values written in the stream's sampler record (format/ext.h).
enum class SamplerBackend : uint8_t { Perf = 1, Timer = 2, Itimer = 3 };

const char *backend_name(SamplerBackend b);

// Arms the clock of slot's thread (slot->tid, of this process: from any
// thread), or for Itimer the process's (once).
// False with errno set when the backend is unavailable.
bool arm_thread(SamplerBackend b, int sig, uint64_t interval_ns, SampleSlot *slot);
// Stops the clock of `slot`'s thread (from any thread; Itimer: nothing).
void disarm_thread(SamplerBackend b, SampleSlot *slot);
// Closes slot's perf event descriptor if it still is that event; false when
// the program had closed it (and may have been given its number since).
bool close_perf_event(SampleSlot *slot);
void disarm_process(SamplerBackend b);

// The backend to use: the configured one, or with Auto the first that arms
// on the calling thread. Arms it; false when none can.
bool pick_backend(CpuBackend wanted, int sig, uint64_t interval_ns, SampleSlot *slot,
                  SamplerBackend *picked);

// In the handler: true when `info` comes from backend b's clock (for Perf,
// the slot's event), not from kill() or another timer.
bool is_sampler_signal(SamplerBackend b, const siginfo_t *info, const SampleSlot *slot);

// In the handler: how many intervals this sample of slot's thread stands
// for (at least 1).
uint64_t sample_weight(SampleSlot *slot, uint64_t interval_ns);
// On slot's thread: whole intervals of its CPU time that no sample stands
// for yet, now counted.
uint64_t unweighed_intervals(SampleSlot *slot, uint64_t interval_ns);

}  // namespace prof
