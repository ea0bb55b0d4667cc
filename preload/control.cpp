// The run-time control API of libprof.h: pause, resume, and markers.
#include <csignal>
#include <cstring>

#include "agent.h"
#include "ext.h"
#include "libprof.h"
#include "sampler.h"
#include "stream_writer.h"
#include "thread_state.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT void prof_start(void) { prof::g_agent.paused.store(false); }

EXPORT void prof_stop(void) { prof::g_agent.paused.store(true); }

// A marker goes into each stream the process writes: the memory stream's
// ring, and the CPU stream through the calling thread's sample slot, between
// that thread's own samples.
EXPORT void prof_marker(const char *label) {
  using namespace prof;
  if (!label) return;
  GuardScope guard;
  uint8_t buf[320];
  SpanWriter out(buf);
  put_marker(out, monotonic_ns() - g_agent.start_ns, label, strnlen(label, 256));
  if (g_agent.on.load()) g_agent.ring.append(out.data(), out.size());
  if (cpu_sampler_on() && t_sample_slot) {
    // XXX: the slot's one producer is this thread's sampling handler: keep
    // it out while the marker goes in.
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, g_cpu.sig);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    t_sample_slot->push(out.data(), out.size());
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
}
