// libprof extension records: what an extended memprof or sysprof section (the
// X bit of prologue.h) carries beyond the LuaJIT grammar. Extension revision 7
// (revision 1 had neither unclean-end nor skip; revision 2 had no compact
// events, kinds 22 to 26; revision 3 no trace-sample; revision 4 no
// thread-name; revision 5 no event-thread; revision 6 no attached).
//
// ext-record     := ext-header ext-body
// ext-header     := <BYTE>                   [01KKKKKK], KKKKKK = ext kind
// ext-body       := stack-host | stack-guest | module-load | module-unload |
//                   time-mark | sampling | marker | stats | map | unmap |
//                   process | sampler | thread | weight | unclean-end |
//                   skip | vm-function | vm-state | heap-total | object-type |
//                   working-dir | site | alloc-at | free-of | free-at |
//                   realloc-of | trace-sample | thread-name | event-thread |
//                   attached
// stack-host     := node-id parent-id ip                         (kind 1)
// stack-guest    := node-id parent-id frame-type frame-addr line (kind 2)
// module-load    := base size path build-id                      (kind 3)
// module-unload  := base                                         (kind 4)
// time-mark      := time-ns rss-bytes heap-bytes                 (kind 5)
// sampling       := mean-bytes                                   (kind 6)
// marker         := time-ns label                                (kind 7)
// stats          := count stat{count}                            (kind 8)
// stat           := stat-name stat-value
// map            := addr length host-stack-id guest-stack-id     (kind 9)
// unmap          := addr length                                  (kind 10)
// process        := pid ppid time-unix-ns exe-path               (kind 11)
// sampler        := backend mode interval-ns                     (kind 12)
// thread         := tid                                          (kind 13)
// weight         := sample-weight                                (kind 14)
// unclean-end    := time-ns lost-bytes                           (kind 15)
// skip           := length <BYTE>{length}                        (kind 16)
// vm-function    := start size name                              (kind 17)
// vm-state       := vmstate                                      (kind 18)
// heap-total     := time-ns live-bytes                           (kind 19)
// object-type    := type-id                                      (kind 20)
// working-dir    := path                                         (kind 21)
// site           := site-id site-head loc? stacks? size type-id  (kind 22)
// alloc-at       := site-id                                      (kind 23)
// free-of        := site-id age-step                             (kind 24)
// free-at        := free-site-id site-id age-step                (kind 25)
// realloc-of     := site-id age-step new-site-id                 (kind 26)
// trace-sample   := traceno sym-addr line-no                     (kind 27)
// thread-name    := tid name                                     (kind 28)
// event-thread   := tid                                          (kind 29)
// attached       := attach-number                                (kind 30)
// site-head      := <BYTE>   [00HSSS00]: the H and SSS bits of a memprof
//                   event-header: which loc (guest_loc.h) and whether stacks
//                   (host-stack-id guest-stack-id) follow
// node-id, parent-id, ip, frame-type, frame-addr, line, base, size, time-ns,
// rss-bytes, heap-bytes, mean-bytes, count, stat-value, addr, length,
// host-stack-id, guest-stack-id, pid, ppid, time-unix-ns, backend, mode,
// interval-ns, tid, sample-weight, lost-bytes, start, vmstate, live-bytes,
// type-id, site-id, free-site-id, new-site-id, age-step, attach-number := <ULEB128>
// path, build-id, label, stat-name, exe-path, name := string (as in symtab.h)
//                   (a thread-name's name: at most kMaxThreadName bytes;
//                   a thread-name's or event-thread's tid: 1 to kMaxTid)
//
// Meaning (a kind marked "memprof only" or "sysprof only" in the other
// section is corrupt):
// - The stack table is a prefix tree written once, node by node, before the
//   first record that uses a node. A node is the frame `ip` (host) or the
//   guest frame (frame-type as sysprof's FRAME_*: 1 Lua function with
//   frame-addr = prototype and line = current line, 2 C function with
//   frame-addr = its address, 3 fast function with frame-addr = ffid) called
//   from the node parent-id; parent-id 0 is the root (outside the outermost
//   frame). Ids start at 1; the host and guest trees share one id space. A
//   stack id names its innermost node; 0 is the empty stack. A node may be
//   written twice under two ids (racing threads); both stay valid.
// - module-load: an ELF object loaded with bias `base` (dl_iterate_phdr's
//   dlpi_addr); it covers [base, base + size), size being the end of its
//   highest PT_LOAD segment (p_vaddr + p_memsz); build-id is the raw GNU
//   build-id note (empty if none). An ip belongs to the covering module with
//   the highest base. Addresses
//   are resolved against the modules loaded when the node was written, so an
//   ip in a dlclose'd object stays resolvable after module-unload.
// - time-mark: nanoseconds since the process started profiling, its resident
//   set size, and the writer's own count of live heap bytes (0 when it keeps
//   none: libprof's agent leaves the heap to the analyzer, which knows sizes).
// - sampling: allocation events are Poisson samples with the given mean
//   byte interval (0: every event is recorded). An event of size s stands for
//   s / (1 - exp(-s / mean)) bytes.
// - marker: a labelled point in time set by the program (prof_marker()).
// - stats: named counters written before the epilogue (events dropped, frees
//   of unknown pointers, unwind failures, ...). A reader must show them.
// - map / unmap: the anonymous-mmap domain, apart from the heap. An unmap may
//   cover part of a mapping or several.
// - process: who wrote this stream; first record after the prologue.
// - sampler (sysprof only): backend 1 perf task-clock, 2 timer_create
//   thread CPU clock, 3 ITIMER_PROF; mode 0 DEFAULT, 1 LEAF, 2 CALLGRAPH.
// - thread (sysprof only): the samples that follow were taken on `tid`.
// - weight (sysprof only): the next sample stands for sample-weight
//   intervals (a tick-driven clock signals once for several intervals of the
//   thread's CPU time).
// - unclean-end: the process ended without finishing the stream (exit_group
//   past exit(), a fatal signal, a kill) and something that outlived it
//   wrote every complete record, then this one, the stats and the epilogue.
//   time-ns: when it found the process gone, since profiling started;
//   lost-bytes: what had to be left out, from a record a thread was still
//   writing when it died whose extent was unknown (those of known extent
//   are skips), to the end.
// - skip: `length` bytes that carry nothing, where a record was reserved
//   but never written (its thread left the writer by longjmp); the stats say
//   how many. Readers pass over them.
// - vm-function: the host code [start, start + size) is a guest VM's
//   interpreter function (Lua 5.4's luaV_execute), named `name`: a host frame
//   there runs guest code, so guest frames go right above it, and it is shown
//   as `name` even where the binary is stripped. A guest C frame (type 2)
//   whose frame-addr lies there stands for native code re-entering the VM
//   (a metamethod, an iterator, a finalizer): the boundary between two runs
//   of guest frames. Written before any record that needs it.
// - vm-state (sysprof only): the next sample was taken in this VM state,
//   though its header says another: a collector step (GC) that keeps the
//   guest stack it interrupted is written as a sample-guest (LFUNC) after
//   vm-state 4. The body is always the one the header's state calls for.
// - trace-sample (sysprof only, revision 4): the next sample, a sample-guest,
//   was taken in JIT trace traceno, which started in prototype sym-addr at
//   line-no (sample-trace's body); its stack-lua holds the Lua frames below
//   the trace's own (its callers; the frames it inlined are not on the
//   stack), its stack-host the native frames, through the VM's frame the
//   trace runs in. A sample-trace, as LuaJIT writes it, has neither.
// - thread-name (revision 5): thread `tid` of the process is named `name`
//   from here on (pthread_setname_np, prctl(PR_SET_NAME), or the name it had
//   when it started or when profiling did); written when a name is set or
//   first seen, in both sections, so a later one renames the thread.
// - event-thread (memprof only, revision 6): the allocation events that
//   follow (plain or compact, an object-type's included) were made by thread
//   `tid` of the process, up to the next event-thread. The agent writes one
//   before an event whose thread is not the previous event's (the stream's
//   first event included): one record per switch, none per event. Events
//   before the first (older revisions, LuaJIT's own streams) have no known
//   thread. It never comes between an object-type and its event.
// - attached (revision 7): the agent came into the process while it ran
//   (prof-run --pid), for the attach-number-th time (1, 2, ...), and
//   recorded from the process record's time on: the stream holds nothing
//   from before. A free, or a realloc's old block, of an address the stream
//   never allocated is then of a block allocated before recording began
//   (not an unknown free), and a block still live at the stream's end was
//   live when the agent detached, the process running on (not a leak).
//   Written once, right after working-dir, in both sections.
// - heap-total: the writer's exact count of the process's live heap at
//   time-ns (nanoseconds since profiling started): every block allocated
//   since then and not yet freed, at the allocator's usable size
//   (malloc_usable_size), whether or not its event was recorded (sampling).
//   Written whenever the count has moved by a step since the last one, at
//   each time mark, and at every peak: the largest live-bytes of a stream is
//   its peak, at its time-ns. Records of one thread come in time order.
// - object-type (memprof only): the allocation or reallocation event that
//   follows it at once makes a guest object of that kind (type-id 1..9:
//   string, table, function, cfunction, userdata, thread, proto, upvalue,
//   other; object_type_name()); events without one are untyped. The agent
//   writes both in one reservation, so no other thread's record comes
//   between; a typed event costs 2 bytes more, untyped ones nothing.
// - working-dir: the process's working directory when the stream opened,
//   against which relative chunk names ("@script.lua") are resolved. Written
//   once, right after process.
// - Compact events (memprof only; libprof's agent writes them into
//   compressed streams): an allocation event without its address, as
//   heaptrack's interpreter writes them. A `site` names everything an
//   allocation event says but its address: its location, stacks, size and
//   object type (0: untyped), once, under site-id (1, 2, ... in the order
//   they are written; a free site, the location and stacks of frees, has
//   size 0 and is never allocated). alloc-at is an event-alloc of one block
//   of the site. The blocks of a site are numbered from 0 in the order they
//   are made; a release names one by its age, the number of blocks of the
//   site made after it, sent as age-step: the age minus the age the site's
//   previous release named (0 at first), zigzag-encoded (0, -1, 1, -2 ...
//   as 0, 1, 2, 3 ...), so the releases of a stack-like or a queue-like
//   site, or a sweep through a site's blocks, write the same byte again and
//   again. free-of is an event-free of that block, with no location;
//   free-at the same, at free-site-id's location and stacks; realloc-of an
//   event-realloc whose old block is that block and whose new one is
//   new-site-id's next, with the new site's location and stacks. A block's
//   size is its site's. A stream has at most kMaxSites sites, a site at
//   most kMaxSiteBlocks blocks. Blocks are paired exactly, as the addresses would
//   pair them (the writer keeps the map of addresses); events the writer
//   could not make compact (an address it never saw made, a table full)
//   stay events with addresses, which pair among themselves.
//
// libprof's encoders write at most kMaxWrittenPath bytes of a path or
// exe-path and kMaxWrittenLabel of a label, and an empty build-id for one
// longer than kMaxWrittenBuildId (a cut one would name another build), so
// the agent encodes every record into a fixed buffer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "byte_reader.h"
#include "guest_loc.h"
#include "prologue.h"
#include "span.h"
#include "uleb128.h"

namespace prof {

constexpr uint8_t kExtFlag = 0x40;
constexpr uint8_t kExtKindMask = 0x3f;

enum class ExtKind : uint8_t {
  StackHost = 1,
  StackGuest = 2,
  ModuleLoad = 3,
  ModuleUnload = 4,
  TimeMark = 5,
  Sampling = 6,
  Marker = 7,
  Stats = 8,
  Map = 9,
  Unmap = 10,
  Process = 11,
  Sampler = 12,
  Thread = 13,
  Weight = 14,
  UncleanEnd = 15,
  Skip = 16,
  VmFunction = 17,
  VmState = 18,
  HeapTotal = 19,
  ObjectType = 20,
  WorkingDir = 21,
  Site = 22,
  AllocAt = 23,
  FreeOf = 24,
  FreeAt = 25,
  ReallocOf = 26,
  TraceSample = 27,
  ThreadName = 28,
  EventThread = 29,
  Attached = 30,
};
constexpr uint8_t kExtKindMax = 30;

constexpr uint8_t ext_header(ExtKind kind) { return kExtFlag | static_cast<uint8_t>(kind); }

// Bounds a reader enforces so a hostile stream cannot grow memory.
constexpr size_t kMaxExtStats = 256;
constexpr size_t kMaxExtString = 1u << 16;  // paths, labels, build-ids, skips

// Compact events' bounds: sites in a stream, blocks a site numbers.
constexpr uint64_t kMaxSites = uint64_t(1) << 19;
constexpr uint64_t kMaxSiteBlocks = uint64_t(1) << 38;

// A thread's name as the kernel keeps it (TASK_COMM_LEN less its NUL).
constexpr size_t kMaxThreadName = 15;
// The highest thread id Linux gives (PID_MAX_LIMIT on 64-bit machines).
constexpr uint64_t kMaxTid = uint64_t(1) << 22;

// The highest type-id of object-type (libprof.h's PROF_OBJECT_*).
constexpr uint8_t kMaxObjectType = 9;

// What libprof's encoders write at most (see above).
constexpr size_t kMaxWrittenPath = 4096;
constexpr size_t kMaxWrittenBuildId = 256;
constexpr size_t kMaxWrittenLabel = 256;

// One struct per ext-body of the grammar, shared by the encoders below and
// read_ext(). Texts are std::string when read and std::string_view when
// written, lists a std::vector when read and a Span when written: the agent
// encodes without allocating. kKind is the record's kind; kMaxBytes, on
// records of integers only, the longest encoding, header included.
namespace ext {

struct StackHost {
  static constexpr ExtKind kKind = ExtKind::StackHost;
  static constexpr size_t kMaxBytes = 1 + 3 * kUleb128Max;
  uint64_t id = 0, parent = 0, ip = 0;
};

struct StackGuest {
  static constexpr ExtKind kKind = ExtKind::StackGuest;
  static constexpr size_t kMaxBytes = 1 + 5 * kUleb128Max;
  uint64_t id = 0, parent = 0;
  uint64_t frame_type = 0;  // sysprof's FRAME_*
  uint64_t frame_addr = 0;  // prototype, C function or ffid
  uint64_t line = 0;        // Lua functions: the current line
};

template <class Text>
struct BasicModuleLoad {
  static constexpr ExtKind kKind = ExtKind::ModuleLoad;
  static constexpr size_t kMaxBytes = 1 + 4 * kUleb128Max + kMaxWrittenPath + kMaxWrittenBuildId;
  uint64_t base = 0;  // load bias
  uint64_t size = 0;  // the object covers [base, base + size)
  Text path;
  Text build_id;  // the raw bytes of the GNU build-id note
};
using ModuleLoad = BasicModuleLoad<std::string>;
using ModuleLoadView = BasicModuleLoad<std::string_view>;

struct ModuleUnload {
  static constexpr ExtKind kKind = ExtKind::ModuleUnload;
  static constexpr size_t kMaxBytes = 1 + kUleb128Max;
  uint64_t base = 0;
};

struct TimeMark {
  static constexpr ExtKind kKind = ExtKind::TimeMark;
  static constexpr size_t kMaxBytes = 1 + 3 * kUleb128Max;
  uint64_t time_ns = 0, rss_bytes = 0, heap_bytes = 0;
};

struct Sampling {
  static constexpr ExtKind kKind = ExtKind::Sampling;
  static constexpr size_t kMaxBytes = 1 + kUleb128Max;
  uint64_t mean_bytes = 0;  // 0: every event is recorded
};

template <class Text>
struct BasicMarker {
  static constexpr ExtKind kKind = ExtKind::Marker;
  static constexpr size_t kMaxBytes = 1 + 2 * kUleb128Max + kMaxWrittenLabel;
  uint64_t time_ns = 0;
  Text label;
};
using Marker = BasicMarker<std::string>;
using MarkerView = BasicMarker<std::string_view>;

template <class Text>
struct BasicStat {
  Text name;
  uint64_t value = 0;
};
using Stat = BasicStat<std::string>;
using StatView = BasicStat<std::string_view>;

template <class List>
struct BasicStats {
  static constexpr ExtKind kKind = ExtKind::Stats;
  List counters;
};
using Stats = BasicStats<std::vector<Stat>>;
using StatsView = BasicStats<Span<StatView>>;

struct Map {
  static constexpr ExtKind kKind = ExtKind::Map;
  static constexpr size_t kMaxBytes = 1 + 4 * kUleb128Max;
  uint64_t addr = 0, length = 0;
  uint64_t host_stack = 0, guest_stack = 0;
};

struct Unmap {
  static constexpr ExtKind kKind = ExtKind::Unmap;
  static constexpr size_t kMaxBytes = 1 + 2 * kUleb128Max;
  uint64_t addr = 0, length = 0;
};

template <class Text>
struct BasicProcess {
  static constexpr ExtKind kKind = ExtKind::Process;
  static constexpr size_t kMaxBytes = 1 + 4 * kUleb128Max + kMaxWrittenPath;
  uint64_t pid = 0, ppid = 0;
  uint64_t time_unix_ns = 0;
  Text exe_path;
};
using Process = BasicProcess<std::string>;
using ProcessView = BasicProcess<std::string_view>;

struct Sampler {
  static constexpr ExtKind kKind = ExtKind::Sampler;
  static constexpr size_t kMaxBytes = 1 + 3 * kUleb128Max;
  uint64_t backend = 0;  // 1 perf task-clock, 2 timer_create, 3 ITIMER_PROF
  uint64_t mode = 0;     // 0 DEFAULT, 1 LEAF, 2 CALLGRAPH
  uint64_t interval_ns = 0;
};

struct Thread {
  static constexpr ExtKind kKind = ExtKind::Thread;
  static constexpr size_t kMaxBytes = 1 + kUleb128Max;
  uint64_t tid = 0;
};

struct Weight {
  static constexpr ExtKind kKind = ExtKind::Weight;
  static constexpr size_t kMaxBytes = 1 + kUleb128Max;
  uint64_t sample_weight = 0;
};

struct UncleanEnd {
  static constexpr ExtKind kKind = ExtKind::UncleanEnd;
  static constexpr size_t kMaxBytes = 1 + 2 * kUleb128Max;
  uint64_t time_ns = 0;     // when the process was found gone
  uint64_t lost_bytes = 0;  // from a record left unfinished, of unknown extent, on
};

// Decoded, a skip is only its length: the bytes it covers carry nothing.
struct Skip {
  static constexpr ExtKind kKind = ExtKind::Skip;
  uint64_t length = 0;
};

template <class Text>
struct BasicVmFunction {
  static constexpr ExtKind kKind = ExtKind::VmFunction;
  static constexpr size_t kMaxBytes = 1 + 3 * kUleb128Max + kMaxWrittenLabel;
  uint64_t start = 0, size = 0;
  Text name;
};
using VmFunction = BasicVmFunction<std::string>;
using VmFunctionView = BasicVmFunction<std::string_view>;

struct VmState {
  static constexpr ExtKind kKind = ExtKind::VmState;
  static constexpr size_t kMaxBytes = 1 + kUleb128Max;
  uint64_t vmstate = 0;  // sysprof's vmstate (sysprof.h)
};

struct TraceSample {
  static constexpr ExtKind kKind = ExtKind::TraceSample;
  static constexpr size_t kMaxBytes = 1 + 3 * kUleb128Max;
  uint64_t traceno = 0, addr = 0, line = 0;  // sample-trace's body
};

struct HeapTotal {
  static constexpr ExtKind kKind = ExtKind::HeapTotal;
  static constexpr size_t kMaxBytes = 1 + 2 * kUleb128Max;
  uint64_t time_ns = 0, live_bytes = 0;
};

struct ObjectType {
  static constexpr ExtKind kKind = ExtKind::ObjectType;
  static constexpr size_t kMaxBytes = 1 + kUleb128Max;
  uint64_t type = 0;  // 1..kMaxObjectType
};

template <class Text>
struct BasicWorkingDir {
  static constexpr ExtKind kKind = ExtKind::WorkingDir;
  static constexpr size_t kMaxBytes = 1 + kUleb128Max + kMaxWrittenPath;
  Text path;
};
using WorkingDir = BasicWorkingDir<std::string>;
using WorkingDirView = BasicWorkingDir<std::string_view>;

struct Site {
  static constexpr ExtKind kKind = ExtKind::Site;
  static constexpr size_t kMaxBytes = 2 + 7 * kUleb128Max;
  uint64_t id = 0;
  GuestLoc loc;
  bool has_stacks = false;
  uint64_t host_stack = 0, guest_stack = 0;
  uint64_t size = 0;
  uint64_t type = 0;  // 0 untyped, else as object-type
};

struct AllocAt {
  static constexpr ExtKind kKind = ExtKind::AllocAt;
  static constexpr size_t kMaxBytes = 1 + kUleb128Max;
  uint64_t site = 0;
};

struct FreeOf {
  static constexpr ExtKind kKind = ExtKind::FreeOf;
  static constexpr size_t kMaxBytes = 1 + 2 * kUleb128Max;
  uint64_t site = 0, age_step = 0;
};

struct FreeAt {
  static constexpr ExtKind kKind = ExtKind::FreeAt;
  static constexpr size_t kMaxBytes = 1 + 3 * kUleb128Max;
  uint64_t free_site = 0, site = 0, age_step = 0;
};

struct ReallocOf {
  static constexpr ExtKind kKind = ExtKind::ReallocOf;
  static constexpr size_t kMaxBytes = 1 + 3 * kUleb128Max;
  uint64_t site = 0, age_step = 0, new_site = 0;
};

template <class Text>
struct BasicThreadName {
  static constexpr ExtKind kKind = ExtKind::ThreadName;
  static constexpr size_t kMaxBytes = 1 + 2 * kUleb128Max + kMaxThreadName;
  uint64_t tid = 0;
  Text name;
};
using ThreadName = BasicThreadName<std::string>;
using ThreadNameView = BasicThreadName<std::string_view>;

struct EventThread {
  static constexpr ExtKind kKind = ExtKind::EventThread;
  static constexpr size_t kMaxBytes = 1 + kUleb128Max;
  uint64_t tid = 0;
};

struct Attached {
  static constexpr ExtKind kKind = ExtKind::Attached;
  static constexpr size_t kMaxBytes = 1 + kUleb128Max;
  uint64_t attach_number = 0;
};

}  // namespace ext

// age-step's zigzag form of a signed difference, and back.
constexpr uint64_t zigzag(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
constexpr int64_t unzigzag(uint64_t v) { return int64_t(v >> 1) ^ -int64_t(v & 1); }

// A decoded extension record: the alternative at index kind - 1.
using ExtRecord = std::variant<ext::StackHost, ext::StackGuest, ext::ModuleLoad, ext::ModuleUnload,
                               ext::TimeMark, ext::Sampling, ext::Marker, ext::Stats, ext::Map,
                               ext::Unmap, ext::Process, ext::Sampler, ext::Thread, ext::Weight,
                               ext::UncleanEnd, ext::Skip, ext::VmFunction, ext::VmState,
                               ext::HeapTotal, ext::ObjectType, ext::WorkingDir, ext::Site,
                               ext::AllocAt, ext::FreeOf, ext::FreeAt, ext::ReallocOf,
                               ext::TraceSample, ext::ThreadName, ext::EventThread,
                               ext::Attached>;

template <size_t... I>
constexpr bool ext_kinds_in_order(std::index_sequence<I...>) {
  return ((static_cast<size_t>(std::variant_alternative_t<I, ExtRecord>::kKind) == I + 1) && ...);
}
static_assert(std::variant_size_v<ExtRecord> == kExtKindMax &&
                  ext_kinds_in_order(std::make_index_sequence<kExtKindMax>()),
              "ExtRecord holds every kind, in kind order");

inline ExtKind ext_kind(const ExtRecord &r) { return static_cast<ExtKind>(r.index() + 1); }

// The encoders: one per record, each the ext-record of the grammar above.
// `text` cut to at most `cap` bytes.
inline size_t written_len(std::string_view text, size_t cap) {
  return text.size() < cap ? text.size() : cap;
}

template <class Out>
void put_ext(Out &out, const ext::StackHost &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.id);
  out.put_uleb(r.parent);
  out.put_uleb(r.ip);
}

template <class Out>
void put_ext(Out &out, const ext::StackGuest &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.id);
  out.put_uleb(r.parent);
  out.put_uleb(r.frame_type);
  out.put_uleb(r.frame_addr);
  out.put_uleb(r.line);
}

template <class Out, class Text>
void put_ext(Out &out, const ext::BasicModuleLoad<Text> &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.base);
  out.put_uleb(r.size);
  out.put_string(r.path.data(), written_len(r.path, kMaxWrittenPath));
  out.put_string(r.build_id.data(),
                 r.build_id.size() <= kMaxWrittenBuildId ? r.build_id.size() : 0);
}

template <class Out>
void put_ext(Out &out, const ext::ModuleUnload &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.base);
}

template <class Out>
void put_ext(Out &out, const ext::TimeMark &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.time_ns);
  out.put_uleb(r.rss_bytes);
  out.put_uleb(r.heap_bytes);
}

template <class Out>
void put_ext(Out &out, const ext::Sampling &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.mean_bytes);
}

template <class Out, class Text>
void put_ext(Out &out, const ext::BasicMarker<Text> &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.time_ns);
  out.put_string(r.label.data(), written_len(r.label, kMaxWrittenLabel));
}

template <class Out, class List>
void put_ext(Out &out, const ext::BasicStats<List> &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.counters.size());
  for (const auto &c : r.counters) {
    out.put_string(c.name.data(), c.name.size());
    out.put_uleb(c.value);
  }
}

template <class Out>
void put_ext(Out &out, const ext::Map &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.addr);
  out.put_uleb(r.length);
  out.put_uleb(r.host_stack);
  out.put_uleb(r.guest_stack);
}

template <class Out>
void put_ext(Out &out, const ext::Unmap &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.addr);
  out.put_uleb(r.length);
}

template <class Out, class Text>
void put_ext(Out &out, const ext::BasicProcess<Text> &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.pid);
  out.put_uleb(r.ppid);
  out.put_uleb(r.time_unix_ns);
  out.put_string(r.exe_path.data(), written_len(r.exe_path, kMaxWrittenPath));
}

template <class Out>
void put_ext(Out &out, const ext::Sampler &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.backend);
  out.put_uleb(r.mode);
  out.put_uleb(r.interval_ns);
}

template <class Out>
void put_ext(Out &out, const ext::Thread &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.tid);
}

template <class Out>
void put_ext(Out &out, const ext::Weight &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.sample_weight);
}

template <class Out>
void put_ext(Out &out, const ext::UncleanEnd &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.time_ns);
  out.put_uleb(r.lost_bytes);
}

template <class Out>
void put_ext(Out &out, const ext::HeapTotal &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.time_ns);
  out.put_uleb(r.live_bytes);
}

// A skip record of `length` zero bytes (tests, tools). The agent writes
// skips over abandoned ring records with put_skip_header below.
template <class Out>
void put_ext(Out &out, const ext::Skip &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.length);
  for (uint64_t i = 0; i < r.length; i++) out.put_u8(0);
}

template <class Out, class Text>
void put_ext(Out &out, const ext::BasicVmFunction<Text> &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.start);
  out.put_uleb(r.size);
  out.put_string(r.name.data(), written_len(r.name, kMaxWrittenLabel));
}

template <class Out>
void put_ext(Out &out, const ext::VmState &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.vmstate);
}

template <class Out>
void put_ext(Out &out, const ext::TraceSample &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.traceno);
  out.put_uleb(r.addr);
  out.put_uleb(r.line);
}

template <class Out, class Text>
void put_ext(Out &out, const ext::BasicThreadName<Text> &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.tid);
  out.put_string(r.name.data(), written_len(r.name, kMaxThreadName));
}

template <class Out>
void put_ext(Out &out, const ext::EventThread &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.tid);
}

template <class Out>
void put_ext(Out &out, const ext::Attached &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.attach_number);
}

template <class Out>
void put_ext(Out &out, const ext::ObjectType &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.type);
}

template <class Out, class Text>
void put_ext(Out &out, const ext::BasicWorkingDir<Text> &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_string(r.path.data(), written_len(r.path, kMaxWrittenPath));
}

template <class Out>
void put_ext(Out &out, const ext::Site &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.id);
  out.put_u8(static_cast<uint8_t>(r.loc.source | (r.has_stacks ? kMemprofStacks : 0)));
  put_guest_loc(out, r.loc);
  if (r.has_stacks) {
    out.put_uleb(r.host_stack);
    out.put_uleb(r.guest_stack);
  }
  out.put_uleb(r.size);
  out.put_uleb(r.type);
}

template <class Out>
void put_ext(Out &out, const ext::AllocAt &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.site);
}

template <class Out>
void put_ext(Out &out, const ext::FreeOf &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.site);
  out.put_uleb(r.age_step);
}

template <class Out>
void put_ext(Out &out, const ext::FreeAt &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.free_site);
  out.put_uleb(r.site);
  out.put_uleb(r.age_step);
}

template <class Out>
void put_ext(Out &out, const ext::ReallocOf &r) {
  out.put_u8(ext_header(r.kKind));
  out.put_uleb(r.site);
  out.put_uleb(r.age_step);
  out.put_uleb(r.new_site);
}

// The start of skip records spanning exactly `total` bytes (total >= 2),
// whatever bytes follow it: at most 16 bytes to dst; returns how many.
size_t put_skip_header(uint8_t *dst, uint64_t total);

// Any decoded record, through its encoder above (tests, tools).
template <class Out>
void put_ext(Out &out, const ExtRecord &r) {
  std::visit([&out](const auto &x) { put_ext(out, x); }, r);
}

// Reads the body of an extension record whose header byte was `header`
// (read at offset `at`) in a section of `kind`. Rejects kinds unknown to
// this revision, and those the grammar gives only to the other section.
void read_ext(ByteReader &in, uint8_t header, uint64_t at, SectionKind kind, ExtRecord &out);

const char *ext_kind_name(ExtKind kind);
// The one section a kind belongs to (the grammar's "memprof only", "sysprof
// only"); Symtab for the kinds of both.
SectionKind ext_kind_section(ExtKind kind);
// An object-type's name ("table"), for type-id 1..kMaxObjectType.
const char *object_type_name(uint64_t type);

}  // namespace prof
