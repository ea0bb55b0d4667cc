// Merging a guest VM's stack into the host stack that runs it.
//
// The rule (also in the README): a guest stack, root first, is cut into
// segments that end at each guest C-function frame (a call out of the VM
// into native code, which the host stack shows itself). Walking the host
// stack root first, each host frame that is a VM entry point (kVmEntries:
// the interpreter loop or a protected call into it) receives the next
// segment right above it. Segments left over go above the innermost entry;
// with no entry on the host stack (a VM unknown to the table) the whole guest
// stack goes above the innermost host frame. Guest C-function frames are
// dropped: their host frames carry the same function with its file and line.
#pragma once

#include <string>
#include <vector>

namespace prof {

struct NamedFrame {
  std::string name;
  bool guest_cfunc = false;  // a guest frame that calls into native code
};

// Host and guest frames root first; returns the merged names, root first.
std::vector<std::string> merge_stacks(const std::vector<NamedFrame> &host,
                                      const std::vector<NamedFrame> &guest);

// True when `function` (a symbolized host frame name) is a VM entry point.
bool is_vm_entry(const std::string &function);

}  // namespace prof
