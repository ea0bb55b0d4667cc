// Symbol table 'ljs' v3: the symbols that open every profile stream, and the
// symbol entries that memprof and sysprof carry in-stream.
//
// symtab         := prologue sym*
// prologue       := 'l' 'j' 's' version reserved          (see prologue.h)
// sym            := sym-lua | sym-cfunc | sym-trace | sym-final
// sym-lua        := sym-header sym-addr sym-chunk sym-line
// sym-cfunc      := sym-header sym-addr sym-name
// sym-trace      := sym-header trace-no sym-addr sym-line
// sym-header     := <BYTE>
// sym-addr       := <ULEB128>
// sym-chunk      := string
// sym-line       := <ULEB128>
// sym-name       := string
// sym-final      := sym-header
// trace-no       := <ULEB128>
// string         := string-len string-payload
// string-len     := <ULEB128>
// string-payload := <BYTE> {string-len}
//
// sym-header: [FUUUUUTT]
//  * TT    : symbol type (SYMTAB_LFUNC, SYMTAB_CFUNC, SYMTAB_TRACE)
//  * UUUUU : unused
//  * F     : 1 marks sym-final, the end of the symtab
//
// Meaning: sym-lua maps a Lua prototype address to its chunk name and first
// line; sym-cfunc maps a C symbol (or, as LuaJIT does, a loaded object's base
// address) to its name; sym-trace maps a JIT trace number to the prototype
// and line where it started. Trace type 3 is invalid.
//
// libprof writes at most kMaxWrittenName bytes of a name (sym-chunk,
// sym-name), in every stream: chunk names of load()ed strings can be whole
// source texts, and the agent encodes a symbol into a fixed buffer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "byte_reader.h"
#include "prologue.h"
#include "uleb128.h"

namespace prof {

constexpr uint8_t kSymLfunc = 0;
constexpr uint8_t kSymCfunc = 1;
constexpr uint8_t kSymTrace = 2;
constexpr uint8_t kSymFinal = 0x80;
constexpr uint8_t kSymTypeMask = 0x03;

// Chunk names may hold a whole source text (load() of a string).
constexpr size_t kMaxSymbolString = 16u << 20;
// What libprof's encoders write of a name, in every stream, and so the
// longest symbol record they write: header, sym-addr, string-len, that much
// of the name, sym-line.
constexpr size_t kMaxWrittenName = 400;
constexpr size_t kMaxSymbolRecordBytes = 1 + 4 * kUleb128Max + kMaxWrittenName;

// A symbol: Text is std::string when read, std::string_view when written
// (the agent encodes without allocating).
template <class Text>
struct BasicSymbol {
  uint8_t type = kSymLfunc;  // kSymLfunc, kSymCfunc or kSymTrace
  uint64_t addr = 0;         // prototype, C symbol or trace-start prototype
  uint64_t line = 0;         // first line (lfunc) or trace start line
  uint64_t traceno = 0;      // trace only
  Text name;                 // chunk name (lfunc) or symbol name (cfunc)
};
using Symbol = BasicSymbol<std::string>;
using SymbolView = BasicSymbol<std::string_view>;

// The body of a symbol after its header byte; shared with in-stream events.
template <class Out, class Text>
void put_symbol_body(Out &out, const BasicSymbol<Text> &s) {
  const size_t name_len = s.name.size() < kMaxWrittenName ? s.name.size() : kMaxWrittenName;
  switch (s.type) {
    case kSymLfunc:
      out.put_uleb(s.addr);
      out.put_string(s.name.data(), name_len);
      out.put_uleb(s.line);
      break;
    case kSymCfunc:
      out.put_uleb(s.addr);
      out.put_string(s.name.data(), name_len);
      break;
    case kSymTrace:
      out.put_uleb(s.traceno);
      out.put_uleb(s.addr);
      out.put_uleb(s.line);
      break;
  }
}

template <class Out, class Text>
void put_symtab_entry(Out &out, const BasicSymbol<Text> &s) {
  out.put_u8(s.type);
  put_symbol_body(out, s);
}

template <class Out>
void put_symtab_final(Out &out) {
  out.put_u8(kSymFinal);
}

// Reads the body of a symbol of the given type.
void read_symbol_body(ByteReader &in, uint8_t type, Symbol &out);

// Reads the symtab section that opens a stream, prologue first.
class SymtabReader {
 public:
  explicit SymtabReader(ByteReader &in);
  // Continues after a prologue the caller already read.
  SymtabReader(ByteReader &in, const Prologue &prologue);
  // Next symbol; false after sym-final.
  bool next(Symbol &out);
  bool extended() const { return extended_; }

 private:
  ByteReader &in_;
  bool extended_;
  bool done_ = false;
};

}  // namespace prof
