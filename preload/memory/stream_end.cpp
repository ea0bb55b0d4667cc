#include "memory/stream_end.h"

#include "agent.h"
#include "ext.h"
#include "host_stack.h"
#include "lua_attach.h"
#include "memory/alloc_sampling.h"
#include "memprof.h"
#include "program_signals.h"
#include "stream/raw_thread.h"
#include "stream_writer.h"

namespace prof {
namespace {

size_t put_stats_and_epilogue(SpanWriter &out) {
  const ext::StatView stats[] = {
      {"unwind_failures", g_agent.unwind_failures.load()},
      {"unwind_fallbacks", HostStack::fallbacks()},
      {"guest_stacks_cut", g_agent.guest_stacks_cut.load()},
      {"lua_states_not_profiled", lua_states_not_profiled()},
      {"stack_table_full", g_agent.stacks.table_full()},
      {"ring_full_waits", g_agent.ring.full_waits()},
      {"ring_shared_slot_uses", g_agent.ring.shared_slot_uses()},
      {"sampled_set_overflow", g_sampled.overflow()},
      {"ring_records_abandoned", g_agent.ring.abandoned_records()},
      {"guards_abandoned", g_agent.guards_abandoned.load()},
      {"signals_deferred", signals_deferred()},
      {"signals_merged", signals_merged()},
      {"signal_handlers_in_agent", handlers_in_agent()},
      {"events_while_opening", events_while_opening()},
      {"libc_direct_calls", g_agent.libc_direct_calls.load()},
      {"allocations_before_start", g_agent.allocs_before_start.load()},
      {"bytes_before_start", g_agent.bytes_before_start.load()},
      {"stream_bytes", g_agent.ring.stream_bytes()},
      {"stream_file_bytes", g_agent.ring.file_bytes()},
  };
  put_ext(out, ext::StatsView{stats});
  put_memprof_epilogue(out);
  return out.size();
}

}  // namespace

size_t put_memprof_end(uint8_t *buf) {
  SpanWriter out(buf);
  return put_stats_and_epilogue(out);
}

size_t put_memprof_unclean_end(uint8_t *buf, uint64_t lost_bytes) {
  SpanWriter out(buf);
  put_ext(out, ext::UncleanEnd{raw_monotonic_ns() - g_agent.start_ns, lost_bytes});
  return put_stats_and_epilogue(out);
}

}  // namespace prof
