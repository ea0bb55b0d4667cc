// prof-analyze's pictures: SVG flame graphs, the heap chart and the HTML
// report, checked for their structure and counts known by construction,
// then opened in headless Chromium: their scripts run without errors, zoom
// and search work, and a screenshot shows frames.
#include <catch2/catch.hpp>

#include "analyzer_streams.h"
#include "export_tools.h"

using namespace export_test;

namespace {

// analyzer_sites under the agent: leak_site() keeps 7 x 1000 B,
// temporary_site() allocates and frees 100 x 24 B, inlined_alloc()
// (inlined into inline_site()) 3 x 555 B that main frees.
RunResult sites_run() {
  RunResult r = run_under_agent({PROF_SITES_PROGRAM});
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.memprof_files.size() == 1);
  return r;
}

std::string pid_of(const std::string &memprof) {
  const size_t dot = memprof.rfind(".memprof"), start = memprof.rfind("prof.") + 5;
  return memprof.substr(start, dot - start);
}

// The flame graph's colours (flamegraph_svg.cpp): memory greens, CPU reds.
bool memory_colour(int r, int g, int b) {
  return r >= 40 && r <= 110 && g >= 160 && g <= 225 && b >= 60 && b <= 140;
}
bool cpu_colour(int r, int g, int b) {
  return r >= 220 && g >= 70 && g <= 210 && b >= 20 && b <= 65;
}

RunResult flamegraph(const std::string &profile, std::vector<std::string> args,
                     const std::string &svg) {
  args.insert(args.begin(), {"flamegraph", profile, "-o", svg});
  return analyze(args);
}

}  // namespace

TEST_CASE("flamegraph: a frame per function, counts of its stacks, every memory metric") {
  const RunResult run = sites_run();
  int leak_line = 0, temporary_line = 0, inlined_line = 0;
  REQUIRE(sscanf(run.out.c_str(), "%d %d %d", &leak_line, &temporary_line, &inlined_line) == 3);
  TempDir dir;
  const std::string svg = dir.path + "/flame.svg";
  struct Expected {
    const char *metric, *unit;
    long long leak, temporary, inlined;  // -1: no frame
  };
  for (const Expected &e : {Expected{"alloc-bytes", "bytes", 7000, 2400, 1665},
                            Expected{"alloc-count", "allocations", 7, 100, 3},
                            Expected{"leaked-bytes", "bytes", 7000, -1, -1},
                            Expected{"peak-bytes", "bytes", 7000, -1, -1}}) {
    INFO(e.metric);
    const RunResult r = flamegraph(run.memprof_files[0], {"--metric", e.metric}, svg);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string text = slurp(svg);
    CHECK(svg_data(text)["unit"] == e.unit);
    const std::vector<SvgFrame> frames = svg_frames(text);
    REQUIRE(!frames.empty());
    const SvgFrame &root = frames[0];
    CHECK(root.name == "all");
    CHECK(root.depth == 0);
    CHECK(svg_data(text)["total"] == root.value);
    auto one = [&](const char *name, long long value) {
      const auto found = named(frames, name);
      if (value < 0) {
        CHECK(found.empty());
        return;
      }
      REQUIRE(found.size() == 1);
      CHECK(found[0].value == value);
    };
    one("leak_site", e.leak);
    one("temporary_site", e.temporary);
    one("inlined_alloc", e.inlined);
    one("inline_site", e.inlined);
    // Tooltips: where each function is, and which frames were inlined.
    const SvgFrame leak = named(frames, "leak_site")[0];
    CHECK(leak.where == "analyzer_sites.c:" + std::to_string(leak_line));
    CHECK(!leak.inlined);
    if (e.inlined > 0) {
      // The inlined function is a frame above the one it is inlined into.
      const SvgFrame site = named(frames, "inline_site")[0],
                     leaf = named(frames, "inlined_alloc")[0];
      CHECK(leaf.depth == site.depth + 1);
      CHECK(leaf.start == site.start);
      CHECK(leaf.inlined);
      CHECK(!site.inlined);
      CHECK(leaf.where == "analyzer_sites.c:" + std::to_string(inlined_line));
      CHECK(named(frames, "temporary_site")[0].where ==
            "analyzer_sites.c:" + std::to_string(temporary_line));
    }
  }
}

TEST_CASE("flamegraph: icicle and per process a pid frame above the root") {
  const RunResult run = sites_run();
  TempDir dir;
  const std::string svg = dir.path + "/flame.svg";
  REQUIRE(flamegraph(run.memprof_files[0], {}, svg).exit_code == 0);
  CHECK(svg_data(slurp(svg))["icicle"] == false);
  REQUIRE(flamegraph(run.memprof_files[0], {"--icicle", "--per-process"}, svg).exit_code == 0);
  CHECK(svg_data(slurp(svg))["icicle"] == true);
  const auto frames = svg_frames(slurp(svg));
  const auto pid = named(frames, "[pid " + pid_of(run.memprof_files[0]) + "]");
  REQUIRE(pid.size() == 1);
  CHECK(pid[0].depth == 1);
  CHECK(pid[0].value == frames[0].value);
}

TEST_CASE("flamegraph: CPU samples, by VM state") {
  TempDir dir;
  const std::string stream = dir.path + "/cpu.sysprof", svg = dir.path + "/flame.svg";
  write_file(stream, analyzer_test::native_cpu_stream());
  REQUIRE(flamegraph(stream, {"--by-vmstate"}, svg).exit_code == 0);
  CHECK(svg_data(slurp(svg))["unit"] == "samples");
  const auto frames = svg_frames(slurp(svg));
  REQUIRE(!frames.empty());
  CHECK(frames[0].value == 5);
  REQUIRE(named(frames, "NATIVE").size() == 1);
  CHECK(named(frames, "NATIVE")[0].value == 4);
  CHECK(named(frames, "LFUNC")[0].value == 1);
}

TEST_CASE("flamegraph: Chromium runs its script, and a screenshot shows frames the window wide") {
  const RunResult run = sites_run();
  TempDir dir;
  const std::string svg = dir.path + "/flame.svg";
  REQUIRE(flamegraph(run.memprof_files[0], {}, svg).exit_code == 0);
  const size_t nodes = svg_frames(slurp(svg)).size();
  REQUIRE(nodes > 10);

  const RunResult dom = dump_dom("file://" + svg);
  INFO(dom.err);
  CHECK(dom.out.find("data-ready=\"" + std::to_string(nodes) + "\"") != std::string::npos);
  CHECK(dom.err.find("Uncaught") == std::string::npos);

  // main and the frames below it span the window: 5 rows of 1580 x 15 px.
  const Pixels shot = screenshot("file://" + svg, 1600, 400);
  CHECK(count_pixels(shot, memory_colour) > 5 * 1580 * 15 * 9 / 10);
}

TEST_CASE("flamegraph: zoom, search, callers and tooltips in the browser") {
  const RunResult run = sites_run();
  TempDir dir;
  const std::string svg = dir.path + "/flame.svg", icicle = dir.path + "/icicle.svg";
  REQUIRE(flamegraph(run.memprof_files[0], {}, svg).exit_code == 0);
  REQUIRE(flamegraph(run.memprof_files[0], {"--icicle"}, icicle).exit_code == 0);
  const long long total = svg_data(slurp(svg))["total"];
  char share[32];
  const std::string page = drive_svg(slurp(svg), dir.path, R"JS(
var f = svg.profFlame;
note('zoomed', f.zoom('leak_site'));
note('leak-width', f.frame('leak_site').width.toFixed(2));
note('main-width', f.frame('main').width.toFixed(2));
note('temporary', f.frame('temporary_site'));
f.reset();
note('temporary-after', !!f.frame('temporary_site'));
note('matched', f.search('^(LEAK|temporary|inline)_site$|^inlined_alloc$'));
note('fill', svg.querySelector('g.f[data-i] rect[fill="rgb(230,0,230)"]') !== null);
note('matched-text', svg.querySelector('.matched').textContent);
note('case', f.search('Leak_SITE'));
f.search('');
f.invert(true);
var leaf = f.frame('leak_site'), caller = f.frame('main');
note('inverted-leaf-depth', leaf.depth);
note('inverted-leaf-width', (leaf.width / f.frame('all').width).toFixed(4));
note('inverted-main-below-leak', caller.depth > leaf.depth);
note('inverted-inlined-depth', f.frame('inlined_alloc').depth);
f.invert(false);
note('uninverted-leak-depth', f.frame('leak_site').depth > 1);
f.zoom('inlined_alloc');
var target = [].filter.call(svg.querySelectorAll('g.f'), function (e) {
  return e.textContent.indexOf('inlined_al') === 0;
})[0].querySelector('rect');
var b = target.getBoundingClientRect();
target.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: b.left + 5, clientY: b.top + 5}));
note('tip', svg.querySelector('g.tip').textContent);
note('tip-shown', !svg.querySelector('g.tip').hasAttribute('display'));
)JS");
  const RunResult dom = dump_dom("file://" + page);
  INFO(dom.out.substr(0, 2000));
  INFO(dom.err);
  CHECK(dom.err.find("Uncaught") == std::string::npos);
  const auto seen = [&](const std::string &what, const std::string &value) {
    return dom.out.find("data-" + what + "=\"" + value + "\"") != std::string::npos;
  };
  CHECK(seen("zoomed", "true"));
  // Zoomed: leak_site and its callers span the graph, its siblings hide.
  CHECK(seen("leak-width", "1180.00"));
  CHECK(seen("main-width", "1180.00"));
  CHECK(seen("temporary", "null"));
  CHECK(seen("temporary-after", "true"));
  // Nested matches count once: 7000 + 2400 + 1665 bytes of 11,065, all.
  CHECK(seen("matched", "11065"));
  CHECK(seen("fill", "true"));
  snprintf(share, sizeof share, "%.2f%%", 100.0 * 11065 / double(total));
  CHECK(seen("matched-text", "Matched: " + std::string(share) + " (10.8 KiB (11,065 bytes))"));
  CHECK(seen("case", "7000"));
  // Callers: the allocating functions at depth 1, their callers above.
  CHECK(seen("inverted-leaf-depth", "1"));
  snprintf(share, sizeof share, "%.4f", 7000.0 / double(total));
  CHECK(seen("inverted-leaf-width", share));
  CHECK(seen("inverted-main-below-leak", "true"));
  CHECK(seen("inverted-inlined-depth", "1"));
  CHECK(seen("uninverted-leak-depth", "true"));
  int inlined_line = 0;
  REQUIRE(sscanf(run.out.c_str(), "%*d %*d %d", &inlined_line) == 1);
  snprintf(share, sizeof share, "%.2f%%", 100.0 * 1665 / double(total));
  CHECK(seen("tip", "inlined_alloc" "analyzer_sites.c:" + std::to_string(inlined_line) +
                        " [inlined]1.6 KiB (1,665 bytes), " + share));
  CHECK(seen("tip-shown", "true"));

  // Icicle: the root on top.
  const std::string icicle_page = drive_svg(slurp(icicle), dir.path, R"JS(
note('root-above', svg.profFlame.frame('all').y < svg.profFlame.frame('leak_site').y);
)JS");
  CHECK(dump_dom("file://" + icicle_page).out.find("data-root-above=\"true\"") != std::string::npos);
}

TEST_CASE("chart: the heap over time, its exact peak, RSS and markers") {
  TempDir dir;
  const std::string stream = dir.path + "/mem.memprof", svg = dir.path + "/chart.svg";
  // Peak 6000 B at event 15; time marks at 1 s and 2 s; marker "phase 2".
  write_file(stream, analyzer_test::native_memory_stream());
  const RunResult r = analyze({"chart", stream, "-o", svg});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string text = slurp(svg);
  CHECK(
      text.find("<circle class=\"peak\" data-pid=\"42\" data-bytes=\"6000\" data-events=\"15\"") !=
      std::string::npos);
  CHECK(occurrences(text, "<polyline class=\"heap\" data-pid=\"42\"") == 1);
  CHECK(occurrences(text, "<polyline class=\"rss\" data-pid=\"42\"") == 1);
  CHECK(text.find(">phase 2</text>") != std::string::npos);
  CHECK(text.find("seconds since the process started") != std::string::npos);
  // The peak's time, the 1 s time mark right after its event, in summary.
  CHECK(text.find("pid 42: peak 5.86KiB (6,000 bytes) at 1 s") != std::string::npos);
  const RunResult summary = analyze({"summary", stream});
  CHECK(summary.out.find("  peak heap:     ") != std::string::npos);
  CHECK(summary.out.find(" at 1.000 s\n") != std::string::npos);
  const RunResult json = analyze({"summary", "--json", stream});
  CHECK(nlohmann::json::parse(json.out)["memory"]["peak_time_s"] == 1.0);

  const RunResult dom = dump_dom("file://" + svg);
  CHECK(dom.exit_code == 0);
  CHECK(dom.err.find("Uncaught") == std::string::npos);
  // The first process's colour, #c0392b: its lines and the peak's dot.
  const Pixels shot = screenshot("file://" + svg, 1220, 460);
  CHECK(count_pixels(shot, [](int r, int g, int b) {
          return std::abs(r - 0xc0) < 12 && std::abs(g - 0x39) < 12 && std::abs(b - 0x2b) < 12;
        }) > 500);

  SECTION("two processes: a line and an exact peak each") {
    const std::string child = dir.path + "/child.memprof";
    write_file(child, analyzer_test::native_memory_stream(43, 100));
    REQUIRE(analyze({"chart", stream, child, "-o", svg}).exit_code == 0);
    const std::string two = slurp(svg);
    for (const char *pid : {"42", "43"}) {
      CHECK(occurrences(two, "<polyline class=\"heap\" data-pid=\"" + std::string(pid)) == 1);
      CHECK(two.find("<circle class=\"peak\" data-pid=\"" + std::string(pid) +
                     "\" data-bytes=\"6000\" data-events=\"15\"") != std::string::npos);
    }
  }

  SECTION("CPU streams have no heap over time") {
    const std::string cpu = dir.path + "/cpu.sysprof";
    write_file(cpu, analyzer_test::native_cpu_stream());
    const RunResult c = analyze({"chart", cpu, "-o", svg + ".cpu"});
    CHECK(c.exit_code == 2);
    CHECK(access((svg + ".cpu").c_str(), F_OK) != 0);
  }
}

namespace {

// The HTML report of the sites run, in `dir`; the C library's leaks kept,
// so the leaks table has rows to sort.
std::string sites_page(const RunResult &run, const TempDir &dir) {
  const std::string page = dir.path + "/report.html";
  const RunResult r = analyze({"html", "--no-default-suppressions", run.memprof_files[0], "-o", page});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return page;
}

}  // namespace

TEST_CASE("html: the summary, the chart and every memory flame graph on one offline page") {
  const RunResult run = sites_run();
  TempDir dir;
  const std::string page = sites_page(run, dir);
  const std::string text = slurp(page);
  for (const char *id : {"summary", "heap", "flame-alloc-bytes", "flame-alloc-count",
                         "flame-leaked-bytes", "flame-peak-bytes"})
    CHECK(text.find("<section id=\"" + std::string(id) + "\">") != std::string::npos);
  // The summary as tables: the leak of leak_site, 7 x 1000 B.
  CHECK(text.find("<pre>") == std::string::npos);
  CHECK(text.find("<table class=\"pf-table\" data-name=\"memory.leaks\">") != std::string::npos);
  CHECK(text.find("<td class=\"n\" data-v=\"7000.0\">6.84KiB</td>") != std::string::npos);
  // Nothing to fetch: no external scripts, styles, images or links.
  CHECK(text.find(" src=") == std::string::npos);
  CHECK(text.find("<link") == std::string::npos);
  CHECK(text.find("url(") == std::string::npos);

  const RunResult dom = dump_dom("file://" + page);
  INFO(dom.err);
  CHECK(dom.out.find("<body data-ready=\"4\">") != std::string::npos);
  CHECK(!std::regex_search(dom.out, std::regex("<html[^>]*data-errors")));
  CHECK(dom.err.find("Uncaught") == std::string::npos);
  const Pixels shot = screenshot("file://" + page, 1300, 1400);
  CHECK(count_pixels(shot, memory_colour) > 5 * 1000 * 10);

  // Sorting: the leaks by live_bytes, ascending on a second click.
  std::string sorted = text;
  sorted.insert(sorted.rfind("</body>"), R"JS(<script>
var table = document.querySelector('table[data-name="memory.leaks"]');
var th = [].filter.call(table.querySelectorAll('th'), function (h) { return h.textContent === 'leaks'; })[0];
var column = [].indexOf.call(th.parentNode.children, th);
function order() {
  return [].map.call(table.tBodies[0].rows, function (r) { return +r.cells[column].getAttribute('data-v'); });
}
th.click();
var down = order();
th.click();
var up = order();
document.body.setAttribute('data-down', down.every(function (v, i) { return !i || down[i - 1] >= v; }) && down.length > 1);
document.body.setAttribute('data-up', up.every(function (v, i) { return !i || up[i - 1] <= v; }) && up[0] < up[up.length - 1]);
</script>)JS");
  write_file(dir.path + "/sorted.html", sorted);
  const RunResult sort = dump_dom("file://" + dir.path + "/sorted.html");
  CHECK(sort.out.find("data-down=\"true\"") != std::string::npos);
  CHECK(sort.out.find("data-up=\"true\"") != std::string::npos);

  // Every row has a cell under every column, read in the browser: the peak
  // and leak tables mix freed stacks (a lifetime) with never freed ones
  // (none), whose cells stay under their own columns.
  std::string cells = text;
  cells.insert(cells.rfind("</body>"), R"JS(<script>
var ragged = 0, rows = 0;
[].forEach.call(document.querySelectorAll('table.pf-table'), function (table) {
  var heads = table.tHead ? table.tHead.rows[0].cells.length : 2;
  [].forEach.call(table.tBodies[0].rows, function (r) { rows++; if (r.cells.length !== heads) ragged++; });
});
document.body.setAttribute('data-ragged', ragged);
document.body.setAttribute('data-rows', rows > 10);
</script>)JS");
  write_file(dir.path + "/cells.html", cells);
  const RunResult read = dump_dom("file://" + dir.path + "/cells.html");
  CHECK(read.out.find("data-ragged=\"0\"") != std::string::npos);
  CHECK(read.out.find("data-rows=\"true\"") != std::string::npos);

  SECTION("CPU: one flame graph") {
    const std::string cpu = dir.path + "/cpu.sysprof";
    write_file(cpu, analyzer_test::native_cpu_stream());
    REQUIRE(analyze({"html", cpu, "-o", page}).exit_code == 0);
    const RunResult d = dump_dom("file://" + page);
    CHECK(d.out.find("<section id=\"flame-cpu\">") != std::string::npos);
    CHECK(d.out.find("<section id=\"heap\">") == std::string::npos);
    CHECK(d.out.find("<body data-ready=\"1\">") != std::string::npos);
    CHECK(count_pixels(screenshot("file://" + page, 1300, 1000), cpu_colour) > 1000 * 10);
  }
}

namespace {

// The cells of the page's table `name`, read in the browser: a row each,
// its cells by their column's heading (the number a cell carries, else its
// text).
std::vector<std::map<std::string, std::string>> table_cells(const std::string &page,
                                                            const std::string &name) {
  TempDir dir;
  std::string html = slurp(page);
  html.insert(html.rfind("</body>"), R"JS(<script>
var table = document.querySelector('table[data-name="NAME"]');
var heads = [].map.call(table.tHead.rows[0].cells, function (h) { return h.textContent; });
var rows = [].map.call(table.tBodies[0].rows, function (r) {
  var row = {};
  [].forEach.call(r.cells, function (c, i) {
    row[i < heads.length ? heads[i] : 'beyond ' + i] = c.hasAttribute('data-v') ? c.getAttribute('data-v') : c.textContent;
  });
  return row;
});
var out = document.createElement('textarea');
out.id = 'cells';
out.textContent = JSON.stringify(rows);
document.body.appendChild(out);
</script>)JS");
  html.replace(html.find("NAME\"]');"), 4, name);
  write_file(dir.path + "/cells.html", html);
  const RunResult r = dump_dom("file://" + dir.path + "/cells.html");
  const std::string open = "<textarea id=\"cells\">";
  const size_t at = r.out.find(open);
  REQUIRE(at != std::string::npos);
  std::string json = r.out.substr(at + open.size(), r.out.find("</textarea>", at) - at - open.size());
  for (const auto &[entity, c] : {std::pair<std::string, std::string>{"&lt;", "<"}, {"&gt;", ">"},
                                  {"&quot;", "\""}, {"&amp;", "&"}})
    for (size_t p = 0; (p = json.find(entity, p)) != std::string::npos; p += c.size())
      json.replace(p, entity.size(), c);
  std::vector<std::map<std::string, std::string>> out;
  for (const nlohmann::json &row : nlohmann::json::parse(json)) {
    std::map<std::string, std::string> cells;
    for (auto it = row.begin(); it != row.end(); ++it) cells[it.key()] = it.value();
    out.push_back(cells);
  }
  return out;
}

// The row of `rows` whose stack's innermost frame starts with `function`.
std::map<std::string, std::string> stack_row(const std::vector<std::map<std::string, std::string>> &rows,
                                             const std::string &function) {
  for (const auto &r : rows)
    if (r.count("stack") && r.at("stack").rfind(function, 0) == 0) return r;
  FAIL("no row for " << function);
  return {};
}

}  // namespace

TEST_CASE("html: the text summary's tables, each cell under its heading, read in the browser") {
  const RunResult run = sites_run();
  TempDir dir;
  const std::string page = sites_page(run, dir);
  // leak_site: 7 x 1000 B never freed, no lifetime; the text says as much.
  const auto leaks = table_cells(page, "memory.leaks");
  const auto leak = stack_row(leaks, "leak_site");
  const std::map<std::string, std::string> expected_leak = {
      {"leaks", "7000.0"},    {"allocations", "7.0"},  {"size min", "1000.0"},
      {"size avg", "1000.0"}, {"size max", "1000.0"},  {"freed", "0.0"},
      {"lifetime min", ""},   {"lifetime avg", ""},    {"lifetime max", ""},
      {"temporary", "0.0"},   {"stack", leak.at("stack")}};
  CHECK(leak == expected_leak);
  // At the peak (stdout's buffer, made last): the leak.
  CHECK(stack_row(table_cells(page, "memory.peak"), "leak_site").at("peak") == "7000.0");
  // inline_site's 3 x 555 B, freed (a lifetime), beside the leak, which has none.
  const auto allocated = table_cells(page, "memory.allocated");
  const auto inlined = stack_row(allocated, "inlined_alloc");
  CHECK(inlined.at("allocated") == "1665.0");
  CHECK(inlined.at("freed") == "3.0");
  CHECK(inlined.at("lifetime min") != "");
  CHECK(inlined.count("beyond 11") == 0);
  CHECK(stack_row(allocated, "leak_site").at("lifetime max") == "");
  // Temporaries: temporary_site's 100 x 24 B.
  CHECK(stack_row(table_cells(page, "memory.temporary"), "temporary_site").at("temporary") == "100.0");
  // By function: leak_site's 7000 B itself, leaked and at the peak.
  bool found = false;
  for (const auto &f : table_cells(page, "memory.functions"))
    if (f.at("function") == "leak_site") {
      found = true;
      CHECK(f.at("self bytes") == "7000.0");
      CHECK(f.at("self calls") == "7.0");
      CHECK(f.at("self leaked") == "7000.0");
      CHECK(f.at("self peak") == "7000.0");
    }
  CHECK(found);
  // The text summary's row of the leak has the same figures.
  const RunResult text = analyze({"summary", "--no-default-suppressions", run.memprof_files[0]});
  CHECK(text.out.find("7 allocations, size 1000..1000 (avg 1000), 0 freed\n") != std::string::npos);
}

TEST_CASE("html: one page for a run's memory and CPU") {
  // sh counting to 300000: allocations and a few hundred milliseconds of CPU.
  const RunResult run = run_under_agent(
      {"sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"}, {"PROF_CPU=callgraph"});
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.memprof_files.size() == 1);
  REQUIRE(run.sysprof_files.size() == 1);
  TempDir dir;
  const std::string page = dir.path + "/run.html";
  const RunResult r = analyze({"html", run.memprof_files[0], run.sysprof_files[0], "-o", page});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const RunResult dom = dump_dom("file://" + page);
  for (const char *id : {"heap", "flame-alloc-bytes", "flame-leaked-bytes", "flame-cpu", "summary"})
    CHECK(dom.out.find("<section id=\"" + std::string(id) + "\">") != std::string::npos);
  CHECK(dom.out.find("<body data-ready=\"5\">") != std::string::npos);
  CHECK(!std::regex_search(dom.out, std::regex("<html[^>]*data-errors")));
  CHECK(dom.out.find("data-name=\"memory.peak\"") != std::string::npos);
  const auto cpu = table_cells(page, "cpu");
  REQUIRE(!cpu.empty());
  CHECK(cpu[0].at("figure") == "samples");
  CHECK(std::stod(cpu[0].at("value")) > 0);
  // The CPU flame graph has the CPU's colours, the memory ones theirs.
  const Pixels shot = screenshot("file://" + page, 1300, 4000);
  CHECK(count_pixels(shot, cpu_colour) > 1000);
  CHECK(count_pixels(shot, memory_colour) > 1000);
}
