#include "render/summary_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "render/markup.h"
#include "render/json_text.h"

namespace prof {
namespace {

using Json = nlohmann::json;

// "function (file:line)" of a frame object of the summary's stacks.
std::string frame_text(const Json &f) {
  std::string text = f.value("function", "");
  const std::string file = f.value("file", "");
  const uint64_t line = f.value("line", uint64_t(0));
  if (!file.empty()) text += " (" + file + (line ? ":" + std::to_string(line) : "") + ")";
  return text;
}

bool is_stack(const Json &v) {
  return v.is_array() && !v.empty() && v[0].is_object() && v[0].contains("function");
}

std::string number_text(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return grouped(v);
  char buf[32];
  snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

void cell(const Json &v, std::ostream &out) {
  if (v.is_number()) {
    out << "<td class=\"n\" data-v=\"" << v.dump() << "\">" << number_text(v.get<double>())
        << "</td>";
  } else if (is_stack(v)) {
    std::string text;
    for (size_t i = v.size(); i-- > 0;) text += (text.empty() ? "" : " < ") + frame_text(v[i]);
    out << "<td>" << escape_markup(text) << "</td>";
  } else if (v.is_string()) {
    out << "<td>" << escape_markup(v.get<std::string>()) << "</td>";
  } else {
    out << "<td>" << escape_markup(v.is_null() ? "" : json_text(v)) << "</td>";
  }
}

// A column of a list: a row's key, or a field of an object under it
// (KEY.FIELD).
struct Column {
  std::string key, field;
  std::string name() const { return field.empty() ? key : key + "." + field; }
};

// The columns of every row of a list, in the order first met: a key whose
// value is an object in any row is its fields, so a row where it is null
// (a block never freed has no lifetime) has as many cells, empty.
std::vector<Column> columns_of(const Json &rows) {
  std::vector<Column> columns;
  auto add = [&](const Column &c) {
    for (const Column &have : columns)
      if (have.key == c.key && have.field == c.field) return;
    columns.push_back(c);
  };
  std::vector<std::string> objects;
  for (const Json &row : rows)
    for (auto it = row.begin(); it != row.end(); ++it)
      if (it->is_object() && !it->empty()) objects.push_back(it.key());
  for (const Json &row : rows)
    for (auto it = row.begin(); it != row.end(); ++it) {
      const bool object = std::find(objects.begin(), objects.end(), it.key()) != objects.end();
      if (!object) {
        add({it.key(), ""});
      } else if (it->is_object()) {
        for (auto f = it->begin(); f != it->end(); ++f) add({it.key(), f.key()});
      }
    }
  return columns;
}

Json value_at(const Json &row, const Column &c) {
  if (!row.contains(c.key)) return nullptr;
  const Json &v = row[c.key];
  if (c.field.empty()) return v;
  return v.is_object() && v.contains(c.field) ? v[c.field] : Json(nullptr);
}

void rows_table(const std::string &name, const Json &rows, std::ostream &out) {
  const std::vector<Column> columns = columns_of(rows);
  out << "<table class=\"pf-table\" data-name=\"" << escape_markup(name) << "\"><caption>"
      << escape_markup(name) << "</caption>\n<thead><tr>";
  for (const Column &c : columns) out << "<th>" << escape_markup(c.name()) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const Json &row : rows) {
    out << "<tr>";
    for (const Column &c : columns) cell(value_at(row, c), out);
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

}  // namespace

void write_summary_tables(const Json &summary, std::ostream &out) {
  for (auto section = summary.begin(); section != summary.end(); ++section) {
    if (!section->is_object() || section->empty()) continue;
    out << "<h3>" << escape_markup(section.key()) << "</h3>\n<table class=\"pf-table\" data-name=\""
        << escape_markup(section.key()) << "\">\n<thead><tr><th>figure</th><th>value</th></tr>"
        << "</thead>\n<tbody>\n";
    std::vector<std::pair<std::string, const Json *>> lists;
    for (auto it = section->begin(); it != section->end(); ++it) {
      if (it->is_array() && !it->empty() && (*it)[0].is_object()) {
        lists.emplace_back(section.key() + "." + it.key(), &*it);
        continue;
      }
      if (it->is_object()) {
        for (auto f = it->begin(); f != it->end(); ++f) {
          out << "<tr><td>" << escape_markup(it.key() + "." + f.key()) << "</td>";
          cell(*f, out);
          out << "</tr>\n";
        }
        continue;
      }
      out << "<tr><td>" << escape_markup(it.key()) << "</td>";
      cell(*it, out);
      out << "</tr>\n";
    }
    out << "</tbody></table>\n";
    for (const auto &list : lists) rows_table(list.first, *list.second, out);
  }
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
