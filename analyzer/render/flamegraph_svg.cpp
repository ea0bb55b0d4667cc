#include "render/flamegraph_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "render/flamegraph_script.h"
#include "render/markup.h"
#include "report/memprof_report.h"

namespace prof {
namespace {

constexpr double kTop = 66, kBottom = 34;  // title and controls; the details line
constexpr double kRowHeight = 16;

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

// The pf-data object of flamegraph_svg.h.
void write_data(const FoldedStacks &stacks, const std::vector<double> &value,
                const FlameGraphOptions &opt, std::ostream &out) {
  const NameTree &names = stacks.names;
  const PrefixTree::Children children = names.tree().children();
  // Depth first, children in name order, nodes below 1 left out; names
  // numbered in the order they first appear.
  struct Visit {
    uint32_t node, depth;
  };
  std::vector<Visit> todo{{NameTree::kRoot, 0}};
  std::vector<uint32_t> number(names.names().size() + 1, 0);  // 1 + index, 0: not yet
  std::string name_table, name_list, depth_list, value_list, inlined_list;
  uint32_t numbered = 0;
  for (uint32_t index = 0; !todo.empty(); index++) {
    const Visit v = todo.back();
    todo.pop_back();
    const char *comma = index ? "," : "";
    const uint32_t name = v.node ? names.tree().key(v.node) : names.names().size();
    if (number[name]) {
      name_list += comma + std::to_string(number[name]);
    } else {
      number[name] = ++numbered;
      name_list += comma + std::string("0");
      const std::string where = name < stacks.where.size() ? stacks.where[name] : "";
      const std::string text = v.node ? std::string(names.names().str(name)) : "all";
      name_table += (name_table.empty() ? "" : ",") +
                    json_string(where.empty() ? text : text + "\t" + where);
    }
    depth_list += comma + std::to_string(v.depth);
    value_list += comma + format_count(value[v.node]);
    if (v.node < stacks.inlined.size() && stacks.inlined[v.node])
      inlined_list += (inlined_list.empty() ? "" : ",") + std::to_string(index);
    const size_t first = todo.size();
    for (const uint32_t *c = children.begin(v.node); c != children.end(v.node); ++c)
      if (value[*c] >= 1) todo.push_back({*c, v.depth + 1});
    std::sort(todo.begin() + long(first), todo.end(),
              [&](const Visit &a, const Visit &b) { return names.name(a.node) > names.name(b.node); });
  }
  out << "{\"unit\":" << json_string(opt.unit) << ",\"memory\":" << (opt.memory ? "true" : "false")
      << ",\"icicle\":" << (opt.icicle ? "true" : "false") << ",\"total\":" << format_count(value[0])
      << ",\n\"names\":[" << name_table << "],\n\"name\":[" << name_list << "],\n\"depth\":["
      << depth_list << "],\n\"value\":[" << value_list << "],\n\"inlined\":[" << inlined_list
      << "]}";
}

}  // namespace

void render_flamegraph_svg(const FoldedStacks &stacks, const FlameGraphOptions &opt,
                           std::ostream &out) {
  const std::string id = escape_markup(opt.id);
  const std::vector<double> value = totals(stacks);
  const double total = value[0];
  const double height = kTop + kRowHeight + kBottom;  // the script sets it from the depth
  if (opt.standalone) out << "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" class=\"pf-flame\" id=\"" << id
      << "\" width=\"100%\" height=\"" << height << "\" data-top=\"" << kTop
      << "\" data-bottom=\"" << kBottom << "\">\n"
      << "<style>\n"
         ".pf-flame text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; "
         "fill: #000; }\n"
         ".pf-flame g.f { cursor: pointer; }\n"
         ".pf-flame g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
         ".pf-flame .parent { opacity: 0.5; }\n"
         ".pf-flame .title { font-size: 17px; text-anchor: middle; }\n"
         ".pf-flame .bar { font: 12px Verdana, 'DejaVu Sans', sans-serif; display: flex; gap: "
         "1.2em; align-items: center; padding: 0 10px; }\n"
         ".pf-flame .bar input.search { flex: 1; max-width: 24em; }\n"
         ".pf-flame .bar input.min { width: 4em; }\n"
         ".pf-flame g.tip rect { fill: #ffffe8; stroke: #888; }\n"
         ".pf-flame g.tip { pointer-events: none; }\n"
         "</style>\n"
      << "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#f7f7f2\"/>\n"
      << "<text class=\"title\" x=\"50%\" y=\"20\">" << escape_markup(opt.title) << "</text>\n"
      << "<text x=\"50%\" y=\"36\" text-anchor=\"middle\">total " << grouped(total) << " "
      << escape_markup(opt.unit) << "; click a frame to zoom, hover for its count</text>\n"
      << "<foreignObject x=\"0\" y=\"42\" width=\"100%\" height=\"22\">"
         "<div xmlns=\"http://www.w3.org/1999/xhtml\" class=\"bar\">"
         "<button class=\"reset\" disabled=\"disabled\">Reset zoom</button>"
         "<label><input type=\"checkbox\" class=\"invert\"/> inverted (callers)</label>"
         "<label>min width <input type=\"number\" class=\"min\" value=\"1\" min=\"0\" "
         "step=\"0.1\"/> px</label>"
         "<input type=\"search\" class=\"search\" placeholder=\"Search (Ctrl-F)\"/>"
         "</div></foreignObject>\n"
      << "<g class=\"frames\"></g>\n"
      << "<text class=\"details\" x=\"10\" y=\"" << height - 10 << "\"></text>\n"
      << "<text class=\"matched\" x=\"99%\" y=\"" << height - 10 << "\" text-anchor=\"end\"></text>\n"
      << "<g class=\"tip\" display=\"none\"><rect rx=\"3\"/><text></text></g>\n"
      << "<script type=\"application/json\" class=\"pf-data\"><![CDATA[";
  write_data(stacks, value, opt, out);
  std::string script = kFlameGraphScript;
  script.replace(script.rfind("ID"), 2, "'" + id + "'");
  out << "]]></script>\n<script type=\"text/ecmascript\"><![CDATA[" << script
      << "]]></script>\n</svg>\n";
}

}  // namespace prof
