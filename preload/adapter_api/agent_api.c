/* agent_api.c: the table of agent_api.h, bound to the weak symbols at load
** and, in an attached process, by the agent. */
#define PROF_AGENT_API_BINDING
#include "agent_api.h"

struct ProfAgentApi prof_agent_api;

__attribute__((constructor)) static void bind_weak_symbols(void) {
#define PROF_AGENT_API_WEAK(name) prof_agent_api.name = prof_##name;
  PROF_AGENT_API_FUNCTIONS(PROF_AGENT_API_WEAK)
#undef PROF_AGENT_API_WEAK
}

void prof_adapter_bind_agent(void *(*lookup)(const char *)) {
#define PROF_AGENT_API_LOOKUP(name) \
  prof_agent_api.name = (__typeof__(prof_agent_api.name))lookup("prof_" #name);
  PROF_AGENT_API_FUNCTIONS(PROF_AGENT_API_LOOKUP)
#undef PROF_AGENT_API_LOOKUP
}
