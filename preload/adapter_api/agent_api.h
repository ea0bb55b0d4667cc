/*
** agent_api.h: the agent's API (libprof.h) as the Lua adapters call it,
** through a table bound once: to the agent's exports when the agent is in
** the program's scope (LD_PRELOAD, or a host exporting them: the weak
** symbols resolve there), or by the agent itself when it loaded the adapter
** into a process it was attached to (prof-run --pid: gdb dlopen'd the agent
** without RTLD_GLOBAL, so an adapter's weak references to it resolve to
** NULL, and it calls prof_adapter_bind_agent).
**
** Invariants callers rely on: the adapters' sources include this header,
** never libprof.h alone; `prof_guest_symbol(...)` and `if
** (prof_guest_symbol)` read the table, filled before any entry of the
** adapter runs (its constructor, or prof_adapter_bind_agent before the
** agent's first call).
*/
#ifndef PROF_AGENT_API_H
#define PROF_AGENT_API_H

#ifndef PROF_WEAK_API
#define PROF_WEAK_API
#endif
#include "libprof.h"

#define PROF_AGENT_API_FUNCTIONS(X)                                                          \
  X(register_guest) X(register_guest_recall) X(register_guest_stack_recall) X(guest_symbol) \
  X(guest_symbol_from_signal) X(guest_cfunc_symbol) X(guest_alloc) X(guest_alloc_walked)   \
  X(guest_trace_symbol) X(guest_object_type) X(guest_sample) X(guest_signal_context)       \
  X(guest_vm_function) X(register_guest_jit_step)

struct ProfAgentApi {
#define PROF_AGENT_API_FIELD(name) __typeof__(prof_##name) *name;
  PROF_AGENT_API_FUNCTIONS(PROF_AGENT_API_FIELD)
#undef PROF_AGENT_API_FIELD
};
extern struct ProfAgentApi prof_agent_api __attribute__((visibility("hidden")));

/* Binds the table to the agent's functions by name (lookup("prof_guest_symbol")). */
__attribute__((visibility("default"))) void prof_adapter_bind_agent(void *(*lookup)(const char *));

#ifndef PROF_AGENT_API_BINDING
#define prof_register_guest (prof_agent_api.register_guest)
#define prof_register_guest_recall (prof_agent_api.register_guest_recall)
#define prof_register_guest_stack_recall (prof_agent_api.register_guest_stack_recall)
#define prof_guest_symbol (prof_agent_api.guest_symbol)
#define prof_guest_symbol_from_signal (prof_agent_api.guest_symbol_from_signal)
#define prof_guest_cfunc_symbol (prof_agent_api.guest_cfunc_symbol)
#define prof_guest_alloc (prof_agent_api.guest_alloc)
#define prof_guest_alloc_walked (prof_agent_api.guest_alloc_walked)
#define prof_guest_trace_symbol (prof_agent_api.guest_trace_symbol)
#define prof_guest_object_type (prof_agent_api.guest_object_type)
#define prof_guest_sample (prof_agent_api.guest_sample)
#define prof_guest_signal_context (prof_agent_api.guest_signal_context)
#define prof_guest_vm_function (prof_agent_api.guest_vm_function)
#define prof_register_guest_jit_step (prof_agent_api.register_guest_jit_step)
#endif

#endif /* PROF_AGENT_API_H */
