// Sampling profile 'ljp' v2: CPU samples with guest and host stacks, as
// LuaJIT's sysprof writes them and as libprof extends them.
//
// stream          := symtab sysprof                      (symtab.h)
// sysprof         := prologue sample* epilogue
// prologue        := 'l' 'j' 'p' version reserved        (prologue.h)
// sample          := sample-guest | sample-host | sample-trace | sample-symtab |
//                    ext-record                          (ext-record: extended only)
// sample-guest    := sample-header stack-lua stack-host  (vmstate LFUNC, FFUNC, CFUNC)
// sample-host     := sample-header stack-host            (INTERP, GC, EXIT, RECORD,
//                                                         OPT, ASM; extended: NATIVE)
// sample-trace    := sample-header traceno sym-addr line-no   (TRACE)
// sample-symtab   := sample-header sym                   (symtab.h bodies; header
//                                                         10 lfunc, 11 cfunc, 12 trace)
// sample-header   := <BYTE>
// stack-lua       := frame-lua* frame-lua-last
// stack-host      := frame-host* frame-host-last
// frame-lua       := frame-lfunc | frame-cfunc | frame-ffunc
// frame-lfunc     := frame-header sym-addr line-no
// frame-cfunc     := frame-header exec-addr
// frame-ffunc     := frame-header ffid
// frame-lua-last  := frame-header                        (= 0x80)
// frame-header    := <BYTE>
// frame-host      := exec-addr                           (non-zero)
// frame-host-last := <ULEB128>                           (= 0)
// line-no, traceno, ffid, sym-addr, exec-addr := <ULEB128>
// epilogue        := sample-header                       (= 0x80)
//
// sample-header: [FXUUEEEE]
//  * EEEE: vmstate (LJ_VMST_*: 0 INTERP, 1 LFUNC, 2 FFUNC, 3 CFUNC, 4 GC,
//          5 EXIT, 6 RECORD, 7 OPT, 8 ASM, 9 TRACE), 10-12 symtab events;
//          extended only: 13 NATIVE, a program with no guest VM registered
//  * X   : extended only: 1 makes the byte an ext-header (ext.h)
//  * F   : 1 for the epilogue
// frame-header: [FUUUUUEE]: EE 1 Lua function, 2 C function, 3 fast
// function; F alone (0x80) ends stack-lua.
//
// Stacks are innermost frame first. LuaJIT's frame-lfunc line-no is the
// function's first line; libprof's guest adapters write the current line.
#pragma once

#include <cstdint>
#include <vector>

#include "byte_reader.h"
#include "ext.h"
#include "prologue.h"
#include "span.h"
#include "symtab.h"
#include "uleb128.h"

namespace prof {

enum VmState : uint8_t {
  kVmstInterp = 0, kVmstLfunc = 1, kVmstFfunc = 2, kVmstCfunc = 3, kVmstGc = 4,
  kVmstExit = 5, kVmstRecord = 6, kVmstOpt = 7, kVmstAsm = 8, kVmstTrace = 9,
  kVmstNative = 13,
};
constexpr uint8_t kVmstCount = 14;  // counters are indexed by vmstate
constexpr uint8_t kSysprofSymLfunc = 10;
constexpr uint8_t kSysprofSymCfunc = 11;
constexpr uint8_t kSysprofSymTrace = 12;
constexpr uint8_t kSysprofEpilogue = 0x80;

constexpr uint8_t kFrameLfunc = 1;
constexpr uint8_t kFrameCfunc = 2;
constexpr uint8_t kFrameFfunc = 3;
constexpr uint8_t kFrameLuaLast = 0x80;
// A guest C frame at this address stands for the outermost frames of a guest
// stack cut at its depth limit (libprof.h's PROF_GUEST_CUT_ADDR): it stays at
// the root end of the guest frames, not where native code runs.
constexpr uint64_t kGuestCutAddr = ~uint64_t(0);
// Whether a guest frame is native code called from the guest.
inline bool calls_native(uint8_t frame_type, uint64_t addr) {
  return frame_type == kFrameCfunc && addr != kGuestCutAddr;
}
// Whether a guest frame is the cut frame.
inline bool is_guest_cut(uint8_t frame_type, uint64_t addr) {
  return frame_type == kFrameCfunc && addr == kGuestCutAddr;
}

// Bounds a reader enforces so a hostile stream cannot grow memory.
constexpr size_t kMaxSampleFrames = 4096;

const char *vmstate_name(uint8_t vmstate);

struct GuestFrame {
  uint8_t type = kFrameLfunc;
  uint64_t addr = 0;  // prototype, C function or ffid
  uint64_t line = 0;
};

enum class SysprofRecord : uint8_t { Sample, Symbol, Ext };

struct SysprofSample {
  SysprofRecord record = SysprofRecord::Sample;
  uint64_t offset = 0;
  uint8_t vmstate = 0;
  std::vector<GuestFrame> guest;  // innermost first
  std::vector<uint64_t> host;     // innermost first
  uint64_t traceno = 0, trace_addr = 0, trace_line = 0;
  Symbol symbol;
  ExtRecord ext;
};

// True for the vmstates whose samples carry stack-lua.
inline bool vmstate_has_guest(uint8_t vmstate) {
  return vmstate == kVmstLfunc || vmstate == kVmstFfunc || vmstate == kVmstCfunc;
}

// The longest sample-guest or sample-host with these many frames: header,
// frame-lfuncs, frame-lua-last, frame-hosts, frame-host-last.
constexpr size_t max_sample_bytes(size_t guest_frames, size_t host_frames) {
  return 1 + guest_frames * (1 + 2 * kUleb128Max) + 1 + host_frames * kUleb128Max + 1;
}

// A sample-guest or sample-host (vmstate other than TRACE), innermost frame
// first. Guest frames are written only for the vmstates that carry
// stack-lua; frames the grammar has no room for (a guest frame of another
// type, a host frame 0) are left out. Frame: anything with type, addr and
// line (GuestFrame, the agent's prof_guest_frame).
// XXX: inline: the signal handler encodes every sample with it.
template <class Out, class Frame>
inline void put_sysprof_stacks(Out &out, uint8_t vmstate, Span<Frame> guest, Span<uint64_t> host) {
  out.put_u8(vmstate);
  if (vmstate_has_guest(vmstate)) {
    for (const Frame &f : guest) {
      if (f.type < kFrameLfunc || f.type > kFrameFfunc) continue;
      out.put_u8(f.type);
      out.put_uleb(f.addr);
      if (f.type == kFrameLfunc) out.put_uleb(f.line);
    }
    out.put_u8(kFrameLuaLast);
  }
  for (uint64_t ip : host)
    if (ip != 0) out.put_uleb(ip);
  out.put_uleb(0);
}

// A sample-trace: JIT trace traceno, started in prototype proto_addr at line.
template <class Out>
void put_sysprof_trace(Out &out, uint64_t traceno, uint64_t proto_addr, uint64_t line) {
  out.put_u8(kVmstTrace);
  out.put_uleb(traceno);
  out.put_uleb(proto_addr);
  out.put_uleb(line);
}

// A decoded sample, through the encoder of its kind (tests, tools).
template <class Out>
void put_sysprof_sample(Out &out, const SysprofSample &s) {
  if (s.vmstate == kVmstTrace)
    put_sysprof_trace(out, s.traceno, s.trace_addr, s.trace_line);
  else
    put_sysprof_stacks(out, s.vmstate, Span<GuestFrame>(s.guest.data(), s.guest.size()),
                       Span<uint64_t>(s.host.data(), s.host.size()));
}

// A sample-symtab; names are cut as symtab.h says.
template <class Out, class Text>
void put_sysprof_symbol(Out &out, const BasicSymbol<Text> &s) {
  out.put_u8(static_cast<uint8_t>(kSysprofSymLfunc + s.type));
  put_symbol_body(out, s);
}

template <class Out>
void put_sysprof_epilogue(Out &out) {
  out.put_u8(kSysprofEpilogue);
}

// Reads the sysprof section that follows the symtab, prologue first.
class SysprofReader {
 public:
  explicit SysprofReader(ByteReader &in);
  // Continues after a prologue the caller already read (auto-detection).
  SysprofReader(ByteReader &in, const Prologue &prologue);
  // Next record; false after the epilogue. Frame vectors keep their capacity.
  bool next(SysprofSample &out);
  bool extended() const { return extended_; }

 private:
  ByteReader &in_;
  bool extended_;
  bool done_ = false;
};

}  // namespace prof
