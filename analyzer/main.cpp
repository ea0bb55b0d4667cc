// prof-analyze: reports, folded stacks and JSON from memprof/sysprof streams.
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char **argv) {
  CLI::App app{"prof-analyze: turn libprof and LuaJIT memprof/sysprof streams into reports"};
  app.require_subcommand(1);
  prof::CommandOptions opt;

  auto add_files = [&](CLI::App *cmd) {
    cmd->add_option("files", opt.files, "profile streams (.memprof / .sysprof, ours or LuaJIT's)")
        ->required()
        ->check(CLI::ExistingFile);
  };

  CLI::App *report = app.add_subcommand(
      "report", "memprof report as LuaJIT's parser prints it (allocations, reallocations, "
                "deallocations, heap summary)");
  add_files(report);
  report->add_flag("--leak-only", opt.report.leak_only, "report only the heap summary");
  report->add_flag("--human-readable", opt.report.human_readable, "KiB/MiB/GiB instead of bytes");
  report->add_flag("--compat-heap-summary", opt.report.compat_heap_summary,
                   "reproduce the reference parser's HEAP SUMMARY exactly, realloc quirk included");
  report->add_flag("--json", opt.json, "JSON instead of text");

  CLI::App *summary = app.add_subcommand(
      "summary", "native summary: totals, peak, leaks, temporaries, sizes, sites, heap over time, "
                 "mmap; or CPU samples per VM state and hottest stacks");
  add_files(summary);
  summary->add_option("--top", opt.top, "rows per table")->check(CLI::PositiveNumber);
  summary->add_flag("--json", opt.json, "JSON instead of text");

  CLI::App *folded = app.add_subcommand(
      "folded", "folded stacks for flame graphs: root first, ';'-separated, a space, the count");
  add_files(folded);
  folded->add_option("--metric", opt.metric,
                     "memory: alloc-bytes, alloc-count, leaked-bytes or peak-bytes")
      ->check(CLI::IsMember({"alloc-bytes", "alloc-count", "leaked-bytes", "peak-bytes"}));
  folded->add_flag("--by-vmstate", opt.by_vmstate, "CPU: put the VM state at the root");

  for (CLI::App *cmd : {report, summary, folded})
    cmd->add_flag("--per-process", opt.per_process, "one report per file instead of merging");

  CLI11_PARSE(app, argc, argv);
  opt.progress = isatty(STDERR_FILENO);
  try {
    if (report->parsed()) return prof::run_report(opt, std::cout);
    if (summary->parsed()) return prof::run_summary(opt, std::cout);
    return prof::run_folded(opt, std::cout);
  } catch (const std::exception &e) {
    std::cerr << "prof-analyze: " << e.what() << "\n";
    return 2;
  }
}
