// StreamContext: one opened stream with what its records build up while it is
// read: guest symbols, the stack table, the module map (symbolizer), the
// writer's process, stats, markers and how it ended; and the frames of its
// stacks.
//
// Invariants: read_memprof()/read_sysprof() stream the records once, keeping
// nothing per event; only the records inside `window` reach the caller
// (marker_window.h); a cut stream ends the read with `end` set (the records
// before the cut were delivered) and a corrupt one throws FormatError.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/frame.h"
#include "read/marker_window.h"
#include "memprof.h"
#include "read/profile_file.h"
#include "read/read_progress.h"
#include "model/stack_merge.h"
#include "read/stack_table.h"
#include "read/symbolizer.h"
#include "sysprof.h"

namespace prof {

struct StreamContext {
  StreamContext(const std::string &path, uint32_t index) : file(path), index(index) {}

  ProfileFile file;
  uint32_t index;  // position among the files read together
  StackTable stacks;
  Symbolizer symbolizer;
  uint64_t pid = 0, ppid = 0;
  std::string exe;
  std::map<std::string, uint64_t> stats;  // summed by name
  static constexpr size_t kMaxMarkers = 1024;
  std::vector<std::pair<uint64_t, std::string>> markers;  // the first kMaxMarkers
  uint64_t markers_dropped = 0;
  ReadEnd end;
  // The process ended without finishing the stream (an unclean-end record).
  struct UncleanEnd {
    bool seen = false;
    uint64_t time_ns = 0, lost_bytes = 0;
  } unclean;
  MarkerWindow window;  // set before reading: every record by default
  // Bumped by every record that can change a name (symbols, modules): names
  // cached by a reader stay valid while it is unchanged.
  uint64_t naming_epoch = 0;

  // Reads every memprof (sysprof) record; symbols, stack nodes, modules,
  // process, stats, markers and an unclean end are absorbed here, everything
  // else goes to fn.
  template <class Fn>
  void read_memprof(Fn &&fn) {
    read_section<MemprofReader, MemprofEvent>(fn);
  }
  template <class Fn>
  void read_sysprof(Fn &&fn) {
    read_section<SysprofReader, SysprofSample>(fn);
  }

  // Frames of a stack-table stack pair, root first, guest frames spliced in
  // (stack_merge.h).
  std::vector<Frame> stack_frames(uint64_t host, uint64_t guest);
  // Frames of a sample, root first, named with the symbols known now.
  std::vector<Frame> sample_frames(const SysprofSample &s);
  // The innermost host frame of a stack (its innermost inlined function), or
  // nullptr for the empty stack.
  const Frame *top_frame(uint64_t host);

 private:
  template <class Reader, class Record, class Fn>
  void read_section(Fn &&fn) {
    ReadProgress progress(file.path(), file.size());
    end = read_records([&] {
      Reader reader(file.reader(), file.prologue());
      Record r;
      while (reader.next(r)) {
        progress.at(r.offset);
        using Kind = decltype(r.record);
        if (r.record == Kind::Symbol) {
          add_symbol(r.symbol);
          continue;
        }
        if (r.record == Kind::Ext && absorb(r.ext)) continue;
        if (!window.pass(r)) continue;
        fn(r);
      }
    });
  }
  void add_symbol(const Symbol &s);
  bool absorb(const ExtRecord &r);
  void host_frames(uint64_t ip, uint32_t epoch, std::vector<Frame> &out);
  std::vector<StackFrame> scratch_;
};

}  // namespace prof
