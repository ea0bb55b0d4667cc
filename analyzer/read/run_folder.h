// RunFolder: the profiles a run left in one folder (prof-run -o DIR, or
// PROF_OUTPUT=DIR/prof.%p), so a command can be given the folder itself.
//
// Invariants: a folder's profiles are its files whose names hold ".memprof"
// or ".sysprof" (prof.<pid>.memprof, prof.<pid>.sysprof.1, LLVM's
// .memprofraw), sorted by name; everything else in it (the pictures, folded
// stacks and reports written beside them) is skipped. Arguments that are
// files are kept as given, in order.
#pragma once

#include <string>
#include <vector>

namespace prof {

// The profile files in `folder`; throws std::runtime_error naming the folder
// when it cannot be read or holds none.
std::vector<std::string> profiles_in_folder(const std::string &folder);

// `paths` with each folder replaced by the profiles in it, and a stream's
// ring file (`<stream>.ring`) by its stream, named once.
std::vector<std::string> expand_run_folders(const std::vector<std::string> &paths);

}  // namespace prof
