#include "memory/heap_total.h"

#include "agent.h"
#include "ext.h"
#include "stream_writer.h"

namespace prof {

HeapTotal g_heap_total;

namespace {

// The out-of-line path's state (taken at a step, a peak or a flush).
std::atomic<int64_t> g_peak{0};           // the largest count seen
std::atomic<uint64_t> g_peak_ns{0};       // when it was reached
std::atomic<bool> g_peak_written{true};   // a record carries g_peak already
std::atomic<int> g_peaks_unclocked{0};    // new peaks since g_peak_ns was read
std::atomic<int64_t> g_last_written{0};   // the count of the last record

uint64_t now_ns() { return monotonic_ns() - g_agent.start_ns; }

int64_t step_of(int64_t peak) { return peak / 64 > HeapTotal::kMinStep ? peak / 64 : HeapTotal::kMinStep; }

void set_bounds() {
  const int64_t last = g_last_written.load(std::memory_order_relaxed);
  const int64_t peak = g_peak.load(std::memory_order_relaxed);
  const int64_t step = step_of(peak);
  g_heap_total.low.store(last - step, std::memory_order_relaxed);
  g_heap_total.high.store(last + step < peak ? last + step : peak, std::memory_order_relaxed);
}

void append(uint64_t time_ns, int64_t count) {
  uint8_t buf[ext::HeapTotal::kMaxBytes];
  SpanWriter out(buf);
  put_ext(out, ext::HeapTotal{time_ns, uint64_t(count > 0 ? count : 0)});
  g_agent.ring.append(out.data(), out.size());
}

// The peak first, if no record carries it yet: it came before `count`.
void write(uint64_t time_ns, int64_t count) {
  if (!g_peak_written.exchange(true))
    append(g_peak_ns.load(std::memory_order_relaxed), g_peak.load(std::memory_order_relaxed));
  append(time_ns, count);
  g_last_written.store(count, std::memory_order_relaxed);
}

}  // namespace

void heap_total_moved(int64_t delta) {
  t_state.heap_delta = 0;
  const int64_t count =
      g_heap_total.shared.fetch_add(delta, std::memory_order_relaxed) + delta;
  GuardScope guard;
  if (!memory_stream_ready()) return;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  const int64_t last = g_last_written.load(std::memory_order_relaxed);
  if (count > peak) {
    while (count > peak && !g_peak.compare_exchange_weak(peak, count, std::memory_order_relaxed)) {
    }
    if (count >= last + step_of(count)) {  // a step up: its record carries the peak
      const uint64_t t = now_ns();
      g_peak_ns.store(t, std::memory_order_relaxed);
      g_peak_written.store(true, std::memory_order_relaxed);
      append(t, count);
      g_last_written.store(count, std::memory_order_relaxed);
    } else if (g_peak_written.exchange(false, std::memory_order_relaxed) ||
               g_peaks_unclocked.fetch_add(1, std::memory_order_relaxed) + 1 >=
                   HeapTotal::kPeakClockEvery) {
      // XXX: the clock is read for the first new peak after a record, then
      // every kPeakClockEvery: in a climb the peak's time is that close.
      g_peak_ns.store(now_ns(), std::memory_order_relaxed);
      g_peaks_unclocked.store(0, std::memory_order_relaxed);
    }
  } else {
    const int64_t step = step_of(peak);
    if (count >= last + step || count <= last - step) write(now_ns(), count);
  }
  set_bounds();
}

void write_heap_total(uint64_t time_ns) {
  if (g_agent.attach_number) return;  // (attached: not counted, agent.h)
  const int64_t delta = t_state.heap_delta;
  t_state.heap_delta = 0;
  const int64_t count = g_heap_total.shared.fetch_add(delta, std::memory_order_relaxed) + delta;
  if (count > g_peak.load(std::memory_order_relaxed)) {  // a climb not added in yet
    g_peak.store(count, std::memory_order_relaxed);
    g_peak_written.store(true, std::memory_order_relaxed);  // this record carries it
  }
  write(time_ns, count);
  set_bounds();
}

void restart_heap_total_in_child() {
  // The forking thread's count joins the shared one; the other threads'
  // changes not added yet are lost with them.
  const int64_t count = g_heap_total.shared.load() + t_state.heap_delta;
  t_state.heap_delta = 0;
  g_heap_total.shared.store(count);
  g_peak.store(count);
  g_peak_ns.store(0);
  g_peak_written.store(false);  // the child's stream starts with what it inherited
  g_peaks_unclocked.store(0);
  g_last_written.store(count);
  set_bounds();
}

}  // namespace prof
