// Frame: one symbolized frame of a stack, the unit every report and exporter
// prints. A host address can yield several frames (a function and the calls
// inlined into it); a guest frame is one Lua location.
//
// Invariants: `function` is never empty (unknown code is named by address);
// `line` is 0 when unknown; `file` is the path as the debug info or the
// stream gives it (label() shows its basename).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace prof {

struct Frame {
  enum class Kind : uint8_t {
    Native,   // a host function (DWARF or ELF symbol), or module+0xoffset
    Inlined,  // a host function inlined into the frame before it
    Guest,    // a guest VM frame from the stream's symbols
    Jit,      // JIT code named by /tmp/perf-<pid>.map
    Unknown,  // an address no module covers
  };
  std::string function;
  std::string file;
  uint32_t line = 0;
  std::string module;  // native frames: the ELF object's path
  uint64_t addr = 0;   // host frames: the code address looked up (return address - 1)
  uint32_t first_line = 0;  // guest Lua frames: the line their function starts at (0: main chunk)
  Kind kind = Kind::Unknown;

  // "function (file:line)" with the file's basename, or "function".
  std::string label() const;
};

// f.label(), as a function.
inline std::string frame_label(const Frame &f) { return f.label(); }

std::string basename_of(const std::string &path);

// A name from a stream as reports print it: control characters (an escape
// sequence, a carriage return) as '?', but for the line breaks and tabs
// of a load()ed chunk's source.
std::string printable(std::string name);

}  // namespace prof
