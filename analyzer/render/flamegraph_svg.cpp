#include "render/flamegraph_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "render/markup.h"
#include "report/memprof_report.h"

namespace prof {
namespace {

constexpr double kWidth = 1200, kPad = 10, kFrameHeight = 16, kFontSize = 12;
constexpr double kTop = 66, kBottom = 34;  // title and buttons; the details line
constexpr double kCharWidth = kFontSize * 0.59;
constexpr double kMinWidth = 0.1;  // px: narrower frames are left out

// Each node's count with those of the stacks through it (node 0, the root,
// is "all"): the rounded counts of the stacks, added up from the leaves,
// whose index is above their parent's.
std::vector<double> totals(const FoldedStacks &stacks) {
  std::vector<double> total(stacks.names.size());
  for (uint32_t n = stacks.names.size(); n-- > 1;) {
    const double own = std::round(stacks.count(n));
    total[n] += own >= 1 ? own : 0;
    total[stacks.names.parent(n)] += total[n];
  }
  return total;
}

// A colour of the palette, fixed by the name so graphs of two runs compare.
std::string colour(const std::string &name, bool memory, bool root) {
  if (root) return "rgb(200,200,196)";
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  const double a = double(h & 0xff) / 255, b = double((h >> 8) & 0xff) / 255,
               c = double((h >> 16) & 0xff) / 255;
  int r, g, bl;
  if (!name.empty() && name[0] == '@') {  // guest (Lua) functions: blues
    r = int(70 + 60 * a), g = int(140 + 60 * b), bl = int(215 + 40 * c);
  } else if (memory) {
    r = int(40 + 70 * a), g = int(160 + 65 * b), bl = int(60 + 80 * c);
  } else {
    r = int(220 + 35 * a), g = int(70 + 140 * b), bl = int(20 + 45 * c);
  }
  return "rgb(" + std::to_string(r) + "," + std::to_string(g) + "," + std::to_string(bl) + ")";
}

std::string fixed(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// The name cut to what fits in `width` px, as the script cuts it.
std::string label(const std::string &name, double width) {
  const double fits = std::floor((width - 6) / kCharWidth);
  if (double(name.size()) <= fits) return name;
  return fits >= 3 ? name.substr(0, size_t(fits) - 2) + ".." : "";
}

// XXX: zooming needs only each frame's START, COUNT and DEPTH: in this
// layout the frames inside a frame's span and deeper are its descendants.
const char kScript[] = R"JS(
(function (svg) {
  var pad = +svg.getAttribute('data-pad'), span = +svg.getAttribute('data-width') - 2 * pad;
  var total = +svg.getAttribute('data-total'), charWidth = +svg.getAttribute('data-char-width');
  var frames = [].slice.call(svg.querySelectorAll('g.f')).map(function (g) {
    var title = g.querySelector('title').textContent, rect = g.querySelector('rect');
    return {g: g, rect: rect, text: g.querySelector('text'), fill: rect.getAttribute('fill'),
            name: title.slice(0, title.lastIndexOf(' (')), s: +g.getAttribute('data-s'),
            v: +g.getAttribute('data-v'), d: +g.getAttribute('data-d'), title: title};
  });
  var details = svg.querySelector('.details'), matched = svg.querySelector('.matched');
  var resetButton = svg.querySelector('.reset'), searchButton = svg.querySelector('.search');
  var pattern = '';
  function label(f, width) {
    var fits = Math.floor((width - 6) / charWidth);
    return f.name.length <= fits ? f.name : fits >= 3 ? f.name.slice(0, fits - 2) + '..' : '';
  }
  function place(f, x, width) {
    f.rect.setAttribute('x', x.toFixed(2));
    f.rect.setAttribute('width', width.toFixed(2));
    f.text.setAttribute('x', (x + 3).toFixed(2));
    f.text.textContent = label(f, width);
  }
  function zoomOn(z) {
    frames.forEach(function (f) {
      var inside = f.d >= z.d && f.s >= z.s && f.s + f.v <= z.s + z.v;
      var around = f.d < z.d && f.s <= z.s && f.s + f.v >= z.s + z.v;
      f.g.style.display = inside || around ? '' : 'none';
      f.g.classList.toggle('parent', around);
      if (inside) place(f, pad + (f.s - z.s) / z.v * span, f.v / z.v * span);
      else if (around) place(f, pad, span);
    });
    resetButton.style.opacity = z.d ? 1 : 0;
  }
  function search(re) {
    pattern = re || '';
    var regex = new RegExp(pattern), spans = [];
    frames.forEach(function (f) {
      var hit = pattern !== '' && regex.test(f.name);
      f.rect.setAttribute('fill', hit ? 'rgb(230,0,230)' : f.fill);
      if (hit) spans.push([f.s, f.s + f.v]);
    });
    // Nested matches count once: the union of the matched spans.
    spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
    var sum = 0, end = 0;
    spans.forEach(function (p) {
      if (p[1] > end) { sum += p[1] - Math.max(p[0], end); end = p[1]; }
    });
    matched.textContent = pattern ? 'Matched: ' + (100 * sum / total).toFixed(2) + '%' : '';
    searchButton.textContent = pattern ? 'Reset Search' : 'Search';
    return sum;
  }
  frames.forEach(function (f) {
    f.g.addEventListener('click', function () { zoomOn(f); });
    f.g.addEventListener('mouseover', function () { details.textContent = f.title; });
    f.g.addEventListener('mouseout', function () { details.textContent = ''; });
  });
  resetButton.addEventListener('click', function () { zoomOn(frames[0]); });
  searchButton.addEventListener('click', function () {
    if (pattern) { search(''); return; }
    var re = window.prompt('Search frames (regular expression):', '');
    try { if (re) search(re); } catch (e) { matched.textContent = 'Bad expression: ' + e.message; }
  });
  svg.profFlame = {
    zoom: function (name) {
      var f = frames.filter(function (f) { return f.name === name; })[0];
      if (f) zoomOn(f);
      return !!f;
    },
    search: search,
    reset: function () { zoomOn(frames[0]); }
  };
  svg.setAttribute('data-ready', String(frames.length));
})(document.getElementById(ID));
)JS";

}  // namespace

void render_flamegraph_svg(const FoldedStacks &stacks, const FlameGraphOptions &opt,
                           std::ostream &out) {
  const NameTree &names = stacks.names;
  const std::vector<double> value = totals(stacks);
  const PrefixTree::Children children = names.tree().children();
  const double total = value[0], span = kWidth - 2 * kPad;
  auto name_of = [&](uint32_t n) { return n ? std::string(names.name(n)) : std::string("all"); };
  struct Placed {
    uint32_t node;
    double start;
    int depth;
  };
  // Depth first, children in name order; only frames wide enough to see.
  std::vector<Placed> placed;
  std::vector<Placed> todo;
  if (total > 0) todo.push_back({0, 0, 0});
  int depth_max = 0;
  while (!todo.empty()) {
    const Placed p = todo.back();
    todo.pop_back();
    if (value[p.node] / total * span < kMinWidth) continue;
    placed.push_back(p);
    depth_max = std::max(depth_max, p.depth);
    std::vector<uint32_t> kids(children.begin(p.node), children.end(p.node));
    std::sort(kids.begin(), kids.end(),
              [&](uint32_t a, uint32_t b) { return names.name(a) < names.name(b); });
    double start = p.start;
    const size_t first = todo.size();
    for (uint32_t kid : kids) {
      todo.push_back({kid, start, p.depth + 1});
      start += value[kid];
    }
    std::reverse(todo.begin() + long(first), todo.end());
  }
  const double height = kTop + (depth_max + 1) * kFrameHeight + kBottom;
  const std::string id = escape_markup(opt.id), h = fixed(height);

  if (opt.standalone) out << "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"pf-flame\" id=\"" << id
      << "\" width=\"" << kWidth << "\" height=\"" << h << "\" viewBox=\"0 0 " << kWidth << " " << h
      << "\" data-width=\"" << kWidth << "\" data-pad=\"" << kPad << "\" data-total=\""
      << format_count(total) << "\" data-char-width=\"" << kCharWidth << "\">\n"
      << "<style>\n"
         ".pf-flame text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: "
      << kFontSize
      << "px; fill: #000; }\n"
         ".pf-flame g.f { cursor: pointer; }\n"
         ".pf-flame g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
         ".pf-flame .parent { opacity: 0.5; }\n"
         ".pf-flame .title { font-size: 17px; text-anchor: middle; }\n"
         ".pf-flame .button { cursor: pointer; fill: #224; text-decoration: underline; }\n"
         "</style>\n"
      << "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#f7f7f2\"/>\n"
      << "<text class=\"title\" x=\"" << kWidth / 2 << "\" y=\"24\">" << escape_markup(opt.title)
      << "</text>\n"
      << "<text x=\"" << kWidth / 2 << "\" y=\"44\" text-anchor=\"middle\">total " << grouped(total)
      << " " << escape_markup(opt.unit) << "; click a frame to zoom, hover for its count</text>\n"
      << "<text class=\"button reset\" x=\"" << kPad
      << "\" y=\"24\" style=\"opacity:0\">Reset Zoom</text>\n"
      << "<text class=\"button search\" x=\"" << kWidth - kPad
      << "\" y=\"24\" text-anchor=\"end\">Search</text>\n"
      << "<text class=\"matched\" x=\"" << kWidth - kPad << "\" y=\"" << fixed(height - 10)
      << "\" text-anchor=\"end\"></text>\n"
      << "<text class=\"details\" x=\"" << kPad << "\" y=\"" << fixed(height - 10)
      << "\"></text>\n";

  for (const Placed &p : placed) {
    const std::string name = name_of(p.node);
    const double v = value[p.node];
    const double x = kPad + p.start / total * span, w = v / total * span;
    const double y = opt.icicle ? kTop + p.depth * kFrameHeight
                                : height - kBottom - (p.depth + 1) * kFrameHeight;
    char pct[32];
    snprintf(pct, sizeof pct, "%.2f%%", 100.0 * v / total);
    out << "<g class=\"f\" data-s=\"" << format_count(p.start) << "\" data-v=\"" << format_count(v)
        << "\" data-d=\"" << p.depth << "\"><title>" << escape_markup(name) << " (" << grouped(v)
        << " " << escape_markup(opt.unit) << ", " << pct << ")</title><rect x=\"" << fixed(x)
        << "\" y=\"" << fixed(y) << "\" width=\"" << fixed(w) << "\" height=\"" << kFrameHeight - 1
        << "\" rx=\"2\" fill=\"" << colour(name, opt.memory, p.node == 0) << "\"/><text x=\""
        << fixed(x + 3) << "\" y=\"" << fixed(y + kFrameHeight - 4.5) << "\">"
        << escape_markup(label(name, w)) << "</text></g>\n";
  }

  std::string script = kScript;
  script.replace(script.rfind("ID"), 2, "'" + id + "'");
  out << "<script type=\"text/ecmascript\"><![CDATA[" << script << "]]></script>\n</svg>\n";
}

}  // namespace prof
