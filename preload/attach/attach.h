// Attaching to a running process (prof-run --pid): gdb dlopens the agent
// into it and calls prof_attach_start() with the settings, later
// prof_attach_stop(); the agent may be started and stopped again. Memory is
// recorded through the program's GOT, rewritten while attached
// (got_rewrite.h).
//
// Invariants:
// - Loaded with the program (LD_PRELOAD, or linked), the agent starts in its
//   constructor and refuses to attach; dlopen'd, its constructor starts
//   nothing and the target's environment is never read.
// - After prof_attach_stop() no clock, timer or thread of the agent's is
//   left, the sampling signal has the disposition the program gave it, no
//   GOT entry leads to the agent, and the streams are complete files.
#pragma once

#include <csignal>
#include <cstdint>

#include "cpu/slots.h"

// What prof_attach_start() answers (prof-run --pid says each in one line).
enum ProfAttachResult : int {
  kAttachStarted = 0,
  kAttachWithProgram = 1,   // the agent came with the program: profiled already
  kAttachAlready = 2,       // attached and recording already
  kAttachSecure = 3,        // a setuid/setgid program: the agent stays inert there
  kAttachBadSettings = 4,   // a PROF_* value is invalid (prof_attach_error() says which)
  kAttachCpuFailed = 5,     // the CPU sampler could not start (prof_attach_error())
  kAttachMemoryFailed = 6,  // the memory stream could not be opened (prof_attach_error())
};

// What prof_attach_stop() answers.
enum ProfDetachResult : int {
  kDetachStopped = 0,  // the recording stopped, its files complete
  kDetachNone = 1,     // none was attached
  kDetachBusy = 2,     // called on a thread inside the handler: let it return, call again
};

// `settings`: PROF_* assignments, one a line ("PROF_OUTPUT=/dir/prof.%p\n...").
extern "C" __attribute__((visibility("default"))) int prof_attach_start(const char *settings);
extern "C" __attribute__((visibility("default"))) int prof_attach_stop(void);
// The sampling signal's handler while attached.
extern "C" __attribute__((visibility("default"))) void prof_attach_signal_handler(
    int sig, siginfo_t *info, void *ucontext);
// Why the last prof_attach_start() failed ("" when it did not).
extern "C" __attribute__((visibility("default"))) const char *prof_attach_error(void);
// What the last prof_attach_start() made of the process's Lua, one line
// (attach/lua_states.h).
extern "C" __attribute__((visibility("default"))) const char *prof_attach_lua_status(void);

namespace prof {

// Whether the agent came with the program rather than by dlopen into a
// running one: only then is it in the global scope, where the program's
// calls reach its hooks (load_mode.cpp).
bool loaded_with_program();

// The threads of an attached process, each with its clock (thread_scan.cpp).
// One caller at a time for scan() and forget(); async-signal-safe.
namespace attached_threads {
// `slot`, claimed for a thread and armed, is that thread's.
void adopt(SampleSlot *slot);
// Arms a clock for every thread of /proc/self/task without one, disarms
// those of threads gone, and frees their slots once written out.
void scan();
// In the handler: the slot of thread `tid`, or nullptr.
SampleSlot *slot_of(uint64_t tid);
// After the sampler stopped (every slot free): no thread is known.
void forget();
}  // namespace attached_threads

}  // namespace prof
