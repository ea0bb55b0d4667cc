#include "render/html_report.h"

#include <sstream>

#include "render/flamegraph_svg.h"
#include "render/heap_chart_svg.h"
#include "render/markup.h"
#include "render/summary_tables.h"

namespace prof {
namespace {

const char kStyle[] = R"CSS(
body { font-family: Verdana, 'DejaVu Sans', sans-serif; margin: 1em 2em; color: #222; background: #fff; }
h1 { font-size: 1.4em; }
h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
nav a { margin-right: 1.2em; }
pre { background: #f6f6f3; padding: 0.8em; overflow-x: auto; font-size: 12px; }
svg { max-width: 100%; height: auto; display: block; }
.note { color: #555; font-size: 0.9em; }
table.pf-table { border-collapse: collapse; margin: 0.6em 0 1.2em; font-size: 12px; }
.pf-table caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
.pf-table th, .pf-table td { border: 1px solid #ddd; padding: 2px 6px; text-align: left; }
.pf-table th { background: #f0f0ea; cursor: pointer; }
.pf-table th[data-sorted=down]::after { content: ' \25BC'; }
.pf-table th[data-sorted=up]::after { content: ' \25B2'; }
.pf-table td.n { text-align: right; font-variant-numeric: tabular-nums; }
)CSS";

// XXX: registered before any picture's script, so their errors are seen.
const char kErrorScript[] = R"JS(
window.addEventListener('error', function (e) {
  var root = document.documentElement;
  root.setAttribute('data-errors', (root.getAttribute('data-errors') || '') + e.message + '\n');
});
)JS";

const char kReadyScript[] = R"JS(
document.body.setAttribute('data-ready',
    String(document.querySelectorAll('svg.pf-flame[data-ready]').length));
)JS";

struct Section {
  std::string id, heading, note, body;
};

}  // namespace

void write_html_report(const std::vector<Profile *> &profiles,
                       const std::vector<std::string> &names, const HtmlReportOptions &opt,
                       std::ostream &out) {
  std::vector<Section> sections;

  bool memory = false, cpu = false;
  for (const Profile *p : profiles) {
    memory = memory || p->has_memory();
    cpu = cpu || p->has_cpu();
  }
  if (memory) {
    std::ostringstream chart;
    HeapChartOptions chart_opt;
    chart_opt.standalone = false;
    chart_opt.id = "heap-svg";
    if (render_heap_chart_svg(profiles, chart_opt, chart))
      sections.push_back({"heap", "Heap over time",
                          "Each process's heap, split by the stacks that allocated it: the ten "
                          "holding the most at its peak, the rest as \"other stacks\" (hover a "
                          "band or its legend for the full stack). The dot and the dashed line "
                          "mark the peak, at the first event that reached it; the RSS is dashed "
                          "where time marks give it.",
                          chart.str()});
  }

  FlameGraphOptions flame;
  flame.standalone = false;
  flame.icicle = opt.icicle;
  flame.memory = memory;
  FoldedOptions folded = opt.folded;
  const std::string how = "Click a frame to zoom, Search to highlight; widths are counts.";
  auto add_flame = [&](const std::string &id, const std::string &title, const std::string &unit) {
    std::ostringstream svg;
    flame.id = id + "-svg";
    flame.title = title;
    flame.unit = unit;
    render_flamegraph_svg(folded_stacks(profiles, folded, opt.per_process), flame, svg);
    sections.push_back({id, title, how, svg.str()});
  };
  if (memory) {
    folded.domain = FoldedOptions::Domain::Memory;
    for (const MemoryMetric &m : memory_metrics()) {
      if (m.measured && profiles[0]->memory().measured_contexts() == 0) continue;
      folded.metric = m.name;
      add_flame(std::string("flame-") + m.name, m.title, m.unit);
    }
  }
  if (cpu) {
    folded.domain = FoldedOptions::Domain::Cpu;
    flame.memory = false;
    add_flame("flame-cpu", "CPU samples", "samples");
  }

  std::ostringstream summary;
  for (size_t i = 0; i < profiles.size(); i++) {
    if (opt.per_process) summary << "<h3>" << escape_markup(names[i]) << "</h3>\n";
    write_summary_tables(summary_json(*profiles[i], opt.summary), summary);
  }
  sections.push_back({"summary", "Summary", "Click a column's heading to sort by it.",
                      summary.str()});

  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
      << escape_markup(opt.title) << "</title>\n<style>" << kStyle << "</style>\n<script>"
      << kErrorScript << "</script>\n</head>\n<body>\n<h1>" << escape_markup(opt.title)
      << "</h1>\n<nav>";
  for (const Section &s : sections)
    out << "<a href=\"#" << s.id << "\">" << escape_markup(s.heading) << "</a>";
  out << "</nav>\n";
  for (const Section &s : sections) {
    out << "<section id=\"" << s.id << "\">\n<h2>" << escape_markup(s.heading) << "</h2>\n";
    if (!s.note.empty()) out << "<p class=\"note\">" << escape_markup(s.note) << "</p>\n";
    out << s.body << "</section>\n";
  }
  out << "<script>" << kSortTablesScript << kReadyScript << "</script>\n</body>\n</html>\n";
}

}  // namespace prof
