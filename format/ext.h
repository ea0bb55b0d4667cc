// libprof extension records: what an extended memprof or sysprof section (the
// X bit of prologue.h) carries beyond the LuaJIT grammar. Extension revision 1.
//
// ext-record     := ext-header ext-body
// ext-header     := <BYTE>                   [01KKKKKK], KKKKKK = ext kind
// ext-body       := stack-host | stack-guest | module-load | module-unload |
//                   time-mark | sampling | marker | stats | map | unmap |
//                   process | sampler | thread | weight | skip
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
// skip           := length <BYTE>{length}                        (kind 15)
// node-id, parent-id, ip, frame-type, frame-addr, line, base, size, time-ns,
// rss-bytes, heap-bytes, mean-bytes, count, stat-value, addr, length,
// host-stack-id, guest-stack-id, pid, ppid, time-unix-ns, backend, mode,
// interval-ns, tid, sample-weight := <ULEB128>
// path, build-id, label, stat-name, exe-path := string (as in symtab.h)
//
// Meaning:
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
// - skip (revision 2): `length` bytes that carry nothing, where a record
//   was reserved but never written (its thread left the writer by longjmp);
//   the stats say how many. Readers pass over them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "byte_reader.h"

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
  Skip = 15,
};
constexpr uint8_t kExtKindMax = 15;

constexpr size_t kMaxExtStats = 256;
constexpr size_t kMaxExtString = 1u << 16;  // paths, labels, build-ids, skips

// One decoded extension record. Fields not named by the kind stay zero/empty.
struct ExtRecord {
  ExtKind kind = ExtKind::StackHost;
  uint64_t id = 0;        // stack node id (StackHost, StackGuest)
  uint64_t parent = 0;    // stack node parent id
  uint64_t addr = 0;      // ip, frame-addr, base, map addr
  uint64_t size = 0;      // module size, map length
  uint64_t line = 0;      // guest line
  uint64_t frame_type = 0;
  uint64_t time_ns = 0;   // TimeMark, Marker, Process (unix ns)
  uint64_t value = 0;     // rss (TimeMark), mean (Sampling), tid, weight, pid
  uint64_t value2 = 0;    // heap bytes (TimeMark), ppid, sampler mode
  uint64_t value3 = 0;    // sampler interval-ns
  uint64_t host_stack = 0, guest_stack = 0;  // Map
  std::string text;       // path, label, exe-path
  std::string build_id;   // raw bytes
  std::vector<std::pair<std::string, uint64_t>> stats;
};

// Encoders for the hot kinds take plain values so the agent needs no ExtRecord.
template <class Out>
void put_stack_host(Out &out, uint64_t id, uint64_t parent, uint64_t ip) {
  out.put_u8(kExtFlag | uint8_t(ExtKind::StackHost));
  out.put_uleb(id);
  out.put_uleb(parent);
  out.put_uleb(ip);
}

template <class Out>
void put_stack_guest(Out &out, uint64_t id, uint64_t parent, uint64_t frame_type,
                     uint64_t frame_addr, uint64_t line) {
  out.put_u8(kExtFlag | uint8_t(ExtKind::StackGuest));
  out.put_uleb(id);
  out.put_uleb(parent);
  out.put_uleb(frame_type);
  out.put_uleb(frame_addr);
  out.put_uleb(line);
}

template <class Out>
void put_module_load(Out &out, uint64_t base, uint64_t size, const char *path, size_t path_len,
                     const void *build_id, size_t build_id_len) {
  out.put_u8(kExtFlag | uint8_t(ExtKind::ModuleLoad));
  out.put_uleb(base);
  out.put_uleb(size);
  out.put_string(path, path_len);
  out.put_string(static_cast<const char *>(build_id), build_id_len);
}

// Records whose bodies are one to three integers.
template <class Out>
void put_ext_values(Out &out, ExtKind kind, uint64_t a) {
  out.put_u8(kExtFlag | uint8_t(kind));
  out.put_uleb(a);
}
template <class Out>
void put_ext_values(Out &out, ExtKind kind, uint64_t a, uint64_t b) {
  put_ext_values(out, kind, a);
  out.put_uleb(b);
}
template <class Out>
void put_ext_values(Out &out, ExtKind kind, uint64_t a, uint64_t b, uint64_t c) {
  put_ext_values(out, kind, a, b);
  out.put_uleb(c);
}

template <class Out>
void put_marker(Out &out, uint64_t time_ns, const char *label, size_t len) {
  put_ext_values(out, ExtKind::Marker, time_ns);
  out.put_string(label, len);
}

template <class Out>
void put_process(Out &out, uint64_t pid, uint64_t ppid, uint64_t time_unix_ns, const char *exe,
                 size_t len) {
  put_ext_values(out, ExtKind::Process, pid, ppid, time_unix_ns);
  out.put_string(exe, len);
}

template <class Out>
void put_map(Out &out, uint64_t addr, uint64_t len, uint64_t host_stack, uint64_t guest_stack) {
  put_ext_values(out, ExtKind::Map, addr, len, host_stack);
  out.put_uleb(guest_stack);
}

// A stats record is its count, then that many put_stat() calls.
template <class Out>
void put_stats_header(Out &out, size_t count) {
  put_ext_values(out, ExtKind::Stats, count);
}
template <class Out>
void put_stat(Out &out, const char *name, size_t len, uint64_t value) {
  out.put_string(name, len);
  out.put_uleb(value);
}

// The start of skip records spanning exactly `total` bytes (total >= 2),
// whatever bytes follow it: at most 16 bytes to dst; returns how many.
size_t put_skip_header(uint8_t *dst, uint64_t total);

// Encodes any record from its decoded form (tests, tools).
template <class Out>
void put_ext(Out &out, const ExtRecord &r) {
  switch (r.kind) {
    case ExtKind::StackHost:
      put_stack_host(out, r.id, r.parent, r.addr);
      break;
    case ExtKind::StackGuest:
      put_stack_guest(out, r.id, r.parent, r.frame_type, r.addr, r.line);
      break;
    case ExtKind::ModuleLoad:
      put_module_load(out, r.addr, r.size, r.text.data(), r.text.size(), r.build_id.data(),
                      r.build_id.size());
      break;
    case ExtKind::ModuleUnload:
      put_ext_values(out, r.kind, r.addr);
      break;
    case ExtKind::TimeMark:
      put_ext_values(out, r.kind, r.time_ns, r.value, r.value2);
      break;
    case ExtKind::Sampling:
    case ExtKind::Thread:
    case ExtKind::Weight:
      put_ext_values(out, r.kind, r.value);
      break;
    case ExtKind::Marker:
      put_marker(out, r.time_ns, r.text.data(), r.text.size());
      break;
    case ExtKind::Stats:
      put_stats_header(out, r.stats.size());
      for (const auto &st : r.stats) put_stat(out, st.first.data(), st.first.size(), st.second);
      break;
    case ExtKind::Map:
      put_map(out, r.addr, r.size, r.host_stack, r.guest_stack);
      break;
    case ExtKind::Unmap:
      put_ext_values(out, r.kind, r.addr, r.size);
      break;
    case ExtKind::Process:
      put_process(out, r.value, r.value2, r.time_ns, r.text.data(), r.text.size());
      break;
    case ExtKind::Sampler:
      put_ext_values(out, r.kind, r.value, r.value2, r.value3);
      break;
    case ExtKind::Skip:
      out.put_u8(kExtFlag | uint8_t(r.kind));
      out.put_uleb(r.size);
      for (uint64_t i = 0; i < r.size; i++) out.put_u8(0);
      break;
  }
}

// Reads the body of an extension record whose header byte was `header`
// (read at offset `at`). Rejects kinds unknown to this revision.
void read_ext(ByteReader &in, uint8_t header, uint64_t at, ExtRecord &out);

const char *ext_kind_name(ExtKind kind);

}  // namespace prof
