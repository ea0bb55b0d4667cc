// The tools the export tests run: prof-analyze, headless Chromium (Debian's
// chromium), go tool pprof (golang-go) and the speedscope app, all from
// scripts/setup.sh; and what they read back: the frames of our SVG flame
// graphs, the samples of `go tool pprof -raw`.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent_run.h"
#include "png_pixels.h"
#include "temp_files.h"

namespace export_test {

inline std::string slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void write_file(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline void write_file(const std::string &path, const std::vector<uint8_t> &bytes) {
  write_file(path, std::string(bytes.begin(), bytes.end()));
}

// A tool setup.sh installs; a missing one fails the test (never skips it).
inline std::string tool(const std::string &path, const char *what) {
  if (access(path.c_str(), X_OK) != 0)
    FAIL(what << " not found at '" << path << "': run scripts/setup.sh");
  return path;
}

inline RunResult analyze(std::vector<std::string> args) {
  args.insert(args.begin(), PROF_ANALYZER_PATH);
  return run_bare(args);
}

// Headless Chromium with a fresh profile and no network use, its console in
// the log on stderr (an uncaught script error shows as "Uncaught").
inline RunResult chromium(const std::vector<std::string> &args) {
  TempDir profile;
  std::vector<std::string> argv = {"timeout",
                                   "120",
                                   tool(PROF_CHROMIUM, "chromium"),
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--disable-dev-shm-usage",
                                   "--user-data-dir=" + profile.path,
                                   "--enable-logging=stderr",
                                   "--v=0"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_bare(argv);
}

// The page's DOM after its scripts ran.
inline RunResult dump_dom(const std::string &url) { return chromium({"--dump-dom", url}); }

// A screenshot of the page's top `width` x `height` px.
inline Pixels screenshot(const std::string &url, int width, int height) {
  TempDir dir;
  const std::string png = dir.path + "/shot.png";
  const RunResult r =
      chromium({"--screenshot=" + png,
                "--window-size=" + std::to_string(width) + "," + std::to_string(height), url});
  INFO(r.err);
  Pixels p;
  REQUIRE(decode_png(slurp(png), p));
  return p;
}

// Pixels whose colour `in(r, g, b)` accepts.
template <class In>
size_t count_pixels(const Pixels &p, In in) {
  size_t n = 0;
  for (size_t i = 0; i + 2 < p.rgb.size(); i += 3) n += in(p.rgb[i], p.rgb[i + 1], p.rgb[i + 2]);
  return n;
}

// `go tool pprof ARGS` with no network and no state outside a temp dir.
inline RunResult go_pprof(std::vector<std::string> args) {
  TempDir home;
  std::vector<std::string> argv = {"env",
                                   "HOME=" + home.path,
                                   "GOCACHE=" + home.path + "/cache",
                                   "GOTOOLCHAIN=local",
                                   "GOPROXY=off",
                                   "GOFLAGS=",
                                   tool(PROF_GO, "go"),
                                   "tool",
                                   "pprof"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_bare(argv);
}

// A frame of our flame graph SVG: a node of its pf-data (flamegraph_svg.h's
// grammar), its start the counts of the frames left of it.
struct SvgFrame {
  std::string name, where;
  long long start = 0, value = 0, depth = 0;
  bool inlined = false;
};

// The pf-data object of the first flame graph in `svg`.
inline nlohmann::json svg_data(const std::string &svg) {
  const std::string open = "class=\"pf-data\"><![CDATA[";
  const size_t at = svg.find(open);
  if (at == std::string::npos) return nlohmann::json();
  const size_t from = at + open.size();
  return nlohmann::json::parse(svg.substr(from, svg.find("]]>", from) - from));
}

inline std::vector<SvgFrame> svg_frames(const std::string &svg) {
  const nlohmann::json data = svg_data(svg);
  std::vector<SvgFrame> out;
  if (data.is_null()) return out;
  std::vector<long long> next;  // by depth: where the next child starts
  size_t fresh = 0;
  for (size_t i = 0; i < data["name"].size(); i++) {
    SvgFrame f;
    const size_t number = data["name"][i];
    const std::string name = data["names"][number ? number - 1 : fresh++];
    const size_t tab = name.rfind('\t');
    f.name = name.substr(0, tab);
    f.where = tab == std::string::npos ? "" : name.substr(tab + 1);
    f.depth = data["depth"][i];
    f.value = data["value"][i];
    const size_t d = size_t(f.depth);
    next.resize(d + 1);
    if (d) {
      f.start = next[d - 1];
      next[d - 1] += f.value;
    }
    next[d] = f.start;
    out.push_back(f);
  }
  for (const auto &i : data["inlined"]) out[size_t(i)].inlined = true;
  return out;
}

// A page showing `svg` 1200 px wide, then running `script` with `svg` (the
// graph) and note(key, value) (sets <body data-KEY=VALUE>); its path.
inline std::string drive_svg(std::string svg, const std::string &dir, const std::string &script) {
  svg.erase(0, svg.find("<svg"));
  static int pages = 0;
  const std::string path = dir + "/page" + std::to_string(pages++) + ".html";
  write_file(path, "<!DOCTYPE html><html><body style=\"margin:0\"><div style=\"width:1200px\">" +
                       svg + "</div><script>\nvar svg = document.querySelector('svg.pf-flame');\n"
                       "function note(k, v) { document.body.setAttribute('data-' + k, String(v)); }\n" +
                       script + "</script></body></html>");
  return path;
}

// `page` with a script, run before its own, that notes on <html> the load
// event's time since navigation (data-load-ms) and then runs `after` on the
// graph with id `graph`, note(key, value) setting <html data-KEY>.
inline std::string timed_copy(std::string page, const std::string &path, const std::string &graph,
                       const std::string &after) {
  const std::string code =
      "\nwindow.addEventListener('load', function () {\n"
      "  var root = document.documentElement;\n"
      "  function note(k, v) { root.setAttribute('data-' + k, String(v)); }\n"
      "  note('load-ms', performance.getEntriesByType('navigation')[0].loadEventStart.toFixed(0));\n"
      "  var f = document.getElementById('" + graph + "').profFlame;\n" + after +
      "});\n";
  const bool svg = page.compare(0, 5, "<?xml") == 0;
  const size_t at = svg ? page.find('>', page.find("<svg")) + 1 : page.find("<head>") + 6;
  page.insert(at, svg ? "<script><![CDATA[" + code + "]]></script>" : "<script>" + code + "</script>");
  write_file(path, page);
  return path;
}

inline long attribute_ms(const std::string &dom, const std::string &name) {
  const std::string key = "data-" + name + "=\"";
  const size_t at = dom.find(key);
  return at == std::string::npos ? -1 : std::stol(dom.substr(at + key.size()));
}

// The pf-bands data of each panel of a chart (heap_chart_svg.h).
inline std::vector<nlohmann::json> chart_data(const std::string &svg) {
  std::vector<nlohmann::json> out;
  const std::string open = "class=\"pf-bands\"", cdata = "<![CDATA[";
  for (size_t at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1)) {
    const size_t from = svg.find(cdata, at) + cdata.size();
    out.push_back(nlohmann::json::parse(svg.substr(from, svg.find("]]>", from) - from)));
  }
  return out;
}

// The frames of that name.
inline std::vector<SvgFrame> named(const std::vector<SvgFrame> &frames, const std::string &name) {
  std::vector<SvgFrame> out;
  for (const SvgFrame &f : frames)
    if (f.name == name) out.push_back(f);
  return out;
}

inline size_t occurrences(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

// `go tool pprof -raw`: samples (values, location ids leaf first, labels)
// and locations (the functions of their lines, inlined first) and mappings.
struct RawProfile {
  std::vector<std::string> types;
  struct Sample {
    std::vector<long long> values;
    std::vector<int> locations;
    std::string labels;
  };
  std::vector<Sample> samples;
  std::map<int, std::vector<std::string>> functions;
  std::vector<std::string> mappings;  // the lines after "Mappings"
};

inline RawProfile parse_raw(const std::string &text) {
  RawProfile p;
  std::istringstream in(text);
  std::string line, section;
  int location = 0;
  static const std::regex kSample("^\\s+([-\\d ]+):([\\d ]*)$");
  static const std::regex kLocation("^\\s+(\\d+): 0x[0-9a-f]+ M=\\d+ (\\S+)");
  static const std::regex kLine("^\\s{10,}(\\S+)");
  while (std::getline(in, line)) {
    if (line == "Samples:" || line == "Locations" || line == "Mappings") {
      section = line;
      continue;
    }
    std::smatch m;
    if (section == "Samples:") {
      if (p.types.empty()) {
        std::istringstream t(line);
        for (std::string type; t >> type;) p.types.push_back(type.substr(0, type.find('/')));
      } else if (std::regex_match(line, m, kSample)) {
        RawProfile::Sample s;
        std::istringstream v(m[1].str()), l(m[2].str());
        for (long long x; v >> x;) s.values.push_back(x);
        for (int x; l >> x;) s.locations.push_back(x);
        p.samples.push_back(s);
      } else if (!p.samples.empty()) {
        p.samples.back().labels += line;
      }
    } else if (section == "Locations") {
      if (std::regex_search(line, m, kLocation)) {
        location = std::stoi(m[1]);
        p.functions[location].push_back(m[2]);
      } else if (std::regex_search(line, m, kLine)) {
        p.functions[location].push_back(m[1]);
      }
    } else if (section == "Mappings") {
      p.mappings.push_back(line);
    }
  }
  return p;
}

// The sample whose leaf location starts with that function.
inline const RawProfile::Sample *leaf_sample(const RawProfile &p, const std::string &function) {
  for (const auto &s : p.samples)
    if (!s.locations.empty() && p.functions.count(s.locations[0]) &&
        p.functions.at(s.locations[0]).front() == function)
      return &s;
  return nullptr;
}

}  // namespace export_test
