// prof-analyze: reports, folded stacks and JSON from memprof/sysprof streams.
//
// The subcommands are one table (as LuaJIT's profilers pick a writer from
// one): each row names a command, says what it prints, adds its options and
// runs it. Exit codes: the command's (commands.h); 2 for a command line it
// cannot take, with CLI11's message, or an unknown command.
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "read/run_folder.h"
#include "report/folded.h"

namespace {

using prof::CommandOptions;

// What the command line fills in: the options, and diff's two files.
struct Args {
  CommandOptions opt;
  std::string before, after;
};

struct Command {
  const char *name;
  const char *description;
  void (*add_options)(CLI::App *cmd, Args &args);
  int (*run)(Args &args);
};

// The memory metrics (report/folded.h), as --metric and --sort take them.
const std::vector<std::string> &metric_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const prof::MemoryMetric &m : prof::memory_metrics()) names.push_back(m.name);
    return names;
  }();
  return kNames;
}

// "alloc-bytes (default), alloc-count, leaked-bytes or peak-bytes".
std::string metric_choices() {
  const std::vector<std::string> &names = metric_names();
  std::string text;
  for (size_t i = 0; i < names.size(); i++) {
    if (i > 0) text += i + 1 < names.size() ? ", " : " or ";
    text += names[i];
    if (i == 0) text += " (default)";
  }
  return text;
}

// Numbers as the options take them, refused with the range in plain numbers
// (CLI11's own ranges print 1.797693e+308).
CLI::Validator whole_number(long long low, long long high) {
  const std::string range = std::to_string(low) + " to " + std::to_string(high);
  return CLI::Validator(
      [=](std::string &text) -> std::string {
        char *end = nullptr;
        errno = 0;
        const long long v = strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end || errno || v < low || v > high)
          return "'" + text + "' is not a whole number from " + range;
        return "";
      },
      range);
}
const CLI::Validator kCount = whole_number(1, 1000000000), kDepth = whole_number(0, 1000000);
const CLI::Validator kPositive(
    [](std::string &text) -> std::string {
      char *end = nullptr;
      const double v = strtod(text.c_str(), &end);
      if (text.empty() || *end || !(v > 0) || v > 1e9)
        return "'" + text + "' is not a number above 0 and at most 1000000000";
      return "";
    },
    "NUMBER>0");
const CLI::Validator kNonEmpty(
    [](std::string &text) -> std::string { return text.empty() ? "an empty name" : ""; }, "NAME");

void add_metric(CLI::App *cmd, const char *flag, std::string &metric, const std::string &what) {
  cmd->add_option(flag, metric, what + metric_choices())->check(CLI::IsMember(metric_names()));
}

void add_full_names(CLI::App *cmd, Args &a) {
  cmd->add_flag("--full-names", a.opt.profile.full_names,
                "C++ functions with their template arguments (default: std::vector<…>::push_back)");
}

void add_window(CLI::App *cmd, Args &a) {
  cmd->add_option("--from", a.opt.profile.window.from,
                  "only what happened after the first marker with this label (prof_marker), "
                  "or after this time since the start, in seconds (2.5s)");
  cmd->add_option("--to", a.opt.profile.window.to,
                  "only what happened before the first marker with this label after --from, "
                  "or before this time (10s)");
  cmd->add_option("--thread", a.opt.profile.thread,
                  "only the CPU samples and the allocations (and their frees) of the threads "
                  "with this name (pthread_setname_np, prctl) when they were made, or of this "
                  "tid (4427, tid 4427)")
      ->check(kNonEmpty);
}

void add_binary(CLI::App *cmd, Args &a) {
  cmd->add_option("--binary", a.opt.profile.binary,
                  "LLVM MemProf raw profiles: the profiled program, to name their frames "
                  "(its build-id must match the profile's)")
      ->check(CLI::ExistingFile);
}

void add_suppressions(CLI::App *cmd, Args &a) {
  cmd->add_option("--suppressions", a.opt.suppressions,
                  "known leaks, in LeakSanitizer's format (leak:PATTERN lines), left out of "
                  "the leaks and counted")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--no-default-suppressions{false}", a.opt.default_suppressions,
                "keep the C library's and the loader's one-time allocations (link maps, stdio "
                "buffers, locales, TLS) among the leaks");
}

// The inputs of the reports: files, --per-process, --json, the window.
void add_streams(CLI::App *cmd, Args &a) {
  cmd->add_option("files", a.opt.files,
                  "profile streams (.memprof / .sysprof, libprof's or LuaJIT's), or a run's "
                  "folder (the profiles in it); several (a parent and its forked children) are "
                  "merged")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_flag("--per-process", a.opt.per_process, "one report per file instead of merging");
  cmd->add_flag("--json", a.opt.json, "JSON instead of text");
  add_window(cmd, a);
  add_full_names(cmd, a);
  add_binary(cmd, a);
}

// Pictures and exports: the inputs and filters of `folded`, and -o.
void add_export(CLI::App *cmd, Args &a) {
  cmd->add_option("files", a.opt.files, "profile streams or a run's folder, as for folded")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_flag("--per-process", a.opt.per_process,
                "each file apart (flame graphs: under a [pid N] root; pprof: a pid label; "
                "speedscope: profiles per process)");
  add_window(cmd, a);
  add_full_names(cmd, a);
  add_binary(cmd, a);
  add_suppressions(cmd, a);
  cmd->add_option("-o,--output", a.opt.output, "write FILE (once complete) instead of stdout");
}

void add_by_vmstate(CLI::App *cmd, Args &a) {
  cmd->add_flag("--by-vmstate", a.opt.folded.by_vmstate, "CPU: the VM state as the root frame");
}

void add_by_type(CLI::App *cmd, Args &a) {
  cmd->add_flag("--by-type", a.opt.folded.by_type,
                "memory: the guest object type as the leaf frame ([table], [string], ...)");
}

void add_collapse_recursion(CLI::App *cmd, Args &a) {
  cmd->add_flag("--collapse-recursion", a.opt.folded.collapse_recursion,
                "a frame repeated in a row (recursion) as one frame");
}

void add_icicle(CLI::App *cmd, Args &a) {
  cmd->add_flag("--icicle", a.opt.icicle, "the root at the top, stacks growing down");
}

void report_options(CLI::App *cmd, Args &a) {
  add_streams(cmd, a);
  cmd->add_flag("--leak-only", a.opt.report.leak_only, "only the heap summary");
  cmd->add_flag("--human-readable", a.opt.report.human_readable, "KiB/MiB/GiB instead of bytes");
  cmd->add_flag("--compat-heap-summary", a.opt.report.compat_heap_summary,
                "the reference parser's HEAP SUMMARY exactly, realloc quirk included");
}

void summary_options(CLI::App *cmd, Args &a) {
  add_streams(cmd, a);
  cmd->add_flag("--all-processes", a.opt.all_processes,
                "files of several executables merged into one report (default: the main "
                "program's report, the one that allocated the most, and a line per process)");
  add_suppressions(cmd, a);
  cmd->add_flag("--full", a.opt.summary.full,
                "every table (default: one screen: totals, peak, leaks, temporaries, hottest "
                "functions)");
  cmd->add_option("--top", a.opt.summary.top,
                  "rows per table (default 3, with --full or --json 10)")
      ->check(kCount);
  cmd->add_option("--stack-depth", a.opt.summary.stack_depth,
                  "frames shown per stack in text, 0 for all (default 4, with --full 12); "
                  "memory stacks start at the first frame that is not the allocator's")
      ->check(kDepth);
  cmd->add_flag("--by-line,--lines", a.opt.summary.lines,
                "the tables by function (memory's and the hottest CPU's) by line instead: "
                "function and file:line");
  cmd->add_option("--heap-snap-interval", a.opt.profile.snap_interval_s,
                  "a heap snapshot with its largest holders every SEC seconds (time marks)")
      ->check(kPositive);
  cmd->add_option("--heap-snap-events", a.opt.profile.snap_events,
                  "a heap snapshot with its largest holders every N allocation events")
      ->check(kCount);
}

void folded_options(CLI::App *cmd, Args &a) {
  add_streams(cmd, a);
  add_suppressions(cmd, a);
  add_metric(cmd, "--metric", a.opt.folded.metric, "memory: ");
  add_by_vmstate(cmd, a);
  add_by_type(cmd, a);
  add_collapse_recursion(cmd, a);
}

void diff_options(CLI::App *cmd, Args &a) {
  cmd->add_option("before", a.before, "the profile before, or its run's folder")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("after", a.after, "the profile after, or its run's folder")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_flag("--json", a.opt.json, "JSON instead of text");
  add_metric(cmd, "--sort", a.opt.diff.sort, "the change that orders stacks: ");
  add_full_names(cmd, a);
  cmd->add_flag("--by-line", a.opt.diff.by_line,
                "stacks matched by their frames' files and lines (default: by function, so a "
                "line added above a function moves none of its stacks)");
  cmd->add_option("--top", a.opt.diff.top, "stacks shown (default 20)")->check(kCount);
  cmd->add_option("--stack-depth", a.opt.diff.stack_depth,
                  "frames shown per stack in text, 0 for all (default 12)")
      ->check(kDepth);
  add_window(cmd, a);
  add_binary(cmd, a);
  add_suppressions(cmd, a);
}

void flamegraph_options(CLI::App *cmd, Args &a) {
  add_export(cmd, a);
  add_metric(cmd, "--metric", a.opt.folded.metric, "memory: ");
  add_by_vmstate(cmd, a);
  add_by_type(cmd, a);
  add_collapse_recursion(cmd, a);
  add_icicle(cmd, a);
}

// Every memory metric is on the page: no --metric.
void html_options(CLI::App *cmd, Args &a) {
  add_export(cmd, a);
  add_by_vmstate(cmd, a);
  add_collapse_recursion(cmd, a);
  add_icicle(cmd, a);
}

int run_report(Args &a) { return prof::run_report(a.opt, std::cout); }
int run_summary(Args &a) { return prof::run_summary(a.opt, std::cout); }
int run_folded(Args &a) { return prof::run_folded(a.opt, std::cout); }
int run_diff(Args &a) {
  a.opt.files = {a.before, a.after};
  return prof::run_diff(a.opt, std::cout);
}
int run_flamegraph(Args &a) {
  return prof::run_to_output(a.opt, prof::run_flamegraph, "an SVG picture");
}
int run_chart(Args &a) {
  return prof::run_to_output(a.opt, prof::run_chart, "an SVG picture");
}
int run_html(Args &a) {
  return prof::run_to_output(a.opt, prof::run_html, "an HTML page");
}
int run_pprof(Args &a) {
  return prof::run_to_output(a.opt, prof::run_pprof, "a binary pprof file");
}
int run_speedscope(Args &a) {
  return prof::run_to_output(a.opt, prof::run_speedscope, "a speedscope JSON file");
}

const Command kCommands[] = {
    {"report",
     "memory: the report of LuaJIT's memprof parser (ALLOCATIONS, REALLOCATIONS, DEALLOCATIONS, "
     "HEAP SUMMARY)",
     report_options, run_report},
    {"summary",
     "memory: totals, peak and its holders, leaks, temporaries, sizes, per-stack statistics, "
     "heap over time, mmap; CPU: samples by VM state, thread, function",
     summary_options, run_summary},
    {"folded", "stacks for flame graphs: root first, ';'-separated, a space, the count",
     folded_options, run_folded},
    {"diff",
     "memory: what changed from BEFORE to AFTER, per stack: bytes allocated, calls, bytes leaked "
     "and at the peak, largest changes first",
     diff_options, run_diff},
    {"flamegraph", "an interactive SVG flame graph (zoom, search, tooltips) of the stacks",
     flamegraph_options, run_flamegraph},
    {"chart", "memory: the heap (and RSS) over time as an SVG chart, its peak marked", add_export,
     run_chart},
    {"html",
     "one self-contained HTML page: the summary, the heap over time and the flame graphs (every "
     "memory metric, or CPU)",
     html_options, run_html},
    {"pprof",
     "a gzipped pprof profile (go tool pprof): memory alloc_objects, alloc_space, inuse_objects, "
     "inuse_space, peak_space, or CPU samples",
     add_export, run_pprof},
    {"speedscope", "a speedscope file (speedscope.app): a profile per memory metric, or CPU",
     add_export, run_speedscope},
};

const Command *command_named(const std::string &name) {
  for (const Command &c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

std::string unknown_command(const std::string &name) {
  std::string known;
  for (const Command &c : kCommands) known += std::string(known.empty() ? "" : ", ") + c.name;
  return "unknown command '" + name + "' (the commands: " + known + ")";
}

const char kExamples[] = R"(Examples:
  prof-analyze summary prof-app-1234           a run's folder (prof-run -o), or its files
  prof-analyze summary --full prof-app-1234    every table
  prof-analyze flamegraph prof-app-1234/prof.*.memprof -o memory.svg
  prof-analyze html prof-app-1234 -o report.html
  prof-analyze diff before-run after-run       what changed, per stack
  prof-analyze COMMAND --help                  a command's options)";

}  // namespace

int main(int argc, char **argv) {
  CLI::App app{"prof-analyze: reports, flame-graph stacks and JSON from libprof's and LuaJIT's "
               "memprof/sysprof streams"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("prof-analyze ") + PROF_VERSION,
                       "the version of libprof");
  app.footer(kExamples);
  // One line, named as every other message of the tool.
  app.failure_message([](const CLI::App *, const CLI::Error &e) {
    std::string what = e.what();
    if (what == "files is required") what = "a run's folder or profile files are required";
    return "prof-analyze: " + what + " (see prof-analyze --help)\n";
  });
  Args args;
  for (const Command &c : kCommands) c.add_options(app.add_subcommand(c.name, c.description), args);
  try {
    // XXX: CLI11 would only say that a command is required.
    if (argc > 1 && argv[1][0] != '-' && !command_named(argv[1]))
      throw CLI::ParseError(unknown_command(argv[1]), 2);
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // CLI11 prints its message (or the help, which exits 0); its own codes
    // (105, 106, 109, ...) become the 2 of every other refusal.
    return app.exit(e) == 0 ? 0 : 2;
  }
  const CLI::App *cmd = app.get_subcommands().front();
  // One screen by default: fewer rows, shorter stacks (JSON is whole).
  if (cmd->get_name() == "summary" && !args.opt.summary.full && !args.opt.json) {
    if (!cmd->count("--top")) args.opt.summary.top = 3;
    if (!cmd->count("--stack-depth")) args.opt.summary.stack_depth = 4;
  }
  args.opt.profile.snap_top = args.opt.summary.top;
  for (const char *o : {"--metric", "--sort", "--heap-snap-interval", "--heap-snap-events"})
    if (cmd->get_option_no_throw(o) && cmd->count(o)) args.opt.memory_only.push_back(o);
  if (cmd->get_option_no_throw("--by-vmstate") && cmd->count("--by-vmstate"))
    args.opt.cpu_only.push_back("--by-vmstate");
  try {
    args.opt.files = prof::expand_run_folders(args.opt.files);
    return command_named(cmd->get_name())->run(args);
  } catch (const std::bad_alloc &) {
    std::cerr << "prof-analyze: out of memory\n";
    return 2;
  } catch (const std::exception &e) {
    std::cerr << "prof-analyze: " << e.what() << "\n";
    return 2;
  }
}
