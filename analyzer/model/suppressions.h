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

  // The default suppressions first: the C library's and the loader's
  // one-time allocations, which a program cannot free (kDefaultSuppressions).
  void add_defaults();
  // Whether pattern i is one of the defaults.
  bool is_default(size_t i) const { return i < defaults_; }

  const std::vector<std::string> &patterns() const { return patterns_; }
  // The index of the first pattern matching a frame of the stack, or -1.
  int match(const std::vector<Frame> &stack) const;

 private:
  std::vector<std::string> patterns_;
  size_t defaults_ = 0;  // patterns_[0, defaults_) are the defaults
};

// The default suppressions, as leak: patterns (functions, anchored), each
// an allocation glibc or its loader makes once and keeps to the end.
extern const char *const kDefaultSuppressions[];
extern const size_t kDefaultSuppressionCount;

}  // namespace prof
