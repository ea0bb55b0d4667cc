// The pictures and exports of commands.h: read the groups, check that they
// are all memory or all CPU (the HTML page takes both), hand them to the
// writer.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "render/flamegraph_svg.h"
#include "render/heap_chart_svg.h"
#include "render/html_report.h"
#include "export/pprof_export.h"
#include "export/speedscope_export.h"

namespace prof {
namespace {

// Reads the groups and hands them to write(profiles); a mix of memory and
// CPU streams is an error (exit code 2): they share no unit; but for a page
// (`mixed`), which has a picture of each.
template <class Write>
int with_profiles(const CommandOptions &opt, Write &&write, bool mixed = false) {
  std::vector<std::unique_ptr<Profile>> owned;
  if (const int rc = read_groups(opt, owned)) return rc;
  std::vector<Profile *> profiles;
  for (const auto &p : owned) {
    if (!mixed &&
        (p->has_memory() != owned[0]->has_memory() || (p->has_memory() && p->has_cpu()))) {
      std::cerr << "prof-analyze: memory and CPU streams cannot share one picture or export\n";
      return 2;
    }
    profiles.push_back(p.get());
  }
  return write(profiles);
}

std::string title_of(const CommandOptions &opt) {
  std::string t = "prof-analyze:";
  for (const std::string &f : opt.files) t += " " + basename_of(f);
  return t;
}

}  // namespace

int run_flamegraph(const CommandOptions &opt, std::ostream &out) {
  return with_profiles(opt, [&](const std::vector<Profile *> &profiles) {
    FlameGraphOptions f;
    f.icicle = opt.icicle;
    f.memory = profiles[0]->has_memory();
    f.title = "CPU samples";
    for (const MemoryMetric &m : memory_metrics())
      if (f.memory && opt.folded.metric == m.name) {
        f.title = m.title;
        f.unit = m.unit;
      }
    f.title += " - " + title_of(opt);
    render_flamegraph_svg(folded_stacks(profiles, opt.folded, opt.per_process), f, out);
    return 0;
  });
}

int run_chart(const CommandOptions &opt, std::ostream &out) {
  return with_profiles(opt, [&](const std::vector<Profile *> &profiles) {
    HeapChartOptions c;
    c.title = "Heap over time - " + title_of(opt);
    if (render_heap_chart_svg(profiles, c, out)) return 0;
    std::cerr << "prof-analyze: no heap over time: no memory stream has an event\n";
    return 2;
  });
}

int run_html(const CommandOptions &opt, std::ostream &out) {
  return with_profiles(opt, [&](const std::vector<Profile *> &profiles) {
    HtmlReportOptions h;
    h.title = title_of(opt);
    h.per_process = opt.per_process;
    h.icicle = opt.icicle;
    h.folded = opt.folded;
    h.summary = opt.summary;
    std::vector<std::string> names;
    for (const Profile *p : profiles) names.push_back(p->streams()[0]->file.path());
    write_html_report(profiles, names, h, out);
    return 0;
  }, true);
}

int run_pprof(const CommandOptions &opt, std::ostream &out) {
  return with_profiles(opt, [&](const std::vector<Profile *> &profiles) {
    write_pprof(profiles, opt.per_process, out);
    return 0;
  });
}

int run_speedscope(const CommandOptions &opt, std::ostream &out) {
  return with_profiles(opt, [&](const std::vector<Profile *> &profiles) {
    write_speedscope(profiles, opt.per_process, title_of(opt), out);
    return 0;
  });
}

int run_to_output(const CommandOptions &opt, int (*run)(const CommandOptions &, std::ostream &),
                  const char *writes) {
  if (opt.output.empty()) {
    // XXX: a page of SVG or HTML (or pprof's gzip) on a terminal is of use
    // to no one, and may leave the terminal in a strange state.
    if (isatty(STDOUT_FILENO)) {
      std::cerr << "prof-analyze: this command writes " << writes
                << ", not for a terminal: give -o FILE (or redirect its output)\n";
      return 2;
    }
    return run(opt, std::cout);
  }
  // XXX: written beside the output and renamed once complete, so a failed
  // command leaves no file, and no output is held in memory.
  std::string temp = opt.output + ".XXXXXX";
  const int fd = mkstemp(&temp[0]);
  if (fd < 0) {
    std::cerr << "prof-analyze: cannot write " << opt.output << ": " << strerror(errno) << "\n";
    return 2;
  }
  // mkstemp's 0600, widened to what creating the file would have given.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  close(fd);
  int rc = 2;
  try {
    std::ofstream file(temp, std::ios::binary | std::ios::trunc);
    rc = run(opt, file);
    file.close();
    if (rc == 0 && !file) {
      std::cerr << "prof-analyze: cannot write " << opt.output << "\n";
      rc = 2;
    }
  } catch (...) {
    unlink(temp.c_str());
    throw;
  }
  if (rc == 0 && rename(temp.c_str(), opt.output.c_str()) != 0) {
    std::cerr << "prof-analyze: cannot write " << opt.output << ": " << strerror(errno) << "\n";
    rc = 2;
  }
  if (rc != 0) unlink(temp.c_str());
  return rc;
}

}  // namespace prof
