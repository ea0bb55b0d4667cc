// StreamContext: one opened stream with what its records build up while it is
// read: guest symbols, the stack table, the module map (symbolizer), the
// writer's process, sampling mean, stats and markers; and the frames of its
// stacks.
//
// Invariants: read_memprof()/read_sysprof() stream the records once, keeping
// nothing per event; a cut stream ends the read with `end` set (the records
// before the cut were delivered) and a corrupt one throws FormatError.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frame.h"
#include "memprof.h"
#include "profile_file.h"
#include "stack_merge.h"
#include "stack_table.h"
#include "symbolizer.h"
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
  uint64_t sampling_mean = 0;
  std::vector<std::pair<std::string, uint64_t>> stats;
  std::vector<std::pair<uint64_t, std::string>> markers;
  ReadEnd end;
  // Bumped by every record that can change a name (symbols, modules): names
  // cached by a reader stay valid while it is unchanged.
  uint64_t naming_epoch = 0;

  // Reads every memprof record; symbols, stack nodes, modules, process,
  // stats and markers are absorbed here, everything else goes to fn.
  template <class Fn>
  void read_memprof(Fn &&fn) {
    end = read_records([&] {
      MemprofReader reader(file.reader(), file.prologue());
      MemprofEvent ev;
      while (reader.next(ev)) {
        if (ev.record == MemprofRecord::Symbol) {
          add_symbol(ev.symbol);
          continue;
        }
        if (ev.record == MemprofRecord::Ext && absorb(ev.ext)) continue;
        fn(ev);
      }
    });
  }
  // Same for sysprof.
  template <class Fn>
  void read_sysprof(Fn &&fn) {
    end = read_records([&] {
      SysprofReader reader(file.reader(), file.prologue());
      SysprofSample s;
      while (reader.next(s)) {
        if (s.record == SysprofRecord::Symbol) {
          add_symbol(s.symbol);
          continue;
        }
        if (s.record == SysprofRecord::Ext && absorb(s.ext)) continue;
        fn(s);
      }
    });
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
  void add_symbol(const Symbol &s);
  bool absorb(const ExtRecord &r);
  void host_frames(uint64_t ip, uint32_t epoch, std::vector<Frame> &out);
  std::vector<StackFrame> scratch_;
};

}  // namespace prof
