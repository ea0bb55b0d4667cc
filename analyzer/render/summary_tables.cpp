#include "render/summary_tables.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "render/markup.h"
#include "report/memprof_report.h"
#include "report/summary.h"

namespace prof {
namespace {

using Json = nlohmann::json;

struct Cell {
  std::string text;
  bool number = false;
  double value = 0;
};

Cell empty() { return {}; }
Cell text(const std::string &t) { return {t}; }
Cell bytes(const Json &v) {
  if (!v.is_number()) return empty();
  return {format_bytes(std::round(v.get<double>()), true), true, v.get<double>()};
}
Cell count(const Json &v) {
  if (!v.is_number()) return empty();
  return {format_count(v.get<double>()), true, v.get<double>()};
}
Cell percent(const Json &v) {
  char buf[16];
  snprintf(buf, sizeof buf, "%.2f%%", v.get<double>());
  return {buf, true, v.get<double>()};
}
// A field of an object in a row (null when the row has none).
Json field(const Json &row, const char *key, const char *name) {
  const Json &o = row[key];
  return o.is_object() && o.contains(name) ? o[name] : Json(nullptr);
}

// "function (file:line)" of a frame object of the summary's stacks.
std::string frame_text(const Json &f) {
  std::string t = f.value("function", "");
  const std::string file = f.value("file", "");
  const uint64_t line = f.value("line", uint64_t(0));
  if (!file.empty()) t += " (" + file + (line ? ":" + std::to_string(line) : "") + ")";
  return t;
}
Cell stack(const Json &frames) {
  std::string t;
  for (const Json &f : frames) t += (t.empty() ? "" : " < ") + frame_text(f);
  return text(frames.empty() ? "[no stack]" : t);
}

struct Column {
  std::string heading;
  std::function<Cell(const Json &)> cell;
};

void write_cell(const Cell &c, std::ostream &out) {
  if (!c.number) {
    out << "<td>" << escape_markup(c.text) << "</td>";
    return;
  }
  out << "<td class=\"n\" data-v=\"" << Json(c.value).dump() << "\">" << escape_markup(c.text)
      << "</td>";
}

void table(const std::string &name, const std::string &title, const std::vector<Column> &columns,
           const Json &rows, std::ostream &out) {
  if (rows.empty()) return;
  out << "<table class=\"pf-table\" data-name=\"" << escape_markup(name) << "\"><caption>"
      << escape_markup(title) << "</caption>\n<thead><tr>";
  for (const Column &c : columns) out << "<th>" << escape_markup(c.heading) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const Json &row : rows) {
    out << "<tr>";
    for (const Column &c : columns) write_cell(c.cell(row), out);
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

// A totals table: rows of {"figure", "value", "bytes"}.
Json total(const std::string &figure, const Json &value, bool is_bytes) {
  return {{"figure", figure}, {"value", value}, {"bytes", is_bytes}};
}
const std::vector<Column> kTotalColumns = {
    {"figure", [](const Json &r) { return text(r["figure"]); }},
    {"value", [](const Json &r) { return r["bytes"].get<bool>() ? bytes(r["value"]) : count(r["value"]); }},
};

std::vector<Column> stack_columns(const StackList &list) {
  const std::string figure = list.figure;
  const bool in_bytes = !*list.unit;
  return {
      {std::string(list.key) == "calls" ? "allocations" : list.key,
       [figure, in_bytes](const Json &r) { return in_bytes ? bytes(r[figure]) : count(r[figure]); }},
      {"allocations", [](const Json &r) { return count(r["alloc_count"]); }},
      {"size min", [](const Json &r) { return count(field(r, "size", "min")); }},
      {"size avg", [](const Json &r) { return count(field(r, "size", "avg")); }},
      {"size max", [](const Json &r) { return count(field(r, "size", "max")); }},
      {"freed", [](const Json &r) { return count(r["frees"]); }},
      {"lifetime min", [](const Json &r) { return count(field(r, "lifetime", "min")); }},
      {"lifetime avg", [](const Json &r) { return count(field(r, "lifetime", "avg")); }},
      {"lifetime max", [](const Json &r) { return count(field(r, "lifetime", "max")); }},
      {"temporary", [](const Json &r) { return count(r["temporary"]); }},
      {"stack", [](const Json &r) { return stack(r["stack"]); }},
  };
}

std::vector<Column> function_columns(const std::string &what) {
  std::vector<Column> c;
  for (const char *part : {"self", "total"}) {
    const std::string p = part;
    c.push_back({p + " bytes", [p](const Json &r) { return bytes(r[p]["alloc_bytes"]); }});
    c.push_back({p + " calls", [p](const Json &r) { return count(r[p]["alloc_count"]); }});
    c.push_back({p + " leaked", [p](const Json &r) { return bytes(r[p]["leaked_bytes"]); }});
    c.push_back({p + " peak", [p](const Json &r) { return bytes(r[p]["peak_bytes"]); }});
  }
  c.push_back({what, [](const Json &r) { return text(r["function"]); }});
  return c;
}

void memory(const Json &m, std::ostream &out) {
  Json totals = Json::array();
  totals.push_back(total("allocations", m["alloc_calls"], false));
  totals.push_back(total("reallocations", m["realloc_calls"], false));
  totals.push_back(total("frees", m["free_calls"], false));
  totals.push_back(total("allocated", m["allocated_bytes"], true));
  totals.push_back(total("peak heap", m["peak_bytes"], true));
  totals.push_back(total("leaked", m["leaked_bytes"], true));
  totals.push_back(total("leaked blocks", m["leaked_blocks"], false));
  totals.push_back(total("temporary allocations", m["temporary_allocations"], false));
  totals.push_back(total("unknown frees", m["unknown_frees"], false));
  out << "<h3>Memory</h3>\n";
  table("memory", "MEMORY", kTotalColumns, totals, out);
  // (As the text's "by thread" lines: with two threads or more.)
  if (m["threads"].size() >= 2)
    table("memory.threads", "MEMORY BY THREAD: the blocks each thread made, the frees it made",
          {{"allocated", [](const Json &r) { return bytes(r["alloc_bytes"]); }},
           {"calls", [](const Json &r) { return count(r["alloc_count"]); }},
           {"frees", [](const Json &r) { return count(r["free_count"]); }},
           {"leaked", [](const Json &r) { return bytes(r["leaked_bytes"]); }},
           {"peak", [](const Json &r) { return bytes(r["peak_bytes"]); }},
           {"pid", [](const Json &r) { return count(r["pid"]); }},
           {"tid", [](const Json &r) { return count(r["tid"]); }},
           {"name", [](const Json &r) { return text(r.value("name", "")); }}},
          m["threads"], out);

  const Json &f = m["functions"];
  const bool by_line = f["by"] == "line";
  const std::string by = by_line ? "LINES" : "FUNCTIONS", what = by_line ? "line" : "function";
  table("memory.functions", by + ": by bytes allocated in the " + what + " itself",
        function_columns(what), f["by_self"], out);
  table("memory.functions_total", by + ": by bytes allocated in the " + what + " and what it calls",
        function_columns(what), f["by_total"], out);

  for (const StackList &l : kStackLists)
    table(std::string("memory.") + l.key, l.title, stack_columns(l), m[l.key], out);

  table("memory.suppressed", "SUPPRESSED: leaks left out",
        {{"pattern", [](const Json &r) { return text(r["pattern"]); }},
         {"default", [](const Json &r) { return text(r["default"].get<bool>() ? "yes" : "no"); }},
         {"blocks", [](const Json &r) { return count(r["blocks"]); }},
         {"bytes", [](const Json &r) { return bytes(r["bytes"]); }}},
        m["suppressed"], out);
  table("memory.sizes", "SIZES: allocations by size",
        {{"min", [](const Json &r) { return count(r["min"]); }},
         {"max", [](const Json &r) { return count(r["max"]); }},
         {"allocations", [](const Json &r) { return count(r["count"]); }}},
        m["size_histogram"], out);
  const std::vector<Column> mapped = {
      {"bytes", [](const Json &r) { return bytes(r.contains("peak_bytes") ? r["peak_bytes"] : r["live_bytes"]); }},
      {"stack", [](const Json &r) { return stack(r["stack"]); }}};
  table("memory.mmap.peak", "MMAP DOMAIN: mapped at the mmap peak", mapped, m["mmap"]["peak"], out);
  table("memory.mmap.still_mapped", "MMAP DOMAIN: still mapped at the end", mapped,
        m["mmap"]["still_mapped"], out);
}

void cpu(const Json &c, std::ostream &out) {
  Json totals = Json::array();
  totals.push_back(total("samples", c["samples"], false));
  for (const auto &kv : c["vmstates"].items()) totals.push_back(total("  " + kv.key(), kv.value(), false));
  totals.push_back(total("in the profiler ([libprof])", c["in_agent"], false));
  out << "<h3>CPU</h3>\n";
  table("cpu", "CPU", kTotalColumns, totals, out);
  const std::string what = c["by"] == "line" ? "line" : "function";
  const std::string by = c["by"] == "line" ? "LINES" : "FUNCTIONS";
  const std::vector<Column> hot = {
      {"samples", [](const Json &r) { return count(r["samples"]); }},
      {"share", [](const Json &r) { return percent(r["percent"]); }},
      {what, [](const Json &r) { return text(r["function"]); }}};
  table("cpu.self", "HOTTEST " + by + ": samples in the " + what + " itself", hot, c["self"], out);
  table("cpu.total", "HOTTEST " + by + ": samples in the " + what + " and what it calls", hot,
        c["total"], out);
  table("cpu.stacks", "HOTTEST STACKS",
        {{"samples", [](const Json &r) { return count(r["samples"]); }},
         {"vm state", [](const Json &r) { return text(r["vmstate"]); }},
         {"stack", [](const Json &r) { return stack(r["stack"]); }}},
        c["stacks"], out);
  table("cpu.threads", "THREADS",
        {{"pid", [](const Json &r) { return count(r["pid"]); }},
         {"tid", [](const Json &r) { return count(r["tid"]); }},
         {"name", [](const Json &r) { return text(r.value("name", "")); }},
         {"samples", [](const Json &r) { return count(r["samples"]); }}},
        c["threads"], out);
}

}  // namespace

void write_summary_tables(const Json &summary, std::ostream &out) {
  if (!summary["memory"].is_null()) memory(summary["memory"], out);
  if (!summary["cpu"].is_null()) cpu(summary["cpu"], out);
  table("streams", "STREAMS",
        {{"file", [](const Json &r) { return text(r["path"]); }},
         {"kind", [](const Json &r) { return text(r["kind"]); }},
         {"pid", [](const Json &r) { return count(r["pid"]); }},
         {"program", [](const Json &r) { return text(r["exe"]); }},
         {"bytes", [](const Json &r) { return bytes(r["file_bytes"]); }},
         {"events", [](const Json &r) { return count(r["events"]); }}},
        summary["streams"], out);
}

const char kSortTablesScript[] = R"JS(
[].forEach.call(document.querySelectorAll('table.pf-table'), function (table) {
  [].forEach.call(table.querySelectorAll('th'), function (th, column) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0], rows = [].slice.call(body.rows);
      var down = th.getAttribute('data-sorted') !== 'down';
      [].forEach.call(table.querySelectorAll('th'), function (h) { h.removeAttribute('data-sorted'); });
      th.setAttribute('data-sorted', down ? 'down' : 'up');
      function key(row) {
        var c = row.cells[column];
        return c && c.hasAttribute('data-v') ? +c.getAttribute('data-v') : c ? c.textContent : '';
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), order = x < y ? -1 : x > y ? 1 : 0;
        return down ? -order : order;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
)JS";

}  // namespace prof
