#include "symtab.h"

#include "prologue.h"

namespace prof {

void read_symbol_body(ByteReader &in, uint8_t type, Symbol &out) {
  out.type = type;
  out.traceno = 0;
  out.line = 0;
  out.name.clear();
  switch (type) {
    case kSymLfunc:
      out.addr = in.uleb();
      in.string(out.name, kMaxSymbolString);
      out.line = in.uleb();
      return;
    case kSymCfunc:
      out.addr = in.uleb();
      in.string(out.name, kMaxSymbolString);
      return;
    case kSymTrace:
      out.traceno = in.uleb();
      out.addr = in.uleb();
      out.line = in.uleb();
      return;
  }
  in.fail(in.offset(), "unknown symbol type " + std::to_string(type));
}

SymtabReader::SymtabReader(ByteReader &in)
    : SymtabReader(in, read_prologue(in, SectionKind::Symtab)) {}

SymtabReader::SymtabReader(ByteReader &in, const Prologue &prologue)
    : in_(in), extended_(prologue.extended) {}

bool SymtabReader::next(Symbol &out) {
  if (done_) return false;
  const uint64_t at = in_.offset();
  const uint8_t header = in_.u8();
  if (header & kSymFinal) {
    done_ = true;
    return false;
  }
  if ((header & ~kSymTypeMask) != 0 || (header & kSymTypeMask) > kSymTrace)
    in_.fail(at, "bad symtab entry header " + hex_byte(header));
  read_symbol_body(in_, header & kSymTypeMask, out);
  return true;
}

}  // namespace prof
