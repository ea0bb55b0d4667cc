// Flame graphs at scale: a generated profile of 100,000 distinct stacks
// opens in headless Chromium in under a second as an SVG file and as the
// HTML report (timed by the browser's own load event), and zooming reaches
// any of its leaves, each far narrower than a pixel at first.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <iostream>

#include "analyzer_streams.h"
#include "export_tools.h"
#include "memprof.h"
#include "vec_out.h"

using namespace export_test;

namespace {

constexpr uint64_t kLeaves = 100000;

// A memory stream whose stacks (host frames without modules, named by
// address) are a trunk of 8 frames; under it 10 branches of 4 frames; under
// each 100 of 4 frames; under each 100 leaves of 2 frames, the last one
// 0x1000000 + LEAF: 100,000 distinct stacks 18 frames deep. Leaf i
// allocates 16 + (i % 100) * 8 bytes, and the even leaves free theirs.
std::vector<uint8_t> wide_memory_stream() {
  using namespace prof;
  VecOut o;
  analyzer_test::put_memory_opening(o, 4242, "/bin/wide");
  uint64_t next_id = 1, next_ip = 0x1000;
  auto chain = [&](uint64_t parent, int frames) {
    for (int i = 0; i < frames; i++) {
      put_ext(o, ext::StackHost{next_id, parent, next_ip++});
      parent = next_id++;
    }
    return parent;
  };
  const uint64_t trunk = chain(0, 8);
  const GuestLoc none{};
  uint64_t leaf = 0;
  for (int b = 0; b < 10; b++) {
    const uint64_t branch = chain(trunk, 4);
    for (int m = 0; m < 100; m++) {
      const uint64_t middle = chain(branch, 4);
      for (int l = 0; l < 100; l++, leaf++) {
        const uint64_t caller = chain(middle, 1);
        put_ext(o, ext::StackHost{next_id, caller, 0x1000000 + leaf});
        const uint64_t stack = next_id++, addr = 0x100000000 + leaf * 0x1000;
        put_memprof_event(o, AllocEvent{kAeventAlloc, none, true, stack, 0, 0, 0, addr,
                                        16 + (leaf % 100) * 8});
        if (leaf % 2 == 0)
          put_memprof_event(o, AllocEvent{kAeventFree, none, false, 0, 0, addr, 0, 0, 0});
      }
    }
  }
  put_memprof_epilogue(o);
  return o.b;
}

// The checks after load: zoom to the last leaf (narrower than a pixel
// before), search for it, show callers.
const char kAfterLoad[] = R"JS(
  var leaf = '0x' + (0x1000000 + 99999).toString(16);
  note('leaf-before', f.frame(leaf) === null);
  note('zoomed', f.zoom(leaf));
  var shown = f.frame(leaf);
  note('leaf-width', shown ? shown.width === f.frame('all').width : 'none');
  note('leaf-depth', shown ? shown.depth : 'none');
  f.reset();
  note('matched', f.search(leaf.toUpperCase()));
  f.search('');
  f.invert(true);
  note('inverted-depth', f.frame(leaf) ? 'drawn' : f.zoom(leaf) && f.frame(leaf).depth);
)JS";

void check_after_load(const std::string &dom, long long leaf_value) {
  CHECK(dom.find("data-leaf-before=\"true\"") != std::string::npos);
  CHECK(dom.find("data-zoomed=\"true\"") != std::string::npos);
  CHECK(dom.find("data-leaf-width=\"true\"") != std::string::npos);
  CHECK(dom.find("data-leaf-depth=\"18\"") != std::string::npos);
  CHECK(dom.find("data-matched=\"" + std::to_string(leaf_value) + "\"") != std::string::npos);
  CHECK(dom.find("data-inverted-depth=\"1\"") != std::string::npos);
}

}  // namespace

TEST_CASE("flamegraph and html: 100,000 distinct stacks open in under a second, zoom to a leaf") {
  TempDir dir;
  const std::string stream = dir.path + "/wide.memprof", svg = dir.path + "/wide.svg",
                    page = dir.path + "/wide.html";
  write_file(stream, wide_memory_stream());
  RunResult r = analyze({"flamegraph", stream, "-o", svg});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::vector<SvgFrame> frames = svg_frames(slurp(svg));
  // The root, 8 + 10 x 4 + 1,000 x 4 + 100,000 x 2 frames: none left out.
  CHECK(frames.size() == 1 + 8 + 40 + 4000 + 200000);
  CHECK(frames[0].value == 100000 * 16 + 1000 * 8 * (99 * 100 / 2));
  r = analyze({"html", stream, "-o", page});
  REQUIRE(r.exit_code == 0);
  // Its heap chart: 10 of the 100,000 stacks apart, the rest as "other
  // stacks"; the peak, at the last event, holds the odd leaves' blocks, the
  // largest 16 + 99 x 8 bytes.
  const std::vector<nlohmann::json> charts = chart_data(slurp(page));
  REQUIRE(charts.size() == 1);
  const nlohmann::json &chart = charts[0];
  REQUIRE(chart["bands"].size() == 11);
  CHECK(chart["bands"][10]["label"] == "other stacks");
  const size_t peak = chart["peak"];
  CHECK(chart["total"][peak] == 50000 * 16 + 8 * 1000 * (50 * 50));
  CHECK(chart["bands"][0]["bytes"][peak] == 16 + 99 * 8);
  const long long last_leaf_bytes = 16 + 99 * 8;

  // The best of 3 loads: the machine's other work only slows them.
  const std::string timed_svg = timed_copy(slurp(svg), dir.path + "/timed.svg", "flame", kAfterLoad);
  const std::string timed_page =
      timed_copy(slurp(page), dir.path + "/timed.html", "flame-alloc-bytes-svg", kAfterLoad);
  RunResult svg_dom, page_dom;
  long svg_ms = -1, page_ms = -1;
  for (int i = 0; i < 3; i++) {
    const RunResult s = dump_dom("file://" + timed_svg), p = dump_dom("file://" + timed_page);
    const long s_ms = attribute_ms(s.out, "load-ms"), p_ms = attribute_ms(p.out, "load-ms");
    if (svg_ms < 0 || (s_ms >= 0 && s_ms < svg_ms)) svg_ms = s_ms, svg_dom = s;
    if (page_ms < 0 || (p_ms >= 0 && p_ms < page_ms)) page_ms = p_ms, page_dom = p;
  }
  std::cerr << "flamegraph of " << kLeaves << " stacks: " << slurp(svg).size() << " bytes, load "
            << svg_ms << " ms; html report: " << slurp(page).size() << " bytes, load " << page_ms
            << " ms (best of 3)\n";
  INFO(svg_dom.err.substr(0, 2000));
  CHECK(svg_dom.err.find("Uncaught") == std::string::npos);
  CHECK(page_dom.err.find("Uncaught") == std::string::npos);
  CHECK(svg_ms >= 0);
  // XXX: the goal is 1 s (scripts/bench.sh); shared test machines run
  // several times slower, so this bound only catches a return to the old
  // 10-second pages.
  CHECK(svg_ms < 3000);
  CHECK(page_ms >= 0);
  CHECK(page_ms < 3000);
  check_after_load(svg_dom.out, last_leaf_bytes);
  check_after_load(page_dom.out, last_leaf_bytes);
}

namespace {

// A memory stream whose stacks branch in two at every level, 17 levels:
// 131,072 distinct stacks (one 16-byte allocation each), 262,142 frames in
// the flame graph, twice as many as leaves (issue 37, item 14).
std::vector<uint8_t> branching_memory_stream(int levels) {
  using namespace prof;
  VecOut o;
  analyzer_test::put_memory_opening(o, 4343, "/bin/branching");
  uint64_t next_id = 1, leaf = 0;
  const GuestLoc none{};
  std::vector<std::pair<uint64_t, int>> todo{{0, 0}};  // (node, its depth)
  while (!todo.empty()) {
    const auto [parent, depth] = todo.back();
    todo.pop_back();
    if (depth == levels) {
      const uint64_t addr = 0x100000000 + leaf++ * 0x100;
      put_memprof_event(o, AllocEvent{kAeventAlloc, none, true, parent, 0, 0, 0, addr, 16});
      continue;
    }
    for (uint64_t side = 0; side < 2; side++) {
      put_ext(o, ext::StackHost{next_id, parent, 0x1000 + 2 * next_id + side});
      todo.push_back({next_id++, depth + 1});
    }
  }
  put_memprof_epilogue(o);
  return o.b;
}

// The best of 3 loads of `path` (timed_copy) in headless Chromium, in ms.
long best_load_ms(const std::string &path) {
  long best = -1;
  for (int i = 0; i < 3; i++) {
    const long ms = attribute_ms(dump_dom("file://" + path).out, "load-ms");
    if (best < 0 || (ms >= 0 && ms < best)) best = ms;
  }
  return best;
}

}  // namespace

// Not a test (hidden): scripts/bench.sh's pictures section prints its line.
TEST_CASE("bench: pictures of 131,072 stacks branching at every level", "[.bench]") {
  TempDir dir;
  const std::string stream = dir.path + "/branching.memprof", svg = dir.path + "/b.svg",
                    page = dir.path + "/b.html";
  write_file(stream, branching_memory_stream(17));
  REQUIRE(analyze({"flamegraph", stream, "-o", svg}).exit_code == 0);
  REQUIRE(analyze({"html", stream, "-o", page}).exit_code == 0);
  const size_t frames = svg_frames(slurp(svg)).size();
  CHECK(frames == 1 + (size_t(2) << 17) - 2);  // the root and every frame: none left out
  const long svg_ms = best_load_ms(timed_copy(slurp(svg), dir.path + "/t.svg", "flame", ""));
  const long page_ms =
      best_load_ms(timed_copy(slurp(page), dir.path + "/t.html", "flame-alloc-bytes-svg", ""));
  // Blank pages, timed alike: what any page costs to open.
  const long blank_svg_ms = best_load_ms(timed_copy(
      "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"flame\"></svg>\n",
      dir.path + "/blank.svg", "flame", ""));
  const long blank_page_ms = best_load_ms(timed_copy(
      "<!DOCTYPE html>\n<html><head></head><body><div id=\"flame-alloc-bytes-svg\"></div></body></html>\n",
      dir.path + "/blank.html", "flame-alloc-bytes-svg", ""));
  std::cerr << "pictures of 131072 stacks branching at every level (" << frames - 1
            << " frames), best of 3 loads beyond a blank page: SVG " << slurp(svg).size()
            << " bytes, " << svg_ms - blank_svg_ms << " ms (blank " << blank_svg_ms
            << " ms); HTML " << slurp(page).size() << " bytes, " << page_ms - blank_page_ms
            << " ms (blank " << blank_page_ms << " ms); goal under 1000 ms each\n";
}
