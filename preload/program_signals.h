// ProgramSignals: the program's signal handlers, each installed behind one
// trampoline (the sigaction family is interposed, signal_hooks.cpp), so that
// none runs inside the agent. A signal that interrupts a guarded thread
// (thread_state.h) is held back, and queued to the thread again as its
// outermost GuardScope ends: what the handler allocates and frees is then
// recorded like the rest of the program's events, and a handler that
// longjmps leaves no agent frame half-done.
//
// Invariants:
// - The trampoline allocates nothing and takes no lock: a held-back
//   signal's siginfo waits in a small per-thread queue. It is queued again
//   (rt_tgsigqueueinfo) with every signal blocked, so the kernel delivers it
//   with the handler's own mask, flags and stack. A standard signal that
//   comes again while held is merged with it, as the kernel keeps one of
//   each pending (counted).
// - A fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP or SIGSYS raised by an
//   instruction) cannot wait: its handler runs at once, inside the agent if
//   that is where it struck, as does a signal the full queue cannot hold;
//   both are counted (their handlers' allocations are not recorded).
// - The program sees its own handlers: sigaction() and signal() report what
//   it installed, never the trampoline. SA_RESETHAND is done by the
//   trampoline as the handler runs, so a held-back signal keeps its handler.
// - The agent's own handlers (the CPU sampler, the toggle signal) are
//   installed with real_sigaction(), never wrapped.
#pragma once

#include <csignal>
#include <cstdint>

namespace prof {

// This process's memory is its own (at start, and in a fork child; not in
// a vfork child, which shares its parent's): only then do the hooks change
// the handlers the trampoline runs. Its signal counts start at 0.
void claim_signal_table();
// How much of the alternate signal stack the calling thread runs on is left
// below the caller (UINT64_MAX: not on one). Async-signal-safe.
uint64_t alternate_stack_room();
// Whether the calling process is that one (g_actions, and the sampler's
// view of its signal, are its own to change).
bool owns_signal_table();
// libc's sigaction, for the agent's own handlers.
int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
// libc's pthread_sigmask, for the agent's own masks (the program's keep the
// sampling signal deliverable, signal_hooks.cpp). Looked up by
// claim_signal_table(), so that signal handlers may call it.
int real_sigmask(int how, const sigset_t *set, sigset_t *old);
// sigaction() as the program calls it: a handler goes behind the trampoline.
int program_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

// For signal() and the like, which install a handler without our sigaction:
// the handler the program has for sig (what they must return instead of the
// trampoline), and afterwards the handler they installed put behind it.
sighandler_t program_handler(int sig);
bool is_trampoline(sighandler_t handler);
void adopt_handler(int sig);

// Counted for the stats record.
uint64_t signals_deferred();   // held back while the thread was in the agent
uint64_t signals_merged();     // held back when the same standard signal already was
uint64_t handlers_in_agent();  // run inside the agent: their allocations not recorded

}  // namespace prof
