// Hostile but valid streams for the analyzer's resource tests, written with
// format/'s encoders: small files whose naive reading costs far more memory
// or time than they hold. What each holds is known by construction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ext.h"
#include "memprof.h"
#include "sysprof.h"
#include "vec_out.h"

namespace hostile_test {

using namespace prof;

inline void begin_memory_stream(VecOut &o) {
  put_prologue(o, SectionKind::Symtab, false);
  put_symtab_final(o);
  put_prologue(o, SectionKind::Memprof, true);
  put_ext(o, ext::Process{1, 0, 0, "/bin/x"});
}

inline void put_alloc(VecOut &o, uint64_t host_stack, uint64_t addr, uint64_t size) {
  put_memprof_event(o, AllocEvent{kAeventAlloc, GuestLoc{}, true, host_stack, 0, 0, 0, addr, size});
}

inline void put_free(VecOut &o, uint64_t addr) {
  put_memprof_event(o, AllocEvent{kAeventFree, GuestLoc{}, false, 0, 0, addr, 0, 0, 0});
}

// `copies` module-load records of the ELF file `path` (covering [0, size)),
// each at its own base, and one stack per copy with the frame `offset` in
// it, each allocating 1 byte once: `copies` distinct stacks, one file.
inline std::vector<uint8_t> same_module_stream(const std::string &path, uint64_t size,
                                               uint64_t offset, uint64_t copies) {
  VecOut o;
  begin_memory_stream(o);
  for (uint64_t i = 0; i < copies; i++) {
    const uint64_t base = (i + 1) << 36;
    put_ext(o, ext::ModuleLoadView{base, size, path, ""});
    put_ext(o, ext::StackHost{i + 1, 0, base + offset + 1});  // a return address: the call is before it
    put_alloc(o, i + 1, 0x1000 * (i + 1), 1);
  }
  put_memprof_epilogue(o);
  return o.b;
}

// A chain of `depth` host frames (ips 0x1000 + 16 * level, node ids 1 to
// depth) and `leaves` leaves under its innermost node (ips 0x100000 + 16 * i),
// each allocating `size` bytes once: `leaves` stacks of depth + 1 frames
// sharing depth of them.
inline std::vector<uint8_t> deep_chain_stream(uint64_t depth, uint64_t leaves, uint64_t size = 1) {
  VecOut o;
  begin_memory_stream(o);
  for (uint64_t level = 1; level <= depth; level++)
    put_ext(o, ext::StackHost{level, level - 1, 0x1000 + 16 * level});
  for (uint64_t i = 0; i < leaves; i++) {
    const uint64_t id = depth + 1 + i;
    put_ext(o, ext::StackHost{id, depth, 0x100000 + 16 * i});
    put_alloc(o, id, 0x10000000 + 16 * i, size);
  }
  put_memprof_epilogue(o);
  return o.b;
}

// `count` stacks of two frames: a shared root (ip 0x1000, node 1) and a leaf
// of its own (node i + 2, ip 0x100000 + 16 * i), each allocating 16 bytes,
// freed at once (so the live heap stays empty): `count` distinct stacks,
// count + 1 nodes.
inline std::vector<uint8_t> distinct_stacks_stream(uint64_t count) {
  VecOut o;
  begin_memory_stream(o);
  put_ext(o, ext::StackHost{1, 0, 0x1000});
  for (uint64_t i = 0; i < count; i++) {
    put_ext(o, ext::StackHost{i + 2, 1, 0x100000 + 16 * i});
    put_alloc(o, i + 2, 0x10000, 16);
    put_free(o, 0x10000);
  }
  put_memprof_epilogue(o);
  return o.b;
}

// A stream that breaks a rule of the stack table or of sizes at one record:
// `build` writes the records, setting *bad_at to the offset of the one the
// analyzer must refuse.
struct CraftedStream {
  const char *what;
  const char *reason;  // the analyzer's words after "corrupt at byte N: "
  void (*build)(VecOut &o, uint64_t *bad_at);
};

inline const std::vector<CraftedStream> &crafted_streams() {
  static const std::vector<CraftedStream> kStreams = {
      {"a node that names itself as its parent", "stack node 2 is its own parent",
       [](VecOut &o, uint64_t *bad_at) {
         put_ext(o, ext::StackHost{1, 0, 0x1000});
         *bad_at = o.b.size();
         put_ext(o, ext::StackHost{2, 2, 0x2000});
         put_alloc(o, 2, 0x10000, 16);
       }},
      {"a cycle of two nodes, each the other's parent",
       "stack node 1: its parent 2 is not defined before it",
       [](VecOut &o, uint64_t *bad_at) {
         *bad_at = o.b.size();
         put_ext(o, ext::StackHost{1, 2, 0x1000});
         put_ext(o, ext::StackHost{2, 1, 0x2000});
         put_alloc(o, 2, 0x10000, 16);
       }},
      {"a node id defined twice (the second would take over the first's events)",
       "stack node 2 defined twice",
       [](VecOut &o, uint64_t *bad_at) {
         put_ext(o, ext::StackHost{1, 0, 0x1000});
         put_ext(o, ext::StackHost{2, 1, 0x2000});
         put_alloc(o, 2, 0x10000, 16);
         *bad_at = o.b.size();
         put_ext(o, ext::StackHost{2, 0, 0x3000});
         put_alloc(o, 2, 0x20000, 32);
       }},
      {"an event naming a stack not defined yet", "host stack 2 not defined",
       [](VecOut &o, uint64_t *bad_at) {
         put_ext(o, ext::StackHost{1, 0, 0x1000});
         *bad_at = o.b.size();
         put_alloc(o, 2, 0x10000, 16);
         put_ext(o, ext::StackHost{2, 1, 0x2000});
       }},
      {"a map record naming a stack not defined yet", "host stack 7 not defined",
       [](VecOut &o, uint64_t *bad_at) {
         *bad_at = o.b.size();
         put_ext(o, ext::Map{0x7000000, 0x1000, 7, 0});
       }},
      {"a host node under a guest node",
       "stack node 2: a host node under the guest node 1",
       [](VecOut &o, uint64_t *bad_at) {
         put_ext(o, ext::StackGuest{1, 0, kFrameLfunc, 0x500, 3});
         *bad_at = o.b.size();
         put_ext(o, ext::StackHost{2, 1, 0x1000});
       }},
      {"a chain deeper than the format allows", "stack node 4097 is deeper than 4096 frames",
       [](VecOut &o, uint64_t *bad_at) {
         for (uint64_t id = 1; id <= 4096; id++) put_ext(o, ext::StackHost{id, id - 1, 0x1000 + id});
         *bad_at = o.b.size();
         put_ext(o, ext::StackHost{4097, 4096, 0x9000});
       }},
      {"an allocation of 2^63 bytes", "a block of 9223372036854775808 bytes (no address space "
                                      "holds 2^57)",
       [](VecOut &o, uint64_t *bad_at) {
         put_ext(o, ext::StackHost{1, 0, 0x1000});
         put_alloc(o, 1, 0x10000, 16);
         *bad_at = o.b.size();
         put_alloc(o, 1, 0x20000, uint64_t(1) << 63);
       }},
      {"two allocations of 2^63 - 1 bytes, whose sum overflows",
       "a block of 9223372036854775807 bytes (no address space holds 2^57)",
       [](VecOut &o, uint64_t *bad_at) {
         put_ext(o, ext::StackHost{1, 0, 0x1000});
         *bad_at = o.b.size();
         put_alloc(o, 1, 0x10000, (uint64_t(1) << 63) - 1);
         put_alloc(o, 1, 0x20000, (uint64_t(1) << 63) - 1);
       }},
      {"an object type the format does not define", "object-type record with unknown type 10",
       [](VecOut &o, uint64_t *bad_at) {
         put_ext(o, ext::StackHost{1, 0, 0x1000});
         *bad_at = o.b.size() + 1;  // the type, after the record's header
         put_ext(o, ext::ObjectType{10});
         put_alloc(o, 1, 0x10000, 16);
       }},
      {"a compact allocation at a site never defined", "undefined site 1",
       [](VecOut &o, uint64_t *bad_at) {
         *bad_at = o.b.size();
         put_ext(o, ext::AllocAt{1});
       }},
      {"a site defined out of order", "site 2 out of order (expected 1)",
       [](VecOut &o, uint64_t *bad_at) {
         *bad_at = o.b.size();
         put_ext(o, ext::Site{2, GuestLoc{}, false, 0, 0, 16, 0});
       }},
      {"a release of a block its site never made", "a release of a block site 1 never made",
       [](VecOut &o, uint64_t *bad_at) {
         put_ext(o, ext::Site{1, GuestLoc{}, false, 0, 0, 16, 0});
         put_ext(o, ext::AllocAt{1});
         *bad_at = o.b.size();
         put_ext(o, ext::FreeOf{1, zigzag(1)});  // age 1 of a site with one block
       }},
      {"a free located at a site never defined", "undefined site 5",
       [](VecOut &o, uint64_t *bad_at) {
         put_ext(o, ext::Site{1, GuestLoc{}, false, 0, 0, 16, 0});
         put_ext(o, ext::AllocAt{1});
         *bad_at = o.b.size();
         put_ext(o, ext::FreeAt{5, 1, 0});
       }},
      {"a site with an object type the format does not define",
       "site with unknown object type 10",
       [](VecOut &o, uint64_t *bad_at) {
         *bad_at = o.b.size() + 4;  // header, id, head, size, then the type
         put_ext(o, ext::Site{1, GuestLoc{}, false, 0, 0, 16, 10});
       }},
      {"a site naming a stack not defined yet", "host stack 7 not defined",
       [](VecOut &o, uint64_t *bad_at) {
         put_ext(o, ext::Site{1, GuestLoc{}, true, 7, 0, 16, 0});
         *bad_at = o.b.size();
         put_ext(o, ext::AllocAt{1});
       }},
  };
  return kStreams;
}

inline std::vector<uint8_t> crafted_stream(const CraftedStream &c, uint64_t *bad_at) {
  VecOut o;
  begin_memory_stream(o);
  c.build(o, bad_at);
  put_memprof_epilogue(o);
  return o.b;
}

}  // namespace hostile_test
