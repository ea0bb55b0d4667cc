// Section prologues: the 7 bytes that open every symtab, memprof and sysprof
// section, and how libprof marks its extended sections.
//
// prologue := magic version reserved
// magic    := 'l' 'j' ('s' | 'm' | 'p')
// version  := <BYTE>
// reserved := <BYTE> <BYTE> <BYTE>
//
// version: [XVVVVVVV]
//  * VVVVVVV: the upstream grammar version this section follows
//  * X      : 0 for a genuine LuaJIT section, 1 for a libprof extended one
// reserved: genuine sections write 0 0 0. An extended section writes its
// extension revision in the first reserved byte and 0 0 in the others.
//
// A reader accepts exactly the upstream versions and extension revisions it
// knows and rejects every other combination by name, never by guessing.
#pragma once

#include <cstdint>
#include <string>

#include "byte_reader.h"

namespace prof {

constexpr uint8_t kExtendedBit = 0x80;
constexpr uint8_t kSymtabVersion = 3;   // 'ljs'
constexpr uint8_t kMemprofVersion = 3;  // 'ljm'
constexpr uint8_t kSysprofVersion = 2;  // 'ljp'
constexpr uint8_t kExtRevision = 7;     // libprof extensions, see ext.h

enum class SectionKind : uint8_t { Symtab, Memprof, Sysprof };

struct Prologue {
  SectionKind kind;
  bool extended;         // X bit set
  uint8_t ext_revision;  // 0 unless extended
};

template <class Out>
void put_prologue(Out &out, SectionKind kind, bool extended) {
  static const char kLetter[] = {'s', 'm', 'p'};
  static const uint8_t kVersion[] = {kSymtabVersion, kMemprofVersion, kSysprofVersion};
  const uint8_t k = static_cast<uint8_t>(kind);
  const uint8_t bytes[7] = {'l', 'j', static_cast<uint8_t>(kLetter[k]),
                            static_cast<uint8_t>(kVersion[k] | (extended ? kExtendedBit : 0)),
                            static_cast<uint8_t>(extended ? kExtRevision : 0), 0, 0};
  out.put_bytes(bytes, sizeof bytes);
}

// Reads a prologue; `expected` restricts the section kind, or any of memprof
// and sysprof when `expected` is Memprof and `either_profile` is set.
Prologue read_prologue(ByteReader &in, SectionKind expected, bool either_profile = false);

const char *section_name(SectionKind kind);

}  // namespace prof
