// Synthetic streams for the analyzer tests, written with format/'s encoders,
// with the figures they must give known by construction (see each comment).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memprof.h"
#include "sysprof.h"
#include "vec_out.h"

namespace analyzer_test {

using namespace prof;

// What opens a libprof memory stream: an empty symtab, the extended
// memprof prologue, the process record (ppid 1) and the sampling (every
// event recorded unless a mean is given).
inline void put_memory_opening(VecOut &o, uint64_t pid, const std::string &exe,
                               uint64_t sampling_mean = 0) {
  put_prologue(o, SectionKind::Symtab, false);
  put_symtab_final(o);
  put_prologue(o, SectionKind::Memprof, true);
  put_ext(o, ext::Process{pid, 1, 0, exe});
  put_ext(o, ext::Sampling{sampling_mean});
}

inline void put_time_mark(VecOut &o, uint64_t time_ns, uint64_t rss) {
  put_ext(o, ext::TimeMark{time_ns, rss, 0});
}

// The end of native_memory_stream() and its compact twin: the free of a
// pointer never seen allocated, a mapping (stack `map_stack`) partly
// unmapped, a time mark, a marker, the stats and the epilogue.
inline void put_native_tail(VecOut &o, uint64_t map_stack) {
  put_memprof_event(o, AllocEvent{kAeventFree, GuestLoc{}, false, 0, 0, 0xdead0, 0, 0, 0});
  put_ext(o, ext::Map{0x7000000, 0x10000, map_stack, 0});
  put_ext(o, ext::Unmap{0x7004000, 0x4000});
  put_time_mark(o, 2000000000, 2 << 20);
  put_ext(o, ext::Marker{1500000000, "phase 2"});
  put_ext(o, ext::Stats{{{"unwind_failures", 3}}});
  put_memprof_epilogue(o);
}

// A libprof memory stream of process `pid`. Host stacks (no modules, so
// frames are named by address): A = 0x1000;0x2000 and B = 0x1000;0x3000,
// their node ids offset by `id_base` (ids are per stream).
// Events, numbered from 1:
//   1-10  A allocates 10 x 100 B at 0x10000 + i * 0x100
//   11-15 B allocates 5 x 1000 B at 0x20000 + i * 0x1000
//         time mark 1 s, RSS 1 MiB: heap 6000 B, the peak (A 1000, B 5000)
//   16-24 A's first 9 blocks are freed (lifetime 15 events each)
//   25-26 A allocates 100 B at 0x90000, freed at once (temporary, lifetime 1)
//   -- *cut_at: the stream's length before event 27 --
//   27    A's last block is freed (lifetime 17)
//   28    B reallocates 0x20000 (lifetime 17) to 300 B at 0x50000
//   29    a free of 0xdead0, never allocated
//         map 64 KiB at 0x7000000 by B, unmap its middle 16 KiB at 0x7004000
//         time mark 2 s, RSS 2 MiB: heap 4300 B; marker "phase 2" at 1.5 s;
//         stats unwind_failures = 3
// Totals: 16 allocations, 1 reallocation, 12 frees, 1 unknown; leaked
// 4 x 1000 + 300 = 4300 B in 5 blocks, all B's; sizes 100 B x 11, 1000 B x 5,
// 300 B x 1; mmap: 48 KiB still mapped, peak 64 KiB.
inline std::vector<uint8_t> native_memory_stream(uint64_t pid = 42, uint64_t id_base = 0,
                                                 size_t *cut_at = nullptr) {
  VecOut o;
  put_memory_opening(o, pid, "/bin/x");
  const uint64_t root = id_base + 1, a = id_base + 2, b = id_base + 3;
  put_ext(o, ext::StackHost{root, 0, 0x1000});
  put_ext(o, ext::StackHost{a, root, 0x2000});
  put_ext(o, ext::StackHost{b, root, 0x3000});
  const GuestLoc none{};
  for (uint64_t i = 0; i < 10; i++)
    put_memprof_event(o,
                      AllocEvent{kAeventAlloc, none, true, a, 0, 0, 0, 0x10000 + i * 0x100, 100});
  for (uint64_t i = 0; i < 5; i++)
    put_memprof_event(o,
                      AllocEvent{kAeventAlloc, none, true, b, 0, 0, 0, 0x20000 + i * 0x1000, 1000});
  put_time_mark(o, 1000000000, 1 << 20);
  for (uint64_t i = 0; i < 9; i++)
    put_memprof_event(o, AllocEvent{kAeventFree, none, false, 0, 0, 0x10000 + i * 0x100, 0, 0, 0});
  put_memprof_event(o, AllocEvent{kAeventAlloc, none, true, a, 0, 0, 0, 0x90000, 100});
  put_memprof_event(o, AllocEvent{kAeventFree, none, false, 0, 0, 0x90000, 0, 0, 0});
  if (cut_at) *cut_at = o.b.size();
  put_memprof_event(o, AllocEvent{kAeventFree, none, false, 0, 0, 0x10000 + 9 * 0x100, 0, 0, 0});
  put_memprof_event(o, AllocEvent{kAeventRealloc, none, true, b, 0, 0x20000, 0, 0x50000, 300});
  put_native_tail(o, b);
  return o.b;
}

// native_memory_stream()'s twin as libprof's agent compacts it (ext.h's
// compact events): the same events, the allocations as sites 1 (stack a,
// 100 B), 2 (stack b, 1000 B) and 3 (stack b, 300 B), the releases by age;
// the free of a pointer never seen allocated keeps its address.
inline std::vector<uint8_t> native_compact_stream() {
  VecOut o;
  put_memory_opening(o, 42, "/bin/x");
  put_ext(o, ext::StackHost{1, 0, 0x1000});
  put_ext(o, ext::StackHost{2, 1, 0x2000});
  put_ext(o, ext::StackHost{3, 1, 0x3000});
  const GuestLoc none{};
  put_ext(o, ext::Site{1, none, true, 2, 0, 100, 0});
  for (int i = 0; i < 10; i++) put_ext(o, ext::AllocAt{1});
  put_ext(o, ext::Site{2, none, true, 3, 0, 1000, 0});
  for (int i = 0; i < 5; i++) put_ext(o, ext::AllocAt{2});
  put_time_mark(o, 1000000000, 1 << 20);
  // Site 1's blocks 0 to 8, oldest first: ages 9, 8, ..., 1.
  put_ext(o, ext::FreeOf{1, zigzag(9)});
  for (int i = 1; i < 9; i++) put_ext(o, ext::FreeOf{1, zigzag(-1)});
  put_ext(o, ext::AllocAt{1});
  put_ext(o, ext::FreeOf{1, zigzag(-1)});  // block 10, age 0
  put_ext(o, ext::FreeOf{1, zigzag(1)});   // block 9, age 1
  put_ext(o, ext::Site{3, none, true, 3, 0, 300, 0});
  put_ext(o, ext::ReallocOf{2, zigzag(4), 3});  // site 2's block 0, age 4
  put_native_tail(o, 3);
  return o.b;
}

// A libprof CPU stream: a symtab naming Lua prototype 0x500 "@g.lua"; the
// sampler (perf task-clock, CALLGRAPH, 1 ms); on thread 7 a NATIVE sample
// with host stack 0x1000;0x2000;0x3000 (root first), then the same stack
// with weight 3; on thread 8 an LFUNC sample, guest @g.lua line 9 over host
// 0x1000. So: 5 samples, NATIVE 4 and LFUNC 1; thread 7 4, thread 8 1.
inline std::vector<uint8_t> native_cpu_stream() {
  VecOut o;
  put_prologue(o, SectionKind::Symtab, false);
  Symbol lua;
  lua.type = kSymLfunc;
  lua.addr = 0x500;
  lua.name = "@g.lua";
  lua.line = 1;
  put_symtab_entry(o, lua);
  put_symtab_final(o);
  put_prologue(o, SectionKind::Sysprof, true);
  put_ext(o, ext::Process{77, 1, 0, "/bin/y"});
  put_ext(o, ext::Sampler{1, 2, 1000000});
  SysprofSample s;
  s.vmstate = kVmstNative;
  s.host = {0x3000, 0x2000, 0x1000};
  put_ext(o, ext::Thread{7});
  put_sysprof_sample(o, s);
  put_ext(o, ext::Weight{3});
  put_sysprof_sample(o, s);
  put_ext(o, ext::Thread{8});
  s.vmstate = kVmstLfunc;
  s.guest = {GuestFrame{kFrameLfunc, 0x500, 9}};
  s.host = {0x1000};
  put_sysprof_sample(o, s);
  put_sysprof_epilogue(o);
  return o.b;
}

}  // namespace analyzer_test
