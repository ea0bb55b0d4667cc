#include "render/heap_chart_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "render/markup.h"
#include "report/memprof_report.h"

namespace prof {
namespace {

constexpr double kWidth = 1200, kHeight = 440;
constexpr double kLeft = 90, kRight = 30, kTop = 50, kBottom = 80;
const char *const kColours[] = {"#c0392b", "#2471a3", "#1e8449", "#7d3c98", "#b9770e", "#117864"};

struct Series {
  uint64_t pid = 0;
  StreamHeap heap;                // its peak and end
  std::vector<HeapPoint> points;  // HeapModel::over_time()
  const std::vector<std::pair<uint64_t, std::string>> *markers = nullptr;
};

struct XY {
  double x, y;
};

std::string fixed(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Round steps (1, 2 or 5 times a power of ten) giving about `n` ticks.
double tick_step(double range, int n) {
  if (range <= 0) return 1;
  const double raw = range / n, power = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * power) return m * power;
  return 10 * power;
}

std::string x_label(double v, bool timed) {
  if (!timed) return grouped(v);
  char buf[32];
  snprintf(buf, sizeof buf, "%g s", v);
  return buf;
}

std::string bytes_label(double v) { return format_bytes(std::round(v), true); }

// The heap's curve of a series, its exact peak and (without time marks) its
// end added: x in seconds (time marks) or events. A peak between two time
// marks gets a time interpolated by events; one after the last mark, that
// mark's time.
std::vector<XY> curve(const Series &s, bool timed, XY *peak) {
  std::vector<XY> xy;
  *peak = {timed ? time_of_event(s.points, s.heap.file, s.heap.peak_events) : double(s.heap.peak_events), s.heap.peak_bytes};
  bool placed = false;
  xy.push_back({0, 0});  // nothing is recorded before the process starts
  for (const HeapPoint &p : s.points) {
    if (!placed && p.events >= s.heap.peak_events) {
      xy.push_back(*peak);
      placed = true;
    }
    xy.push_back({timed ? double(p.time_ns) / 1e9 : double(p.events), p.heap_bytes});
  }
  if (!placed) xy.push_back(*peak);
  if (!timed && s.heap.end_events > s.heap.peak_events)
    xy.push_back({double(s.heap.end_events), s.heap.end_bytes});
  return xy;
}

}  // namespace

bool render_heap_chart_svg(const std::vector<Profile *> &profiles, const HeapChartOptions &opt,
                           std::ostream &out) {
  std::vector<Series> series;
  for (Profile *profile : profiles) {
    std::map<uint32_t, size_t> by_file;
    for (const StreamHeap &h : profile->memory().stream_heaps()) {
      by_file[h.file] = series.size();
      series.emplace_back();
      series.back().pid = profile->streams()[h.file]->pid;
      series.back().heap = h;
      series.back().markers = &profile->streams()[h.file]->markers;
    }
    for (const HeapPoint &p : profile->memory().over_time()) {
      auto it = by_file.find(p.file);
      if (it != by_file.end()) series[it->second].points.push_back(p);
    }
  }
  if (series.empty()) return false;

  bool timed = true;
  for (const Series &s : series) {
    timed = timed && !s.points.empty();
    for (const HeapPoint &p : s.points) timed = timed && p.timed;
  }
  std::vector<std::vector<XY>> curves;
  std::vector<XY> peaks(series.size());
  double x_max = 0, y_max = 0;
  for (size_t i = 0; i < series.size(); i++) {
    curves.push_back(curve(series[i], timed, &peaks[i]));
    for (const XY &p : curves.back()) {
      x_max = std::max(x_max, p.x);
      y_max = std::max(y_max, p.y);
    }
    if (!timed) continue;
    for (const HeapPoint &p : series[i].points) y_max = std::max(y_max, double(p.rss));
    for (const auto &m : *series[i].markers) x_max = std::max(x_max, double(m.first) / 1e9);
  }
  // Bytes in steps of a round number of B, KiB, MiB or GiB.
  double unit = 1;
  while (unit < 1024.0 * 1024 * 1024 && y_max >= unit * 1024) unit *= 1024;
  const double x_step = tick_step(x_max, 10), y_step = tick_step(y_max / unit, 6) * unit;
  x_max = std::max(x_step, std::ceil(x_max / x_step) * x_step);
  y_max = std::max(y_step, std::ceil(y_max / y_step) * y_step);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + x / x_max * plot_w; };
  auto py = [&](double y) { return kTop + plot_h - y / y_max * plot_h; };

  if (opt.standalone) out << "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"pf-chart\" id=\""
      << escape_markup(opt.id) << "\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << kWidth << " " << kHeight << "\">\n"
      << "<style>\n"
         ".pf-chart text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; "
         "fill: #222; }\n"
         ".pf-chart .title { font-size: 17px; text-anchor: middle; }\n"
         ".pf-chart .grid { stroke: #ddd; stroke-width: 1; }\n"
         ".pf-chart polyline { fill: none; stroke-width: 2; }\n"
         ".pf-chart .rss { stroke-dasharray: 6 4; stroke-width: 1.5; }\n"
         "</style>\n"
      << "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#fbfbf8\"/>\n"
      << "<text class=\"title\" x=\"" << kWidth / 2 << "\" y=\"26\">" << escape_markup(opt.title)
      << "</text>\n";

  for (double y = 0; y <= y_max * 1.0001; y += y_step)
    out << "<line class=\"grid\" x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\""
        << fixed(py(y)) << "\" y2=\"" << fixed(py(y)) << "\"/><text x=\"" << kLeft - 8 << "\" y=\""
        << fixed(py(y) + 4) << "\" text-anchor=\"end\">" << bytes_label(y) << "</text>\n";
  for (double x = 0; x <= x_max * 1.0001; x += x_step)
    out << "<line class=\"grid\" x1=\"" << fixed(px(x)) << "\" x2=\"" << fixed(px(x)) << "\" y1=\""
        << kTop << "\" y2=\"" << kTop + plot_h << "\"/><text x=\"" << fixed(px(x)) << "\" y=\""
        << kTop + plot_h + 18 << "\" text-anchor=\"middle\">" << x_label(x, timed) << "</text>\n";
  out << "<text x=\"" << kLeft + plot_w / 2 << "\" y=\"" << kTop + plot_h + 38
      << "\" text-anchor=\"middle\">"
      << (timed ? "seconds since the process started" : "events read") << "</text>\n";

  double legend_x = kLeft;
  for (size_t i = 0; i < series.size(); i++) {
    const Series &s = series[i];
    const char *colour = kColours[i % (sizeof kColours / sizeof *kColours)];
    const std::string who = "pid " + std::to_string(s.pid);
    if (timed)
      for (const auto &m : *s.markers) {
        const std::string x = fixed(px(double(m.first) / 1e9));
        out << "<g class=\"marker\"><title>" << escape_markup(who + ": marker " + m.second)
            << "</title><line x1=\"" << x << "\" x2=\"" << x << "\" y1=\"" << kTop << "\" y2=\""
            << kTop + plot_h << "\" stroke=\"#888\" stroke-dasharray=\"2 3\"/><text x=\"" << x
            << "\" y=\"" << kTop + 12 << "\" transform=\"rotate(90 " << x << " " << kTop + 12
            << ")\">" << escape_markup(m.second) << "</text></g>\n";
      }
    out << "<polyline class=\"heap\" data-pid=\"" << s.pid << "\" stroke=\"" << colour
        << "\" points=\"";
    for (const XY &p : curves[i]) out << fixed(px(p.x)) << "," << fixed(py(p.y)) << " ";
    out << "\"><title>" << who << ": heap</title></polyline>\n";
    if (timed) {
      out << "<polyline class=\"rss\" data-pid=\"" << s.pid << "\" stroke=\"" << colour
          << "\" points=\"";
      for (const HeapPoint &p : s.points)
        out << fixed(px(double(p.time_ns) / 1e9)) << "," << fixed(py(double(p.rss))) << " ";
      out << "\"><title>" << who << ": RSS</title></polyline>\n";
    }
    const XY &peak = peaks[i];
    const std::string peak_text = who + ": peak " + bytes_label(peak.y) + " (" + grouped(peak.y) +
                                  " bytes) at " + x_label(peak.x, timed) +
                                  (timed ? "" : " (event " + grouped(peak.x) + ")");
    out << "<circle class=\"peak\" data-pid=\"" << s.pid << "\" data-bytes=\""
        << format_count(peak.y) << "\" data-events=\"" << s.heap.peak_events << "\" cx=\""
        << fixed(px(peak.x)) << "\" cy=\"" << fixed(py(peak.y)) << "\" r=\"5\" fill=\"" << colour
        << "\" stroke=\"#000\"><title>" << escape_markup(peak_text) << "</title></circle>\n"
        << "<text x=\"" << fixed(px(peak.x) + 8) << "\" y=\"" << fixed(py(peak.y) - 8) << "\">peak "
        << bytes_label(peak.y) << "</text>\n";
    out << "<rect x=\"" << legend_x << "\" y=\"" << kHeight - 22
        << "\" width=\"14\" height=\"4\" fill=\"" << colour << "\"/><text x=\"" << legend_x + 20
        << "\" y=\"" << kHeight - 16 << "\">" << who
        << (timed ? ": heap (solid), RSS (dashed)" : ": heap") << "</text>\n";
    legend_x += timed ? 300 : 140;
  }
  out << "</svg>\n";
  return true;
}

}  // namespace prof
