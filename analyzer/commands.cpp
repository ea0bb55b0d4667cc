#include "commands.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "read/run_folder.h"
#include "render/json_text.h"

namespace prof {
namespace {

using Json = nlohmann::json;

// What read_files() returns, reading silently, for a file with nothing
// complete (the caller leaves it out).
constexpr int kNothingComplete = 3;

// Runs read(path) on each file in turn; reports a cut file, and a marker
// window the stream missed, as a warning and a corrupt or unreadable file as
// an error (exit code 2). A file cut before its first record is whole (in
// or right after its prologue; compressed, before its first block ends) has
// nothing to report: alone, it is an error (exit code 2); among others, it
// is left out with a warning, and an error only when every file is so.
// Callers print nothing before every file is read.
template <class Read>
int read_files(const std::vector<std::string> &files, Read &&read, bool warn = true) {
  size_t left_out = 0;
  std::string nothing;  // the last such file's line
  for (const std::string &path : files) {
    try {
      const StreamContext &ctx = read(path);
      const ReadEnd &end = ctx.end;
      // (An LLVM MemProf raw profile is read by sections, not records.)
      if (end.truncated && ctx.records == 0 && !ctx.file.llvm_memprof()) {
        nothing = path + ": truncated at byte " + std::to_string(end.offset) + ": " + end.reason;
      } else {
        if (!warn) continue;
        if (end.truncated)
          std::cerr << "prof-analyze: warning: " << path << ": truncated at byte " << end.offset
                    << " (" << end.reason << "); reporting the records before it\n";
        if (ctx.trailing_at)
          std::cerr << "prof-analyze: warning: " << path << ": bytes after the stream's end, "
                    << "from byte " << ctx.trailing_at << ", are not read (one stream per file)\n";
        if (ctx.unclean.seen) {
          char when[32];
          snprintf(when, sizeof when, "%.3f", double(ctx.unclean.time_ns) / 1e9);
          std::cerr << "prof-analyze: warning: " << path << ": the process ended without finishing its "
                    << "profile (exit_group past exit(), a signal or a kill) " << when << " s in; "
                    << (ctx.unclean.lost_bytes
                            ? std::to_string(ctx.unclean.lost_bytes) +
                                  " bytes of events its dying threads were writing are lost\n"
                            : std::string("every event it completed is here\n"));
        }
        const std::string missed = ctx.window.warning();
        if (!missed.empty()) std::cerr << "prof-analyze: warning: " << path << ": " << missed << "\n";
        continue;
      }
    } catch (const FormatError &e) {
      if (!e.truncated()) {
        std::cerr << "prof-analyze: " << path << ": " << e.what() << "\n";
        return 2;
      }
      nothing = path + ": " + e.what();
    } catch (const OutOfMemory &e) {
      std::cerr << "prof-analyze: " << path << ": out of memory while reading byte " << e.offset()
                << "\n";
      return 2;
    } catch (const std::exception &e) {
      std::cerr << "prof-analyze: " << path << ": " << e.what() << "\n";
      return 2;
    }
    if (!warn) return kNothingComplete;
    if (++left_out < files.size())
      std::cerr << "prof-analyze: warning: " << nothing << " (nothing complete to report; left out)\n";
  }
  if (left_out == 0 || left_out < files.size()) return 0;
  std::cerr << "prof-analyze: " << nothing << " (nothing complete to report)\n";
  return 2;
}

// The files read together: all of them merged, or each alone.
std::vector<std::vector<std::string>> groups(const CommandOptions &opt) {
  if (!opt.per_process) return {opt.files};
  std::vector<std::vector<std::string>> g;
  for (const std::string &f : opt.files) g.push_back({f});
  return g;
}

// Prints the report of each group: as text, under "== FILE" headers when per
// process; as JSON, one object when merged, else an array of objects that
// name their "file".
void print(const CommandOptions &opt, const std::vector<std::vector<std::string>> &groups,
           const std::function<Json(size_t)> &json_of,
           const std::function<void(size_t, std::ostream &)> &text_of, std::ostream &out) {
  Json all = Json::array();
  for (size_t i = 0; i < groups.size(); i++) {
    if (!opt.json) {
      if (opt.per_process) out << "== " << groups[i].front() << "\n";
      text_of(i, out);
    } else if (!opt.per_process) {
      all = json_of(i);
    } else {
      all.push_back(json_of(i));
      all.back()["file"] = groups[i].front();
    }
  }
  if (opt.json) out << json_text(all, 1) << "\n";
}

// Reads a group of files into a profile, then leaves the suppressed leaks out.
int read_profile(const CommandOptions &opt, const std::vector<std::string> &files,
                 Profile &profile, bool warn = true) {
  Suppressions suppressions;
  try {
    if (!opt.suppressions.empty()) suppressions = Suppressions::load(opt.suppressions);
    if (opt.default_suppressions) suppressions.add_defaults();
  } catch (const std::exception &e) {
    std::cerr << "prof-analyze: " << e.what() << "\n";
    return 2;
  }
  const int rc = read_files(
      files, [&](const std::string &path) -> const StreamContext & { return profile.read(path); },
      warn);
  if (rc == 0) profile.suppress_leaks(suppressions);
  return rc;
}

}  // namespace

namespace {

// Whether memory metric m is in streams with allocation events (libprof's,
// LuaJIT's) and in LLVM MemProf's (measures, but no frees: no leaks, no peak).
bool metric_in(const MemoryMetric &m, bool events, bool llvm) {
  const std::string name = m.name;
  if (m.measured) return llvm;
  if (name == "leaked-bytes" || name == "peak-bytes") return events;
  return events || llvm;
}

// 0, or 2 with one line naming `metric` (given as `option`) when the
// profile's streams have nothing for it, and the metrics they have.
int check_metric_applies(const std::string &option, const std::string &metric,
                         const Profile &profile) {
  bool events = false, llvm = false;
  for (const auto &s : profile.streams()) {
    if (s->file.kind() != SectionKind::Memprof) continue;
    (s->file.llvm_memprof() ? llvm : events) = true;
  }
  if (!events && !llvm) return 0;  // CPU streams: check_options_apply's line
  std::string has;
  const MemoryMetric *asked = nullptr;
  for (const MemoryMetric &m : memory_metrics()) {
    if (metric_in(m, events, llvm)) has += std::string(has.empty() ? "" : ", ") + m.name;
    if (m.name == metric) asked = &m;
  }
  if (!asked || metric_in(*asked, events, llvm)) return 0;
  std::cerr << "prof-analyze: " << option << " " << metric << ": "
            << (asked->measured ? "only LLVM MemProf profiles measure it"
                                : "LLVM MemProf profiles record no frees")
            << "; these streams have " << has << "\n";
  return 2;
}

}  // namespace

int check_options_apply(const CommandOptions &opt, const Profile &profile) {
  const bool memory = profile.has_memory(), cpu = profile.has_cpu();
  const std::string file = profile.streams().empty() ? "" : profile.streams()[0]->file.path();
  for (const std::string &o : opt.memory_only)
    if (cpu && !memory) {
      std::cerr << "prof-analyze: " << o << " applies to memory profiles; " << file
                << " is a CPU profile (sysprof)\n";
      return 2;
    }
  for (const std::string &o : opt.memory_only)
    if (o == "--metric" || o == "--sort")
      if (const int rc = check_metric_applies(o, o == "--metric" ? opt.folded.metric : opt.diff.sort,
                                              profile))
        return rc;
  for (const std::string &o : opt.cpu_only)
    if (memory && !cpu) {
      std::cerr << "prof-analyze: " << o << " applies to CPU profiles; " << file
                << " is a memory profile (memprof)\n";
      return 2;
    }
  return 0;
}

int read_groups(const CommandOptions &opt, std::vector<std::unique_ptr<Profile>> &profiles) {
  for (const auto &group : groups(opt)) {
    profiles.push_back(std::make_unique<Profile>(opt.profile));
    if (const int rc = read_profile(opt, group, *profiles.back())) return rc;
    if (const int rc = check_options_apply(opt, *profiles.back())) return rc;
  }
  return 0;
}

int run_report(const CommandOptions &opt, std::ostream &out) {
  std::vector<std::unique_ptr<MemprofReport>> reports;
  std::vector<std::unique_ptr<StreamContext>> streams;
  for (const auto &group : groups(opt)) {
    auto report = std::make_unique<MemprofReport>(opt.profile.full_names);
    const int rc = read_files(group, [&](const std::string &path) -> const StreamContext & {
      streams.push_back(std::make_unique<StreamContext>(path, uint32_t(streams.size())));
      StreamContext &ctx = *streams.back();
      if (ctx.file.kind() != SectionKind::Memprof)
        throw std::runtime_error("not a memory profile (memprof) stream; try `summary`");
      if (ctx.file.llvm_memprof())
        throw std::runtime_error("an LLVM MemProf raw profile has no events to report; try `summary`");
      ctx.window.set(opt.profile.window);
      report->read(ctx);
      return ctx;
    });
    if (rc) return rc;
    reports.push_back(std::move(report));
  }
  print(
      opt, groups(opt), [&](size_t i) { return reports[i]->to_json(opt.report); },
      [&](size_t i, std::ostream &o) { reports[i]->render(o, opt.report); }, out);
  return 0;
}

namespace {

// One process image of a run (one file), for the list beside the main
// program's summary.
struct ProcessImage {
  std::string file, program;  // program: the executable's file name (else the file's)
  uint64_t pid = 0;
  double allocated_bytes = 0, peak_bytes = 0, leaked_bytes = 0, samples = 0;
};

// Reads each file alone (warnings are left to the main program's reading).
int survey(const CommandOptions &opt, std::vector<ProcessImage> &images) {
  for (const std::string &file : opt.files) {
    Profile p(opt.profile);
    const int rc = read_profile(opt, {file}, p, false);
    if (rc == kNothingComplete) continue;  // left out, said when read with the others
    if (rc) return rc;
    const StreamContext &ctx = *p.streams().front();
    ProcessImage i;
    i.file = file;
    i.program = basename_of(ctx.exe.empty() ? file : ctx.exe);
    i.pid = ctx.pid;
    i.allocated_bytes = p.memory().allocated_bytes();
    i.peak_bytes = p.memory().peak_bytes();
    i.leaked_bytes = p.memory().live_bytes();
    i.samples = p.cpu().samples();
    images.push_back(i);
  }
  return 0;
}

// The program the run was for: of the executables, the one whose processes
// allocated the most bytes, then took the most CPU samples.
std::string main_program(const std::vector<ProcessImage> &images) {
  std::map<std::string, std::pair<double, double>> by_program;
  for (const ProcessImage &i : images) {
    auto &v = by_program[i.program];
    v.first += i.allocated_bytes;
    v.second += i.samples;
  }
  auto best = by_program.begin();
  for (auto it = by_program.begin(); it != by_program.end(); ++it)
    if (it->second > best->second) best = it;
  return best->first;
}

Json processes_json(const std::vector<ProcessImage> &images, const std::string &program) {
  Json out = Json::array();
  for (const ProcessImage &i : images)
    out.push_back({{"program", i.program},
                   {"pid", i.pid},
                   {"file", i.file},
                   {"main", i.program == program},
                   {"allocated_bytes", i.allocated_bytes},
                   {"peak_bytes", i.peak_bytes},
                   {"leaked_bytes", i.leaked_bytes},
                   {"samples", i.samples}});
  std::stable_sort(out.begin(), out.end(), [](const Json &a, const Json &b) {
    if (a["main"] != b["main"]) return a["main"].get<bool>();
    return a["allocated_bytes"].get<double>() > b["allocated_bytes"].get<double>();
  });
  return out;
}

}  // namespace

int run_summary(const CommandOptions &opt, std::ostream &out) {
  // Several executables (a shell script, a version manager's shim, the
  // commands it ran): the summary is the main program's, the others listed.
  if (!opt.per_process && !opt.all_processes && opt.files.size() > 1) {
    std::vector<ProcessImage> images;
    if (const int rc = survey(opt, images)) return rc;
    const std::string program = images.empty() ? "" : main_program(images);
    if (std::any_of(images.begin(), images.end(),
                    [&](const ProcessImage &i) { return i.program != program; })) {
      CommandOptions main = opt;
      main.files.clear();
      for (const ProcessImage &i : images)
        if (i.program == program) main.files.push_back(i.file);
      std::vector<std::unique_ptr<Profile>> profiles;
      if (const int rc = read_groups(main, profiles)) return rc;
      Json summary = summary_json(*profiles[0], opt.summary);
      summary["processes"] = processes_json(images, program);
      if (opt.json)
        out << json_text(summary, 1) << "\n";
      else
        render_summary(summary, opt.summary, out);
      return 0;
    }
  }
  std::vector<std::unique_ptr<Profile>> profiles;
  if (const int rc = read_groups(opt, profiles)) return rc;
  print(
      opt, groups(opt), [&](size_t i) { return summary_json(*profiles[i], opt.summary); },
      [&](size_t i, std::ostream &o) { render_summary(summary_json(*profiles[i], opt.summary), opt.summary, o); },
      out);
  return 0;
}

int run_folded(const CommandOptions &opt, std::ostream &out) {
  FoldedStacks stacks;
  for (const auto &group : groups(opt)) {
    Profile profile(opt.profile);
    if (const int rc = read_profile(opt, group, profile)) return rc;
    if (const int rc = check_options_apply(opt, profile)) return rc;
    if (profile.has_memory() && profile.has_cpu()) {
      std::cerr << "prof-analyze: memory and CPU streams cannot share one flame graph\n";
      return 2;
    }
    add_folded_stacks(profile, opt.folded, opt.per_process, stacks);
  }
  if (opt.json)
    render_folded_json(stacks, out);
  else
    render_folded(stacks, out);
  return 0;
}

int run_diff(const CommandOptions &opt, std::ostream &out) {
  Profile before(opt.profile), after(opt.profile);
  if (const int rc = read_profile(opt, expand_run_folders({opt.files[0]}), before)) return rc;
  if (const int rc = read_profile(opt, expand_run_folders({opt.files[1]}), after)) return rc;
  if (!before.has_memory() || !after.has_memory()) {
    std::cerr << "prof-analyze: diff compares memory (memprof) profiles\n";
    return 2;
  }
  for (const Profile *p : {&before, &after})
    if (const int rc = check_options_apply(opt, *p)) return rc;
  const nlohmann::json d = diff_json(before, after, opt.diff);
  if (opt.json)
    out << json_text(d, 1) << "\n";
  else
    render_diff(d, opt.diff, out);
  return 0;
}

}  // namespace prof
