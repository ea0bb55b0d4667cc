// MarkerWindow: restricts what a stream reports to the window between two of
// its markers (prof_marker()), for every command (--from / --to).
//
// Semantics:
// - The window opens at the first marker labelled `from` (at the start of the
//   stream when `from` is empty) and closes at the first marker labelled `to`
//   after that (at the end when `to` is empty or never met). Markers are
//   ordered by their place in the stream, which is the order the agent
//   recorded them in across threads.
// - Inside, events are reported as those of a whole stream: leaks are the
//   blocks made inside and still live when the window closes, the peak is the
//   peak of the bytes made inside.
// - Blocks made before the window are not part of it: a free of one inside
//   the window is left out (counted in earlier_frees/earlier_bytes, never as
//   an unknown free); a realloc of one makes a new block of the window, as a
//   realloc of NULL would. The pairing rule stays: the oldest live block at
//   an address.
// - Given in seconds ("2.5s"), the window opens at the first record with a
//   time (time marks, heap totals, markers: the agent writes a heap total
//   at least every 64 KiB of change) at or after `from`, and closes at the
//   first at or after `to`; times count from the profile's start, as the
//   summary prints them.
// - Outside the window only records that set state pass (sampling mean,
//   sampler, thread, event-thread): time marks, maps, unmaps, CPU samples and weights do
//   not. Heap-total records count the whole process's heap, not the
//   window's: they never pass.
//
// Invariants: memory grows with the blocks live before the window opens, and
// is released when it closes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>

#include "memprof.h"
#include "sysprof.h"

namespace prof {

struct WindowSpec {
  // Marker labels, or times since the profile started in seconds ("2.5s");
  // empty: the stream's start / end.
  std::string from, to;
  bool active() const { return !from.empty() || !to.empty(); }
};

// The nanoseconds of a time of --from/--to ("2.5s", "10s", "0.25s"), or
// UINT64_MAX when `text` is not one (then it is a marker's label).
uint64_t window_time_ns(const std::string &text);

class MarkerWindow {
 public:
  void set(const WindowSpec &spec);
  const WindowSpec &spec() const { return spec_; }

  // A marker of the stream, in stream order.
  void marker(const std::string &label);
  // A record's time (a time mark's, a heap total's, a marker's), in stream
  // order: opens and closes a window given in seconds.
  void time(uint64_t ns);
  // Whether a record is reported; may turn a realloc of an earlier block
  // into one of NULL.
  bool pass(MemprofEvent &ev) {
    // Inline, nearly every event: no window, or nothing made before it left.
    if (ev.record != MemprofRecord::Ext && state_ == State::Inside && earlier_.empty()) return true;
    return pass_rest(ev);
  }
  bool pass(const SysprofSample &s);

  bool opened() const { return state_ != State::Before; }
  bool closed() const { return state_ == State::After; }
  uint64_t earlier_frees() const { return earlier_frees_; }
  uint64_t earlier_bytes() const { return earlier_bytes_; }
  // One line on what the window missed in this stream ("" when it opened and
  // closed as asked).
  std::string warning() const;
  // {"from", "to", "opened", "closed", "earlier_frees", "earlier_freed_bytes"}
  nlohmann::json to_json() const;

 private:
  enum class State : uint8_t { Before, Inside, After };
  bool pass_rest(MemprofEvent &ev);
  // Forgets one earlier block at addr, giving its size; false if none.
  bool take_earlier(uint64_t addr, uint64_t *size);

  WindowSpec spec_;
  uint64_t from_ns_ = UINT64_MAX, to_ns_ = UINT64_MAX;  // a window in seconds
  State state_ = State::Inside;
  void close();
  // Blocks live before the window opened: address -> (count, size). XXX: two
  // live blocks at one address (a realloc racing another thread) share the
  // latest size.
  std::unordered_map<uint64_t, std::pair<uint32_t, uint64_t>> earlier_;
  uint64_t earlier_frees_ = 0, earlier_bytes_ = 0;
};

// The line heading a report restricted to a window of the stream of `pid`,
// from MarkerWindow::to_json().
std::string window_line(const nlohmann::json &window, uint64_t pid);

}  // namespace prof
