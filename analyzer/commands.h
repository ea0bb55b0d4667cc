// The analyzer's subcommands, behind the CLI of main.cpp.
//
// Invariants: every subcommand streams its files once, in the order given,
// and returns the process exit code: 0 (a truncated file is reported up to
// its last complete record, with one warning on stderr), 2 for a corrupt or
// unreadable file (one line naming the file and the byte offset).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "memprof_report.h"

namespace prof {

struct CommandOptions {
  std::vector<std::string> files;
  ReportOptions report;
  bool json = false;
  bool per_process = false;
  bool by_vmstate = false;
  bool progress = false;
  size_t top = 10;
  std::string metric = "alloc-bytes";
};

int run_report(const CommandOptions &opt, std::ostream &out);
int run_summary(const CommandOptions &opt, std::ostream &out);
int run_folded(const CommandOptions &opt, std::ostream &out);

}  // namespace prof
