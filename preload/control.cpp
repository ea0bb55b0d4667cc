// The run-time control API of libprof.h: pause, resume, and markers.
#include <cstring>
#include <string_view>

#include "agent.h"
#include "ext.h"
#include "libprof.h"
#include "cpu/sampler.h"
#include "cpu/stream.h"
#include "stream_writer.h"
#include "thread_state.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT void prof_start(void) { prof::g_agent.paused.store(false); }

EXPORT void prof_stop(void) { prof::g_agent.paused.store(true); }

// A marker goes into each stream the process writes: the memory stream's
// ring, and the CPU stream right after every sample taken before it.
EXPORT void prof_marker(const char *label) {
  using namespace prof;
  if (!label) return;
  GuardScope guard;
  uint8_t buf[ext::MarkerView::kMaxBytes];
  SpanWriter out(buf);
  const std::string_view text(label, strnlen(label, kMaxWrittenLabel));
  put_ext(out, ext::MarkerView{monotonic_ns() - g_agent.start_ns, text});
  if (g_agent.on.load() && memory_stream_ready()) g_agent.ring.append(out.data(), out.size());
  if (cpu_sampler_on()) sysprof_stream::write_record(out.data(), out.size());
}
