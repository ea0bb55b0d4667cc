// The analyzer's subcommands, behind the CLI of main.cpp.
//
// Invariants: every subcommand streams its files once, in the order given,
// and returns the process exit code: 0, also for a cut file (reported up to
// its last complete record, with one warning line naming the byte offset on
// stderr); 2 for a corrupt or unreadable file, with one line
// "prof-analyze: FILE: corrupt at byte N: reason" (or the I/O error, or
// "out of memory while reading byte N") and no report.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "report/folded.h"
#include "report/memprof_report.h"
#include "report/profile_diff.h"
#include "model/profile.h"
#include "report/summary.h"

namespace prof {

struct CommandOptions {
  std::vector<std::string> files;
  bool json = false;
  bool per_process = false;  // one report per file instead of merging them
  // summary: every process merged, also of several executables (else the
  // main program's alone, the others one line each).
  bool all_processes = false;
  ReportOptions report;
  SummaryOptions summary;
  ProfileOptions profile;
  FoldedOptions folded;
  DiffOptions diff;
  std::string suppressions;  // an LSan suppressions file for leak reports ("": none)
  bool default_suppressions = true;  // and the C library's one-time allocations (suppressions.h)
  std::string output;        // -o: the file written once the command succeeds ("": stdout)
  bool icicle = false;       // flame graphs: the root at the top
  // Options given that apply only to memory or only to CPU streams
  // (--metric, --by-vmstate, ...): an error on streams of the other kind.
  std::vector<std::string> memory_only, cpu_only;
};

// 0, or 2 with one line naming the option given that `profile`'s streams
// have nothing for (opt.memory_only on CPU streams, opt.cpu_only on memory).
int check_options_apply(const CommandOptions &opt, const Profile &profile);

int run_report(const CommandOptions &opt, std::ostream &out);
int run_summary(const CommandOptions &opt, std::ostream &out);
int run_folded(const CommandOptions &opt, std::ostream &out);
// opt.files: BEFORE and AFTER.
int run_diff(const CommandOptions &opt, std::ostream &out);

// Pictures and exports (export_commands.cpp), of streams that are all memory
// or all CPU: an SVG flame graph (opt.folded), the heap over time as SVG,
// the HTML report, a gzipped pprof profile, a speedscope file.
int run_flamegraph(const CommandOptions &opt, std::ostream &out);
int run_chart(const CommandOptions &opt, std::ostream &out);
int run_html(const CommandOptions &opt, std::ostream &out);
int run_pprof(const CommandOptions &opt, std::ostream &out);
int run_speedscope(const CommandOptions &opt, std::ostream &out);
// Runs a command into opt.output, written only if it succeeds, or stdout
// unless stdout is a terminal (then 2, with a line saying what it `writes`:
// "an SVG picture").
int run_to_output(const CommandOptions &opt, int (*run)(const CommandOptions &, std::ostream &),
                  const char *writes);

// Reads the files into profiles, one per group (all files, or each alone
// with --per-process); the exit code, 0 when every group was read.
int read_groups(const CommandOptions &opt, std::vector<std::unique_ptr<Profile>> &profiles);

}  // namespace prof
