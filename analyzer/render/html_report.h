// The HTML report: one self-contained page (styles, scripts and pictures
// inline; nothing fetched) with the heap over time, a flame graph per memory
// metric (alloc-bytes, alloc-count, leaked-bytes, peak-bytes) and one of the
// CPU samples (a run's memory and CPU streams read together have both), and
// the summary of each group of streams.
//
// Page: <section id="heap"> (memory only), one <section id="flame-METRIC">
// (flame-cpu for CPU) per flame graph, each holding an inline <svg>
// (heap_chart_svg.h, flamegraph_svg.h), then <section id="summary"> with
// the summary as sortable tables (summary_tables.h). A script in
// <head> records script errors in <html data-errors="...">; one at the end
// sets <body data-ready=N> to the flame graphs that set themselves up.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/folded.h"
#include "model/profile.h"
#include "report/summary.h"

namespace prof {

struct HtmlReportOptions {
  std::string title;
  bool per_process = false;  // summaries under "== FILE", flame graphs under "[pid N]" roots
  bool icicle = false;
  FoldedOptions folded;  // by_vmstate for the CPU graph (the metric is each of them)
  SummaryOptions summary;
};

// `profiles`: the groups of streams read together (memory, CPU or both),
// each named by `names` (its first file) in the summary.
void write_html_report(const std::vector<Profile *> &profiles,
                       const std::vector<std::string> &names, const HtmlReportOptions &opt,
                       std::ostream &out);

}  // namespace prof
