// prof-analyze: reports, folded stacks and JSON from memprof/sysprof streams.
#include <iostream>
#include <new>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char **argv) {
  CLI::App app{"prof-analyze: reports, flame-graph stacks and JSON from libprof's and LuaJIT's "
               "memprof/sysprof streams"};
  app.require_subcommand(1);
  prof::CommandOptions opt;

  auto window = [&](CLI::App *cmd) {
    cmd->add_option("--from", opt.profile.window.from,
                    "only what happened after the first marker with this label (prof_marker)");
    cmd->add_option("--to", opt.profile.window.to,
                    "only what happened before the first marker with this label after --from");
  };
  auto common = [&](CLI::App *cmd) {
    cmd->add_option("files", opt.files,
                    "profile streams (.memprof / .sysprof, libprof's or LuaJIT's); several "
                    "(a parent and its forked children) are merged")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_flag("--per-process", opt.per_process, "one report per file instead of merging");
    cmd->add_flag("--json", opt.json, "JSON instead of text");
    window(cmd);
  };
  auto suppressions = [&](CLI::App *cmd) {
    cmd->add_option("--suppressions", opt.suppressions,
                    "known leaks, in LeakSanitizer's format (leak:PATTERN lines), left out of "
                    "the leaks and counted")
        ->check(CLI::ExistingFile);
  };

  CLI::App *report = app.add_subcommand(
      "report", "memory: the report of LuaJIT's memprof parser (ALLOCATIONS, REALLOCATIONS, "
                "DEALLOCATIONS, HEAP SUMMARY)");
  common(report);
  report->add_flag("--leak-only", opt.report.leak_only, "only the heap summary");
  report->add_flag("--human-readable", opt.report.human_readable, "KiB/MiB/GiB instead of bytes");
  report->add_flag("--compat-heap-summary", opt.report.compat_heap_summary,
                   "the reference parser's HEAP SUMMARY exactly, realloc quirk included");

  CLI::App *summary = app.add_subcommand(
      "summary", "memory: totals, peak and its holders, leaks, temporaries, sizes, per-stack "
                 "statistics, heap over time, mmap; CPU: samples by VM state, thread, function");
  common(summary);
  suppressions(summary);
  summary->add_option("--top", opt.summary.top, "rows per table (default 10)")
      ->check(CLI::PositiveNumber);
  summary->add_option("--stack-depth", opt.summary.stack_depth,
                      "frames shown per stack in text, 0 for all (default 12)");
  summary->add_option("--heap-snap-interval", opt.profile.snap_interval_s,
                      "a heap snapshot with its largest holders every SEC seconds (time marks)")
      ->check(CLI::PositiveNumber);
  summary->add_option("--heap-snap-events", opt.profile.snap_events,
                      "a heap snapshot with its largest holders every N allocation events")
      ->check(CLI::PositiveNumber);

  CLI::App *folded = app.add_subcommand(
      "folded", "stacks for flame graphs: root first, ';'-separated, a space, the count");
  common(folded);
  suppressions(folded);
  folded->add_option("--metric", opt.folded.metric,
                     "memory: alloc-bytes (default), alloc-count, leaked-bytes or peak-bytes")
      ->check(CLI::IsMember({"alloc-bytes", "alloc-count", "leaked-bytes", "peak-bytes"}));
  folded->add_flag("--by-vmstate", opt.folded.by_vmstate, "CPU: the VM state as the root frame");

  CLI::App *diff = app.add_subcommand(
      "diff", "memory: what changed from BEFORE to AFTER, per stack: bytes allocated, calls, "
              "bytes leaked and at the peak, largest changes first");
  std::string before, after;
  diff->add_option("before", before, "the profile before")->required()->check(CLI::ExistingFile);
  diff->add_option("after", after, "the profile after")->required()->check(CLI::ExistingFile);
  diff->add_flag("--json", opt.json, "JSON instead of text");
  diff->add_option("--sort", opt.diff.sort,
                   "the change that orders stacks: alloc-bytes (default), alloc-count, "
                   "leaked-bytes or peak-bytes")
      ->check(CLI::IsMember({"alloc-bytes", "alloc-count", "leaked-bytes", "peak-bytes"}));
  diff->add_option("--top", opt.diff.top, "stacks shown (default 20)")->check(CLI::PositiveNumber);
  diff->add_option("--stack-depth", opt.diff.stack_depth,
                   "frames shown per stack in text, 0 for all (default 12)");
  window(diff);
  suppressions(diff);

  // Pictures and exports: the inputs and filters of `folded`, and -o.
  auto exporter = [&](const char *name, const char *what) {
    CLI::App *cmd = app.add_subcommand(name, what);
    cmd->add_option("files", opt.files, "profile streams, as for folded")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_flag("--per-process", opt.per_process,
                  "each file apart (flame graphs: under a [pid N] root; pprof: a pid label; "
                  "speedscope: profiles per process)");
    window(cmd);
    suppressions(cmd);
    cmd->add_option("-o,--output", opt.output, "write FILE (once complete) instead of stdout");
    return cmd;
  };
  auto flame_options = [&](CLI::App *cmd) {
    cmd->add_option("--metric", opt.folded.metric,
                    "memory: alloc-bytes (default), alloc-count, leaked-bytes or peak-bytes")
        ->check(CLI::IsMember({"alloc-bytes", "alloc-count", "leaked-bytes", "peak-bytes"}));
    cmd->add_flag("--by-vmstate", opt.folded.by_vmstate, "CPU: the VM state as the root frame");
    cmd->add_flag("--icicle", opt.icicle, "the root at the top, stacks growing down");
  };
  CLI::App *flamegraph = exporter(
      "flamegraph", "an interactive SVG flame graph (zoom, search, tooltips) of the stacks");
  flame_options(flamegraph);
  CLI::App *chart = exporter(
      "chart", "memory: the heap (and RSS) over time as an SVG chart, its peak marked");
  CLI::App *html = exporter("html",
                            "one self-contained HTML page: the summary, the heap over time and "
                            "the flame graphs (every memory metric, or CPU)");
  flame_options(html);
  html->remove_option(html->get_option("--metric"));
  CLI::App *pprof = exporter(
      "pprof", "a gzipped pprof profile (go tool pprof): memory alloc_objects, alloc_space, "
               "inuse_objects, inuse_space, peak_space, or CPU samples");
  CLI::App *speedscope = exporter(
      "speedscope", "a speedscope file (speedscope.app): a profile per memory metric, or CPU");

  CLI11_PARSE(app, argc, argv);
  opt.profile.snap_top = opt.summary.top;
  try {
    if (report->parsed()) return prof::run_report(opt, std::cout);
    if (summary->parsed()) return prof::run_summary(opt, std::cout);
    if (flamegraph->parsed()) return prof::run_to_output(opt, prof::run_flamegraph);
    if (chart->parsed()) return prof::run_to_output(opt, prof::run_chart);
    if (html->parsed()) return prof::run_to_output(opt, prof::run_html);
    if (pprof->parsed()) return prof::run_to_output(opt, prof::run_pprof);
    if (speedscope->parsed()) return prof::run_to_output(opt, prof::run_speedscope);
    if (diff->parsed()) {
      opt.files = {before, after};
      return prof::run_diff(opt, std::cout);
    }
    return prof::run_folded(opt, std::cout);
  } catch (const std::bad_alloc &) {
    std::cerr << "prof-analyze: out of memory\n";
    return 2;
  } catch (const std::exception &e) {
    std::cerr << "prof-analyze: " << e.what() << "\n";
    return 2;
  }
}
