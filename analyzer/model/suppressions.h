// Suppressions: known leaks, in LeakSanitizer's suppression file format, left
// out of leak reports and counted per pattern.
//
// Format, as LSan reads it: one `leak:PATTERN` per line; a line whose first
// non-blank character is `#` is a comment; blank lines are skipped; spaces
// around a line are trimmed. Any other type than `leak` is an error.
//
// Matching, as LSan's TemplateMatch: a pattern matches a text anywhere inside
// it unless it starts with `^` (anchored at the start) or ends with `$`
// (anchored at the end); `*` matches any run of characters. A leak (a
// stack's blocks still live at the end) is suppressed when the pattern
// matches the function name, the module path or the source file of any frame
// of its stack; the first matching pattern in file order is credited.
#pragma once

#include <string>
#include <vector>

#include "model/frame.h"

namespace prof {

// LSan's template match of `pattern` against `text` (never matches "").
bool template_match(const std::string &pattern, const std::string &text);

class Suppressions {
 public:
  // Reads a file; throws std::runtime_error ("FILE:LINE: reason") on a bad line.
  static Suppressions load(const std::string &path);

  const std::vector<std::string> &patterns() const { return patterns_; }
  // The index of the first pattern matching a frame of the stack, or -1.
  int match(const std::vector<Frame> &stack) const;

 private:
  std::vector<std::string> patterns_;
};

}  // namespace prof
