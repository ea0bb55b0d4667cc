// The heap over time as one self-contained SVG line chart: per process
// (memory stream), its heap and, where time marks give it, its RSS, with
// the heap's peak marked and the stream's markers drawn as labelled
// vertical lines.
//
// Picture: x is seconds since each process started when every series has
// time marks, else the events read; y is bytes. Each process's heap is a
//   <polyline class="heap" data-pid=PID .../>
// through the points of HeapModel::over_time(), its exact peak (and without
// time marks its end) added; with time marks, its RSS a dashed
// <polyline class="rss" .../>. The peak is a
//   <circle class="peak" data-pid=PID data-bytes=BYTES data-events=N>
// at the first event that reached it (between two time marks its time is
// interpolated by events).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "model/profile.h"

namespace prof {

struct HeapChartOptions {
  std::string title = "Heap over time";
  std::string id = "heap-chart";  // the <svg>'s id, unique within a page
  bool standalone = true;         // a file of its own (XML declaration), else inline in HTML
};

// Draws the chart and returns true, or writes nothing and returns false
// when no memory stream has a point.
bool render_heap_chart_svg(const std::vector<Profile *> &profiles, const HeapChartOptions &opt,
                           std::ostream &out);

}  // namespace prof
