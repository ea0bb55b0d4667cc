// StreamContext: one opened stream with what its records build up while it is
// read: guest symbols, the stack table, the module map (symbolizer), the
// writer's process, stats, markers and how it ended; and the frames of its
// stacks.
//
// Invariants: read_memprof()/read_sysprof() stream the records once, keeping
// nothing per event; only the records inside `window` reach the caller
// (marker_window.h); a cut stream ends the read with `end` set (the records
// before the cut were delivered) and a corrupt one throws FormatError, as
// does an allocation size of 2^63 or more (the stacks records name are
// checked by the readers that use them, stacks.check()); running out of
// memory throws OutOfMemory with the offset of the record being read. Stacks
// are named into one CallTree, each stack-table node once.
#pragma once

#include <cstdint>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "model/call_tree.h"
#include "model/frame.h"
#include "read/lua_function_names.h"
#include "read/marker_window.h"
#include "memprof.h"
#include "read/profile_file.h"
#include "read/read_progress.h"
#include "model/stack_merge.h"
#include "read/stack_table.h"
#include "read/symbolizer.h"
#include "sysprof.h"

namespace prof {

// Memory ran out while the record at `offset` was read.
class OutOfMemory : public std::runtime_error {
 public:
  explicit OutOfMemory(uint64_t offset)
      : std::runtime_error("out of memory at byte " + std::to_string(offset)), offset_(offset) {}
  uint64_t offset() const { return offset_; }

 private:
  uint64_t offset_;
};

struct StreamContext {
  StreamContext(const std::string &path, uint32_t index) : file(path), index(index) {}

  ProfileFile file;
  uint32_t index;  // position among the files read together
  StackTable stacks;
  Symbolizer symbolizer;
  uint64_t pid = 0, ppid = 0;
  std::string exe;
  uint64_t start_unix_ns = 0;  // when it began recording (the process record)
  // Recorded by an agent attached to the running process (prof-run --pid),
  // at its attach_number-th attach; 0: the agent came with the program.
  uint64_t attach_number = 0;
  std::map<std::string, uint64_t> stats;  // summed by name
  static constexpr size_t kMaxMarkers = 1024;
  std::vector<std::pair<uint64_t, std::string>> markers;  // the first kMaxMarkers
  uint64_t markers_dropped = 0;
  ReadEnd end;
  // Where bytes follow the stream's end (a second stream appended, junk):
  // said, not read; 0 when none do.
  uint64_t trailing_at = 0;
  // The process ended without finishing the stream (an unclean-end record).
  struct UncleanEnd {
    bool seen = false;
    uint64_t time_ns = 0, lost_bytes = 0;
  } unclean;
  // What was read: allocation events (or samples), and the stream's bytes
  // (decompressed, when the file is compressed).
  uint64_t events = 0, stream_bytes = 0;
  uint64_t records = 0;  // of every kind, after the section's prologue
  MarkerWindow window;  // set before reading: every record by default
  // Threads' names (thread-name records) as of the record being read, then
  // the last each had; the first kMaxThreadNames threads named.
  static constexpr size_t kMaxThreadNames = 1 << 16;
  std::map<uint64_t, std::string> thread_names;
  uint64_t thread_names_dropped = 0;
  uint64_t thread_renames = 0;  // thread-name records read so far
  // The name of thread `tid` now ("" unnamed).
  const std::string &thread_name(uint64_t tid) const;
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

  // The call-tree node of a stack-table stack pair (indices), guest frames
  // spliced in (stack_merge.h).
  uint32_t stack_node(uint32_t host, uint32_t guest, CallTree &calls);
  // Whether stack_node() names a host stack's frames by the symbolizer
  // alone, node by node (an extended stream naming no guest VM function):
  // tables by function can then name frames without naming every stack.
  bool host_frames_plain() const { return file.prologue().extended && vm_functions_.empty(); }
  // The call-tree node of a sample, named with the symbols known now.
  uint32_t sample_node(const SysprofSample &s, CallTree &calls);
  // The innermost host frame of a stack (by index; its innermost inlined
  // function), valid until the next call, or nullptr for the empty stack.
  const Frame *top_frame(uint32_t host);
  // An event's guest location as reports name it: as LuaJIT's parser does
  // in genuine streams; in libprof's, as the stacks name its frame.
  std::string location_name(const GuestLoc &loc);

 private:
  template <class Reader, class Record, class Fn>
  void read_section(Fn &&fn) {
    ReadProgress progress(file.path(), file.size());
    uint64_t offset = 0;
    try {
      end = read_records([&] {
        Reader reader(file.reader(), file.prologue());
        Record r;
        while (reader.next(r)) {
          offset = r.offset;
          records++;
          progress.at(file.reader().source_bytes());
          using Kind = decltype(r.record);
          events += r.record != Kind::Symbol && r.record != Kind::Ext;
          if (r.record == Kind::Symbol) {
            add_symbol(r.symbol);
            continue;
          }
          if (r.record == Kind::Ext) window_time(r.ext);
          if (r.record == Kind::Ext && absorb(r.ext, r.offset)) continue;
          check(r);
          if (!window.pass(r)) continue;
          fn(r);
        }
        try {
          if (!file.reader().at_end()) trailing_at = file.reader().offset();
        } catch (const FormatError &) {
          trailing_at = file.reader().offset();
        }
      });
      stream_bytes = file.reader().offset();
    } catch (const std::bad_alloc &) {
      throw OutOfMemory(offset);
    }
  }
  void add_symbol(const Symbol &s);
  // Hands a record's time, if it has one, to the window.
  void window_time(const ExtRecord &r);
  bool absorb(const ExtRecord &r, uint64_t offset);
  void check(const MemprofEvent &ev) const {
    if (ev.record != MemprofRecord::Ext && (ev.nsize | ev.osize) >> 57) refuse_size(ev);
  }
  void check(const SysprofSample &) const {}
  [[noreturn]] void refuse_size(const MemprofEvent &ev) const;
  // The frames of host code at `ip`, interned into `calls`, appended to `out`;
  // the agent's code ("[libprof]") only as the `innermost` frame of a stack.
  void host_frames(uint64_t ip, uint32_t epoch, CallTree &calls, std::vector<uint32_t> &out,
                   bool innermost);
  uint32_t guest_frame(uint8_t type, uint64_t addr, uint64_t line, CallTree &calls);
  // A guest frame named by the stream's symbols, a Lua function's name from
  // its source added ("BottomUpTree (@bt.lua:6)"); in libprof's streams, a
  // C function no symbol names (lua.c's pmain) named as its host code is.
  Frame named_guest_frame(uint8_t type, uint64_t addr, uint64_t line);
  uint32_t host_node(uint32_t host, CallTree &calls);
  // guest_cut: the guest stack's root frame is the cut frame (stack_merge.h).
  uint32_t merged_node(const std::vector<uint32_t> &host, const std::vector<uint32_t> &guest,
                       const std::vector<bool> &guest_cfunc, bool guest_cut, CallTree &calls);

  // The guest VM's interpreter functions (vm-function records), by start
  // (the first named at one start), and the largest size, so that a search
  // stops where no range further down reaches the address.
  struct VmFunctionRange {
    uint64_t size;
    Frame frame;
  };
  std::map<uint64_t, VmFunctionRange> vm_functions_;
  uint64_t vm_max_size_ = 0;
  // The range of VM code holding pc, or nullptr.
  const VmFunctionRange *vm_function_at(uint64_t pc) const;
  LuaFunctionNames lua_names_;
  std::unordered_set<uint32_t> vm_frame_ids_;  // their frames' ids in the call tree
  // By stack-table index: a host node's call-tree node, a guest node's frame id.
  std::vector<uint32_t> named_;
  std::vector<uint32_t> todo_, ip_ids_, host_ids_, guest_ids_, order_;  // scratch
  std::vector<bool> guest_cfunc_;
  std::vector<VmEntry> entries_;
};

}  // namespace prof
