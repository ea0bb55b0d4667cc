#include "render/heap_chart_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "render/heap_bands.h"
#include "render/markup.h"
#include "report/memprof_report.h"

namespace prof {
namespace {

constexpr double kWidth = 1200, kLeft = 90, kRight = 30;
constexpr double kTitle = 30, kPanelTop = 50, kPlotHeight = 300, kAxis = 50, kLegendRow = 18;
// The processes' heap and RSS lines.
const char *const kLineColours[] = {"#c0392b", "#2471a3", "#1e8449", "#7d3c98", "#b9770e", "#117864"};
// The bands, largest first (Tableau 10), then "other stacks".
const char *const kBandColours[] = {"#4e79a7", "#f28e2b", "#76b7b2", "#59a14f", "#edc948",
                                    "#b07aa1", "#ff9da7", "#9c755f", "#8cd17d", "#d4a6c8"};
const char kOtherColour[] = "#c8c8c8";
constexpr size_t kLabelChars = 72;

std::string fixed(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string number(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.12g", v);
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

// As `summary` prints the peak's time.
std::string peak_time(double x, bool timed) {
  if (!timed) return "event " + grouped(x);
  char buf[48];
  snprintf(buf, sizeof buf, "%.3f s", x);
  return buf;
}

std::string shortened(const std::string &label) {
  if (label.size() <= kLabelChars) return label;
  size_t cut = kLabelChars - 1;
  while (cut > 0 && (label[cut] & 0xC0) == 0x80) cut--;  // not inside a UTF-8 character
  return label.substr(0, cut) + "\xE2\x80\xA6";
}

void write_data(const ProcessHeap &h, std::ostream &out) {
  auto list = [&](const std::vector<double> &v) {
    out << '[';
    for (size_t i = 0; i < v.size(); i++) out << (i ? "," : "") << number(v[i]);
    out << ']';
  };
  out << "<script type=\"application/json\" class=\"pf-bands\" data-pid=\"" << h.pid
      << "\"><![CDATA[{\"pid\":" << h.pid << ",\"unit\":\"" << (h.timed ? "s" : "events")
      << "\",\"x\":";
  list(h.x);
  out << ",\"total\":";
  list(h.total);
  out << ",\"peak\":" << h.peak << ",\"bands\":[";
  for (size_t b = 0; b < h.bands.size(); b++) {
    out << (b ? "," : "") << "{\"label\":" << json_string(h.bands[b].label)
        << ",\"frames\":" << json_string(h.bands[b].frames) << ",\"bytes\":";
    list(h.bands[b].bytes);
    out << '}';
  }
  out << "]}]]></script>\n";
}

// One process's panel, its top at `top`; returns its height.
double write_panel(const ProcessHeap &h, size_t index, double top, std::ostream &out) {
  const char *line_colour = kLineColours[index % (sizeof kLineColours / sizeof *kLineColours)];
  double x_max = 0, y_max = 0;
  for (double x : h.x) x_max = std::max(x_max, x);
  for (double y : h.total) y_max = std::max(y_max, y);
  // XXX: one RSS figure (a single time mark, at exit) is no line, and would
  // only squash the heap.
  const bool rss = h.rss.size() > 1;
  double rss_max = 0;
  if (rss)
    for (const auto &[x, bytes] : h.rss) rss_max = std::max(rss_max, bytes);
  // XXX: an RSS far above the heap (the runtime's own memory, a VM's
  // arenas) would squash the bands: it runs along the top, clipped.
  const bool rss_clipped = rss_max > 2 * y_max && y_max > 0;
  if (!rss_clipped) y_max = std::max(y_max, rss_max);
  if (h.timed)
    for (const auto &m : *h.markers) x_max = std::max(x_max, double(m.first) / 1e9);
  // Bytes in steps of a round number of B, KiB, MiB or GiB.
  double unit = 1;
  while (unit < 1024.0 * 1024 * 1024 && y_max >= unit * 1024) unit *= 1024;
  const double x_step = tick_step(x_max, 10), y_step = tick_step(y_max / unit, 6) * unit;
  x_max = std::max(x_step, std::ceil(x_max / x_step) * x_step);
  y_max = std::max(y_step, std::ceil(y_max / y_step) * y_step);
  const double plot_top = top + kPanelTop, plot_w = kWidth - kLeft - kRight;
  auto px = [&](double x) { return kLeft + x / x_max * plot_w; };
  auto py = [&](double y) { return plot_top + kPlotHeight - y / y_max * kPlotHeight; };
  const std::string who = "pid " + std::to_string(h.pid);
  const double peak_x = h.x[h.peak], peak_y = h.total[h.peak];
  const std::string peak_text = "peak " + bytes_label(peak_y) + " at " + peak_time(peak_x, h.timed);

  out << "<g class=\"panel\" data-pid=\"" << h.pid << "\">\n<text class=\"subtitle\" x=\""
      << kLeft << "\" y=\"" << top + 24 << "\">"
      << escape_markup(who + ": the heap by allocating stack, those holding the most at the "
                             "peak at the bottom (hover for the full stack)")
      << "</text>\n";
  write_data(h, out);
  for (double y = 0; y <= y_max * 1.0001; y += y_step)
    out << "<line class=\"grid\" x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\""
        << fixed(py(y)) << "\" y2=\"" << fixed(py(y)) << "\"/><text x=\"" << kLeft - 8 << "\" y=\""
        << fixed(py(y) + 4) << "\" text-anchor=\"end\">" << bytes_label(y) << "</text>\n";
  for (double x = 0; x <= x_max * 1.0001; x += x_step)
    out << "<line class=\"grid\" x1=\"" << fixed(px(x)) << "\" x2=\"" << fixed(px(x)) << "\" y1=\""
        << plot_top << "\" y2=\"" << plot_top + kPlotHeight << "\"/><text x=\"" << fixed(px(x))
        << "\" y=\"" << plot_top + kPlotHeight + 18 << "\" text-anchor=\"middle\">"
        << x_label(x, h.timed) << "</text>\n";
  out << "<text x=\"" << kLeft + plot_w / 2 << "\" y=\"" << plot_top + kPlotHeight + 38
      << "\" text-anchor=\"middle\">"
      << (h.timed ? "seconds since the process started" : "events read") << "</text>\n";

  // The bands, each between the sum of those below it and that plus its own.
  std::vector<double> below(h.x.size(), 0);
  for (size_t b = 0; b < h.bands.size(); b++) {
    const HeapBand &band = h.bands[b];
    const bool other = band.frames.empty() && b + 1 == h.bands.size() && b > 0;
    const char *colour = other ? kOtherColour : kBandColours[b % 10];
    out << "<path class=\"band\" data-pid=\"" << h.pid << "\" data-band=\"" << b << "\" fill=\""
        << colour << "\" d=\"M";
    for (size_t i = 0; i < h.x.size(); i++)
      out << (i ? " " : "") << fixed(px(h.x[i])) << "," << fixed(py(below[i] + band.bytes[i]));
    for (size_t i = h.x.size(); i-- > 0;)
      out << " " << fixed(px(h.x[i])) << "," << fixed(py(below[i]));
    out << "Z\"><title>" << escape_markup(band.label + ": " + bytes_label(band.bytes[h.peak]) +
                                          " at the peak" +
                                          (band.frames.empty() ? "" : "\n" + band.frames))
        << "</title></path>\n";
    for (size_t i = 0; i < h.x.size(); i++) below[i] += band.bytes[i];
  }

  if (h.timed)
    for (const auto &m : *h.markers) {
      const std::string x = fixed(px(double(m.first) / 1e9));
      out << "<g class=\"marker\"><title>" << escape_markup(who + ": marker " + m.second)
          << "</title><line x1=\"" << x << "\" x2=\"" << x << "\" y1=\"" << plot_top
          << "\" y2=\"" << plot_top + kPlotHeight
          << "\" stroke=\"#888\" stroke-dasharray=\"2 3\"/><text x=\"" << x << "\" y=\""
          << plot_top + 12 << "\" transform=\"rotate(90 " << x << " " << plot_top + 12 << ")\">"
          << escape_markup(m.second) << "</text></g>\n";
    }
  out << "<polyline class=\"heap\" data-pid=\"" << h.pid << "\" stroke=\"" << line_colour
      << "\" points=\"";
  for (size_t i = 0; i < h.x.size(); i++) out << fixed(px(h.x[i])) << "," << fixed(py(h.total[i])) << " ";
  out << "\"><title>" << who << ": heap</title></polyline>\n";
  if (rss) {
    out << "<polyline class=\"rss\" data-pid=\"" << h.pid << "\" stroke=\"" << line_colour
        << "\" points=\"";
    for (const auto &[x, bytes] : h.rss) out << fixed(px(x)) << "," << fixed(py(std::min(bytes, y_max))) << " ";
    out << "\"><title>" << who << ": RSS</title></polyline>\n";
  }

  const std::string peak_title = who + ": peak " + bytes_label(peak_y) + " (" + grouped(peak_y) +
                                 " bytes) at " + x_label(peak_x, h.timed) +
                                 (h.timed ? "" : " (event " + grouped(peak_x) + ")");
  out << "<line class=\"peak-time\" x1=\"" << fixed(px(peak_x)) << "\" x2=\"" << fixed(px(peak_x))
      << "\" y1=\"" << plot_top << "\" y2=\"" << plot_top + kPlotHeight << "\"/>\n"
      << "<circle class=\"peak\" data-pid=\"" << h.pid << "\" data-bytes=\"" << format_count(peak_y)
      << "\" data-events=\"" << h.peak_events << "\" cx=\"" << fixed(px(peak_x)) << "\" cy=\""
      << fixed(py(peak_y)) << "\" r=\"5\" fill=\"" << line_colour << "\" stroke=\"#000\"><title>"
      << escape_markup(peak_title) << "</title></circle>\n";
  const bool right = px(peak_x) > kLeft + plot_w * 0.7;  // the label left of a late peak
  out << "<text class=\"peak-label\" x=\"" << fixed(px(peak_x) + (right ? -8 : 8)) << "\" y=\""
      << plot_top - 6 << "\" text-anchor=\"" << (right ? "end" : "start") << "\">"
      << escape_markup(peak_text) << "</text>\n";

  // The legend: two columns of bands, largest first, then the lines.
  const double legend_top = plot_top + kPlotHeight + kAxis;
  const size_t rows = (h.bands.size() + 1) / 2 + 1;
  for (size_t b = 0; b < h.bands.size(); b++) {
    const HeapBand &band = h.bands[b];
    const bool other = band.frames.empty() && b + 1 == h.bands.size() && b > 0;
    const double x = kLeft + (b % 2) * plot_w / 2, y = legend_top + double(b / 2) * kLegendRow;
    out << "<g class=\"legend\" data-band=\"" << b << "\"><title>"
        << escape_markup(band.frames.empty() ? "stacks not drawn apart" : band.frames)
        << "</title><rect x=\"" << x << "\" y=\"" << y - 10 << "\" width=\"12\" height=\"12\" fill=\""
        << (other ? kOtherColour : kBandColours[b % 10]) << "\"/><text x=\"" << x + 18 << "\" y=\""
        << y << "\">" << escape_markup(shortened(band.label)) << "</text></g>\n";
  }
  const double lines_y = legend_top + double(rows - 1) * kLegendRow;
  out << "<rect x=\"" << kLeft << "\" y=\"" << lines_y - 6 << "\" width=\"14\" height=\"3\" fill=\""
      << line_colour << "\"/><text x=\"" << kLeft + 20 << "\" y=\"" << lines_y << "\">" << who
      << (!rss ? ": heap (line)"
          : rss_clipped ? ": heap (solid line), RSS (dashed, clipped: it reaches " + bytes_label(rss_max) + ")"
                        : ": heap (solid line), RSS (dashed)")
      << "; the dashed black line: the peak's time</text>\n</g>\n";
  return kPanelTop + kPlotHeight + kAxis + double(rows) * kLegendRow;
}

}  // namespace

bool render_heap_chart_svg(const std::vector<Profile *> &profiles, const HeapChartOptions &opt,
                           std::ostream &out) {
  const std::vector<ProcessHeap> heaps = heap_over_time(profiles);
  if (heaps.empty()) return false;
  // XXX: panels are drawn first, their height known only once drawn.
  std::ostringstream panels;
  double height = kTitle;
  for (size_t i = 0; i < heaps.size(); i++) height += write_panel(heaps[i], i, height, panels);
  height += 10;

  if (opt.standalone) out << "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"pf-chart\" id=\""
      << escape_markup(opt.id) << "\" width=\"" << kWidth << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << kWidth << " " << height << "\">\n"
      << "<style>\n"
         ".pf-chart text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; "
         "fill: #222; }\n"
         ".pf-chart .title { font-size: 17px; text-anchor: middle; }\n"
         ".pf-chart .subtitle { font-size: 14px; }\n"
         ".pf-chart .grid { stroke: #ddd; stroke-width: 1; }\n"
         ".pf-chart polyline { fill: none; stroke-width: 2; }\n"
         ".pf-chart .rss { stroke-dasharray: 6 4; stroke-width: 1.5; }\n"
         ".pf-chart .band { stroke: #fff; stroke-width: 0.5; fill-opacity: 0.85; }\n"
         ".pf-chart .band:hover { fill-opacity: 1; stroke: #000; }\n"
         ".pf-chart .peak-time { stroke: #000; stroke-dasharray: 4 3; }\n"
         ".pf-chart .peak-label { font-weight: bold; }\n"
         "</style>\n"
      << "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#fbfbf8\"/>\n"
      << "<text class=\"title\" x=\"" << kWidth / 2 << "\" y=\"22\">" << escape_markup(opt.title)
      << "</text>\n"
      << panels.str() << "</svg>\n";
  return true;
}

}  // namespace prof
