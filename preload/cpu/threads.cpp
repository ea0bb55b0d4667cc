// pthread_create, interposed so that every thread the program starts is
// sampled from its first instruction: the start routine runs behind a
// trampoline that registers the thread with the CPU sampler.
#include <atomic>
#include <cstdlib>
#include <pthread.h>

#include "next_symbol.h"
#include "cpu/sampler.h"
#include "thread_names.h"
#include "thread_state.h"

namespace {

using CreateFn = int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

struct Start {
  void *(*routine)(void *);
  void *arg;
};

void *sampled_start(void *p) {
  const Start start = *static_cast<Start *>(p);
  {
    prof::GuardScope guard;
    free(p);
  }
  prof::register_sampled_thread();
  prof::write_thread_name_at_start();
  return start.routine(start.arg);
}

std::atomic<CreateFn> g_create{nullptr};

}  // namespace

extern "C" __attribute__((visibility("default"))) int pthread_create(
    pthread_t *thread, const pthread_attr_t *attr, void *(*routine)(void *), void *arg) {
  const CreateFn create = prof::next_symbol("pthread_create", g_create);
  if (!prof::cpu_sampler_on() || prof::t_state.guard) return create(thread, attr, routine, arg);
  Start *start;
  {
    prof::GuardScope guard;  // the agent's allocation, not the program's
    start = static_cast<Start *>(malloc(sizeof(Start)));
  }
  if (!start) return create(thread, attr, routine, arg);
  *start = Start{routine, arg};
  const int rc = create(thread, attr, sampled_start, start);
  if (rc != 0) {
    prof::GuardScope guard;
    free(start);
  }
  return rc;
}
