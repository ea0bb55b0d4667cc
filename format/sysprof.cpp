#include "sysprof.h"

#include "prologue.h"

namespace prof {

const char *vmstate_name(uint8_t vmstate) {
  static const char *const kNames[kVmstCount] = {
      "INTERP", "LFUNC", "FFUNC", "CFUNC", "GC",  "EXIT", "RECORD",
      "OPT",    "ASM",   "TRACE", "?",     "?",   "?",    "NATIVE"};
  return vmstate < kVmstCount ? kNames[vmstate] : "?";
}

SysprofReader::SysprofReader(ByteReader &in)
    : SysprofReader(in, read_prologue(in, SectionKind::Sysprof)) {}

SysprofReader::SysprofReader(ByteReader &in, const Prologue &prologue)
    : in_(in), extended_(prologue.extended) {}

bool SysprofReader::next(SysprofSample &s) {
  if (done_) return false;
  const uint64_t at = in_.offset();
  const uint8_t header = in_.u8();
  s.offset = at;
  if (header & kSysprofEpilogue) {
    done_ = true;
    return false;
  }
  if (header & kExtFlag) {
    if (!extended_) in_.fail(at, "bad sample header " + hex_byte(header));
    s.record = SysprofRecord::Ext;
    read_ext(in_, header, at, SectionKind::Sysprof, s.ext);
    return true;
  }
  if (header >= kSysprofSymLfunc && header <= kSysprofSymTrace) {
    s.record = SysprofRecord::Symbol;
    read_symbol_body(in_, header - kSysprofSymLfunc, s.symbol);
    return true;
  }
  if (header > kVmstTrace && !(extended_ && header == kVmstNative))
    in_.fail(at, "bad sample header " + hex_byte(header));

  s.record = SysprofRecord::Sample;
  s.vmstate = header;
  s.guest.clear();
  s.host.clear();
  s.traceno = s.trace_addr = s.trace_line = 0;
  if (header == kVmstTrace) {
    s.traceno = in_.uleb();
    s.trace_addr = in_.uleb();
    s.trace_line = in_.uleb();
    return true;
  }
  if (vmstate_has_guest(header)) {
    for (;;) {
      const uint64_t frame_at = in_.offset();
      const uint8_t fh = in_.u8();
      if (fh == kFrameLuaLast) break;
      if (fh < kFrameLfunc || fh > kFrameFfunc)
        in_.fail(frame_at, "bad guest frame header " + hex_byte(fh));
      if (s.guest.size() == kMaxSampleFrames)
        in_.fail(frame_at, "guest stack deeper than " + std::to_string(kMaxSampleFrames));
      GuestFrame f;
      f.type = fh;
      f.addr = in_.uleb();
      f.line = fh == kFrameLfunc ? in_.uleb() : 0;
      s.guest.push_back(f);
    }
  }
  for (;;) {
    const uint64_t frame_at = in_.offset();
    const uint64_t ip = in_.uleb();
    if (ip == 0) break;
    if (s.host.size() == kMaxSampleFrames)
      in_.fail(frame_at, "host stack deeper than " + std::to_string(kMaxSampleFrames));
    s.host.push_back(ip);
  }
  return true;
}

}  // namespace prof
