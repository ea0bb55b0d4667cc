// The run-time control API of libprof.h: pause, resume, and markers.
#include <cstring>

#include "agent.h"
#include "ext.h"
#include "libprof.h"
#include "stream_writer.h"
#include "thread_state.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT void prof_start(void) { prof::g_agent.paused.store(false); }

EXPORT void prof_stop(void) { prof::g_agent.paused.store(true); }

EXPORT void prof_marker(const char *label) {
  using namespace prof;
  if (!g_agent.on.load() || !label) return;
  GuardScope guard;
  uint8_t buf[320];
  SpanWriter out(buf);
  const size_t len = strnlen(label, 256);
  put_marker(out, monotonic_ns() - g_agent.start_ns, label, len);
  g_agent.ring.append(out.data(), out.size());
}
