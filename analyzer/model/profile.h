// Profile: what a set of streams says, each read once in file order: the
// memory model (HeapModel) and the CPU model (CpuModel), plus the streams
// themselves, kept open to name stacks with their symbols, stack tables and
// module maps. Summaries, folded stacks and exporters read a Profile.
//
// Invariants: reading keeps nothing per event (see HeapModel and CpuModel);
// a cut stream is read up to its last complete record (StreamContext::end);
// corruption throws FormatError, I/O failures std::runtime_error and a lack
// of memory OutOfMemory. Stacks are named into one CallTree (memory stacks
// when first asked for, CPU samples as they are read), which reports walk.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/call_tree.h"
#include "model/cpu_model.h"
#include "model/frame.h"
#include "model/heap_model.h"
#include "model/stack_key.h"
#include "read/stream_context.h"
#include "model/suppressions.h"

namespace prof {

struct ProfileOptions {
  // RFC-style heap snapshots: every so many seconds of time marks, or every
  // so many allocation events (0: none), each with its `snap_top` holders.
  double snap_interval_s = 0;
  uint64_t snap_events = 0;
  size_t snap_top = 10;
  WindowSpec window;  // only the records between two markers (marker_window.h)
  // Only the CPU samples and the memory events (with the blocks' frees) of
  // the threads of this name or tid (ThreadChoice; "": all).
  std::string thread;
  bool full_names = false;  // C++ template arguments kept (frame_names.h)
  std::string binary;  // LLVM MemProf raw profiles: the profiled program (--binary)
};

// The leaks a suppression pattern left out.
struct SuppressedLeaks {
  std::string pattern;
  bool by_default = false;  // one of the default suppressions
  uint64_t blocks = 0;
  double bytes = 0;
};

class Profile {
 public:
  explicit Profile(const ProfileOptions &opt = {}) : opt_(opt) {
    calls_.keep_full_names(opt.full_names);
  }

  // Reads one more stream.
  StreamContext &read(const std::string &path);

  // The call-tree node of a stack of the memory model (by id): its
  // allocator frames folded into the allocation, its innermost frame the
  // first that is not the allocator's (frame_names.h), unless that would
  // leave no frame.
  uint32_t node(uint32_t stack);
  // The frames of a stack of the memory model (by id), root first.
  std::vector<Frame> frames(uint32_t stack) { return calls_.frames(node(stack)); }
  const CallTree &calls() const { return calls_; }
  // Where a stack of the memory model (by id) is: its stream's stacks.
  const StackKey &stack_key(uint32_t stack) const { return stack_ids_.key(stack); }
  bool full_names() const { return opt_.full_names; }
  // The guest object type a stack of the memory model allocates (ext.h
  // object-type; 0: untyped), and whether any stream had one.
  uint8_t object_type(uint32_t stack) const { return stack_ids_.key(stack).object_type; }
  bool has_object_types() const { return has_object_types_; }

  // Leaves out of the leaks every stack a suppression matches, and counts
  // them by pattern (used patterns only, in file order); after the last read.
  void suppress_leaks(const Suppressions &suppressions);
  const std::vector<SuppressedLeaks> &suppressed() const { return suppressed_; }

  bool has_memory() const { return has_memory_; }
  bool has_cpu() const { return has_cpu_; }
  const HeapModel &memory() const { return heap_; }
  const CpuModel &cpu() const { return cpu_; }
  const std::vector<std::unique_ptr<StreamContext>> &streams() const { return streams_; }

 private:
  void read_memory(StreamContext &ctx);
  void read_measured(StreamContext &ctx);
  uint32_t site_of(StreamContext &ctx, const GuestLoc &loc);
  uint32_t without_allocator(uint32_t node);

  ProfileOptions opt_;
  std::vector<std::unique_ptr<StreamContext>> streams_;
  StackIndex stack_ids_;
  CallTree calls_;
  std::vector<uint32_t> stack_nodes_;  // by stack id, named when first asked for
  std::vector<int8_t> allocator_frames_;  // by frame id: 1 the allocator's, 0 not, -1 unknown
  HeapModel heap_;
  CpuModel cpu_;
  bool has_memory_ = false, has_cpu_ = false, has_object_types_ = false;
  std::vector<SuppressedLeaks> suppressed_;
  // Guest locations of streams without stacks, named when met; the names of
  // locations of the stream being read while no symbol changes them.
  std::vector<std::string> site_names_;
  std::unordered_map<std::string, uint32_t> site_ids_;
  std::map<std::tuple<uint64_t, uint64_t, uint64_t>, uint32_t> loc_sites_;
  std::pair<uint32_t, uint64_t> loc_epoch_{UINT32_MAX, 0};
};

}  // namespace prof
