// prof-analyze's exports read by the real readers: go tool pprof reads the
// pprof files, the speedscope app (in headless Chromium) the speedscope
// files; figures known by construction; bad input.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analyzer_streams.h"
#include "export_tools.h"

using namespace export_test;
using Json = nlohmann::json;

namespace {

std::string hex(const std::string &raw) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) out += {kDigits[c >> 4], kDigits[c & 15]};
  return out;
}

std::string base64(const std::string &in) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    if (i + 1 < in.size()) v |= uint32_t(uint8_t(in[i + 1])) << 8;
    if (i + 2 < in.size()) v |= uint8_t(in[i + 2]);
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += i + 1 < in.size() ? kAlphabet[v >> 6 & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

// The speedscope app opened on a file, as its own command line does: a
// script that hands the file to the app, named in the URL's hash.
RunResult speedscope_app(const std::string &file, TempDir &dir) {
  const std::string app = std::string(PROF_SPEEDSCOPE_DIR) + "/index.html";
  if (access(app.c_str(), R_OK) != 0)
    FAIL("the speedscope app is not at " << app << ": run scripts/setup.sh");
  const std::string loader = dir.path + "/load.js";
  write_file(loader, "speedscope.loadFileFromBase64(\"" + file.substr(file.rfind('/') + 1) +
                         "\", \"" + base64(slurp(file)) + "\")");
  return chromium({"--virtual-time-budget=4000", "--dump-dom",
                   "file://" + app + "#localProfilePath=" + loader});
}

}  // namespace

TEST_CASE("pprof: go tool pprof reads the memory profile: counts, inlined frames, build-ids") {
  // analyzer_sites: leak_site() keeps 7 x 1000 B, temporary_site() frees
  // 100 x 24 B at once, inlined_alloc() (inlined into inline_site())
  // allocates 3 x 555 B freed before the peak.
  const RunResult run = run_under_agent({PROF_SITES_PROGRAM});
  REQUIRE(run.memprof_files.size() == 1);
  TempDir dir;
  const std::string out = dir.path + "/heap.pb.gz";
  const RunResult r = analyze({"pprof", run.memprof_files[0], "-o", out});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(out).compare(0, 2, "\x1f\x8b") == 0);  // gzipped

  const RunResult raw = go_pprof({"-raw", out});
  INFO(raw.err);
  REQUIRE(raw.exit_code == 0);
  const RawProfile p = parse_raw(raw.out);
  CHECK(p.types == std::vector<std::string>{"alloc_objects", "alloc_space", "inuse_objects",
                                            "inuse_space", "peak_space"});
  CHECK(raw.out.find("alloc_space/bytes[dflt]") != std::string::npos);
  const auto *leak = leaf_sample(p, "leak_site");
  const auto *temporary = leaf_sample(p, "temporary_site");
  const auto *inlined = leaf_sample(p, "inlined_alloc");
  REQUIRE(leak);
  REQUIRE(temporary);
  REQUIRE(inlined);
  CHECK(leak->values == std::vector<long long>{7, 7000, 7, 7000, 7000});
  CHECK(temporary->values == std::vector<long long>{100, 2400, 0, 0, 0});
  CHECK(inlined->values == std::vector<long long>{3, 1665, 0, 0, 0});
  // One location for the inlined call: the inlined function first.
  CHECK(p.functions.at(inlined->locations[0]) ==
        std::vector<std::string>{"inlined_alloc", "inline_site"});
  CHECK(p.functions.at(inlined->locations[1]) == std::vector<std::string>{"main"});

  // Each mapping carries the build-id the agent recorded for its module.
  const Recorded rec = read_memprof(run.memprof_files[0]);
  std::map<std::string, std::string> build_ids;
  for (const prof::ext::ModuleLoad &m : rec.modules) build_ids[m.path] = hex(m.build_id);
  size_t checked = 0;
  for (const std::string &line : p.mappings) {
    std::istringstream fields(line);
    std::string id, range, path, build_id;
    if (!(fields >> id >> range >> path >> build_id)) continue;
    INFO(line);
    REQUIRE(build_ids.count(path));
    CHECK(build_id == build_ids[path]);
    CHECK(build_id.size() >= 16);
    checked++;
  }
  CHECK(checked >= 2);  // the program and libc at least

  // pprof's own report: the main binary, its build-id, leak_site's blocks.
  const RunResult top = go_pprof({"-top", "-sample_index=alloc_objects", "-focus=leak_site", out});
  INFO(top.out);
  CHECK(top.out.find("File: analyzer_sites\nBuild ID: " +
                     build_ids[std::string(PROF_SITES_PROGRAM)] + "\n") != std::string::npos);
  CHECK(top.out.find("Showing nodes accounting for 7, ") != std::string::npos);
}

TEST_CASE("pprof: CPU samples labelled with their VM state, and per process a pid label") {
  TempDir dir;
  const std::string cpu = dir.path + "/cpu.sysprof", mem = dir.path + "/mem.memprof";
  write_file(cpu, analyzer_test::native_cpu_stream());
  write_file(mem, analyzer_test::native_memory_stream());
  REQUIRE(analyze({"pprof", cpu, "-o", cpu + ".pb.gz"}).exit_code == 0);
  const RunResult raw = go_pprof({"-raw", cpu + ".pb.gz"});
  INFO(raw.err);
  const RawProfile p = parse_raw(raw.out);
  REQUIRE(p.types == std::vector<std::string>{"samples"});
  REQUIRE(p.samples.size() == 2);
  long long native = 0, lfunc = 0;
  for (const auto &s : p.samples) {
    if (s.labels.find("vmstate:[NATIVE]") != std::string::npos) native += s.values[0];
    if (s.labels.find("vmstate:[LFUNC]") != std::string::npos) lfunc += s.values[0];
  }
  CHECK(native == 4);
  CHECK(lfunc == 1);

  REQUIRE(analyze({"pprof", "--per-process", mem, "-o", mem + ".pb.gz"}).exit_code == 0);
  const RawProfile m = parse_raw(go_pprof({"-raw", mem + ".pb.gz"}).out);
  REQUIRE(m.samples.size() == 2);
  long long objects = 0, space = 0, inuse = 0, peak = 0;
  for (const auto &s : m.samples) {
    CHECK(s.labels.find("pid:[42]") != std::string::npos);
    objects += s.values[0];
    space += s.values[1];
    inuse += s.values[3];
    peak += s.values[4];
  }
  // 16 allocations and a reallocation; 4300 B leaked; 6000 B at the peak.
  CHECK(objects == 17);
  CHECK(space == 10 * 100 + 5 * 1000 + 100 + 300);
  CHECK(inuse == 4300);
  CHECK(peak == 6000);
}

TEST_CASE("speedscope: a profile per memory metric, and the speedscope app opens it") {
  TempDir dir;
  const std::string mem = dir.path + "/mem.memprof", out = dir.path + "/mem.speedscope.json";
  write_file(mem, analyzer_test::native_memory_stream());
  const RunResult r = analyze({"speedscope", mem, "-o", out});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);

  // The documented format: https://www.speedscope.app/file-format-schema.json
  const Json j = Json::parse(slurp(out));
  CHECK(j["$schema"] == "https://www.speedscope.app/file-format-schema.json");
  const Json &frames = j["shared"]["frames"];
  REQUIRE(frames.is_array());
  for (const Json &f : frames) CHECK(f["name"].is_string());
  std::map<std::string, long long> totals;
  std::map<std::string, std::map<std::string, long long>> own;  // profile -> stack -> value
  for (const Json &p : j["profiles"]) {
    const std::string name = p["name"];
    CHECK(p["type"] == "evented");
    CHECK(p["startValue"] == 0);
    // Events nest (each close ends the innermost open frame) and never go
    // back; a stack's own value is the time it is the innermost.
    std::vector<size_t> open;
    long long at = 0;
    for (const Json &e : p["events"]) {
      const size_t frame = e["frame"];
      REQUIRE(frame < frames.size());
      const long long t = e["at"];
      CHECK(t >= at);
      if (!open.empty() && t > at) {
        std::string stack;
        for (size_t f : open) stack += (stack.empty() ? "" : ";") + frames[f]["name"].get<std::string>();
        own[name][stack] += t - at;
      }
      at = t;
      if (e["type"] == "O") {
        open.push_back(frame);
      } else {
        REQUIRE(e["type"] == "C");
        REQUIRE(!open.empty());
        CHECK(open.back() == frame);
        open.pop_back();
      }
    }
    CHECK(open.empty());
    CHECK(p["endValue"] == at);
    totals[name] = at;
    CHECK(p["unit"] == (name.find("objects") != std::string::npos ? "none" : "bytes"));
  }
  CHECK(totals == std::map<std::string, long long>{{"alloc_objects", 17},
                                                   {"alloc_space", 6400},
                                                   {"inuse_objects", 5},
                                                   {"inuse_space", 4300},
                                                   {"peak_space", 6000}});
  // Stack A (0x1000;0x2000) made 11 blocks of 100 B, B (0x1000;0x3000) 5 of
  // 1000 B and the 300 B block of its realloc, which are all B's leaks.
  CHECK(own["alloc_space"] ==
        std::map<std::string, long long>{{"0x1000;0x2000", 1100}, {"0x1000;0x3000", 5300}});
  CHECK(own["inuse_space"] == std::map<std::string, long long>{{"0x1000;0x3000", 4300}});
  CHECK(j["profiles"][j["activeProfileIndex"].get<size_t>()]["name"] == "alloc_space");

  // The real reader: the app lists the profiles with their totals.
  const RunResult app = speedscope_app(out, dir);
  INFO(app.err);
  CHECK(app.err.find("Uncaught") == std::string::npos);
  CHECK(app.out.find("<title>prof-analyze: mem.memprof - speedscope</title>") != std::string::npos);
  for (const char *row : {"<span>alloc_objects</span></td><td class=\"[^\"]*\">17</td>",
                          "<span>inuse_objects</span></td><td class=\"[^\"]*\">5</td>",
                          "<span>alloc_space</span></td><td class=\"[^\"]*\">6.25 KB</td>"}) {
    INFO(row);
    CHECK(std::regex_search(app.out, std::regex(row)));
  }

  SECTION("CPU samples") {
    const std::string cpu = dir.path + "/cpu.sysprof", cpu_out = dir.path + "/cpu.json";
    write_file(cpu, analyzer_test::native_cpu_stream());
    REQUIRE(analyze({"speedscope", cpu, "-o", cpu_out}).exit_code == 0);
    const Json c = Json::parse(slurp(cpu_out));
    REQUIRE(c["profiles"].size() == 1);
    CHECK(c["profiles"][0]["endValue"] == 5);
    const RunResult a = speedscope_app(cpu_out, dir);
    CHECK(a.err.find("Uncaught") == std::string::npos);
    CHECK(a.out.find("<title>prof-analyze: cpu.sysprof - speedscope</title>") != std::string::npos);
  }
}

TEST_CASE("exports: bad input exits with code 2 and writes no file") {
  TempDir dir;
  const std::string mem = dir.path + "/mem.memprof", cpu = dir.path + "/cpu.sysprof";
  std::vector<uint8_t> corrupt = analyzer_test::native_memory_stream();
  corrupt[15] = 0x7f;  // the Process record's header byte becomes an unknown kind
  write_file(mem, corrupt);
  write_file(cpu, analyzer_test::native_cpu_stream());
  for (const char *command : {"flamegraph", "chart", "html", "pprof", "speedscope"}) {
    INFO(command);
    const std::string out = dir.path + "/" + command + ".out";
    const RunResult r = analyze({command, mem, "-o", out});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("corrupt at byte") != std::string::npos);
    CHECK(access(out.c_str(), F_OK) != 0);
    write_file(mem + ".ok", analyzer_test::native_memory_stream());
    // Memory and CPU share no picture or export; the HTML page has both.
    const RunResult mixed = analyze({command, mem + ".ok", cpu, "-o", out});
    CHECK(mixed.exit_code == (std::string(command) == "html" ? 0 : 2));
    CHECK((access(out.c_str(), F_OK) == 0) == (std::string(command) == "html"));
    unlink(out.c_str());
  }
}

TEST_CASE("exports: damaged streams give a result or exit code 2, never a crash") {
  TempDir dir;
  const std::string path = dir.path + "/damaged";
  const std::vector<std::vector<uint8_t>> streams = {analyzer_test::native_memory_stream(),
                                                     analyzer_test::native_cpu_stream()};
  uint64_t seed = 12345;
  auto next = [&] { return seed = seed * 6364136223846793005ull + 1442695040888963407ull; };
  for (int round = 0; round < 30; round++) {
    std::vector<uint8_t> bytes = streams[round % 2];
    for (int flips = 1 + next() % 3; flips > 0; flips--)
      bytes[next() % bytes.size()] = uint8_t(next() >> 56);
    if (round % 3 == 0) bytes.resize(next() % bytes.size());
    write_file(path, bytes);
    for (const char *command : {"flamegraph", "chart", "html", "pprof", "speedscope"}) {
      const RunResult r = analyze({command, path, "-o", path + ".out"});
      INFO(command << " round " << round << ": " << r.err);
      CHECK(r.signal == 0);
      CHECK((r.exit_code == 0 || r.exit_code == 2));
    }
  }
}
