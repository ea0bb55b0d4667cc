// The heap over time as one self-contained SVG chart: a panel per process
// (memory stream), its heap stacked by its largest stacks (heap_bands.h,
// heaptrack's "consumed" view), its RSS where time marks give it, the time
// of its peak marked, and the stream's markers drawn as labelled vertical
// lines.
//
// Picture: a panel's x is seconds since its process started when all its
// points have time marks, else the events read; y is bytes. Each band is a
//   <path class="band" data-pid=PID data-band=I ...><title>LABEL, bytes at
//   the peak, every frame</title></path>
// stacked from the largest (I = 0) up, "other stacks" last; its legend
// entry names the stack's innermost frame that is not the allocator's. The
// heap is a <polyline class="heap" data-pid=PID .../> over the bands; with
// time marks the RSS a dashed <polyline class="rss" .../>. The peak is a
//   <circle class="peak" data-pid=PID data-bytes=BYTES data-events=N>
// at the first event that reached it (between two time marks its time is
// interpolated by events, as `summary` gives it) on a vertical line
// labelled "peak BYTES at T s". Each panel carries its data:
//   <script type="application/json" class="pf-bands" data-pid=PID><![CDATA[
//     {"pid": PID, "unit": "s" or "events", "x": [X...], "total": [BYTES...],
//      "peak": INDEX, "bands": [{"label": L, "frames": F, "bytes": [BYTES...]}...]}
//   ]]></script>
// with ProcessHeap's figures: at each point the bands' bytes add up to the
// total.
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
