// prof-analyze against independent truths: the reference parser's reports
// for the genuine fixtures, the VM's own sysprof counters, and libprof
// streams whose figures are known by construction.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "agent_run.h"
#include "fixture_path.h"
#include "memprof.h"
#include "vec_out.h"

namespace {

const std::string kAnalyzer = PROF_ANALYZER_PATH;

std::string text(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A report split into sections; in the three event sections, each row with
// its Overrides block is one entry, and entries are sorted within runs of
// equal event counts (the only order the reference leaves open).
std::vector<std::string> canonical(const std::string &report) {
  std::vector<std::string> out, block;
  std::istringstream in(report);
  std::string line;
  std::vector<std::pair<uint64_t, std::string>> rows;
  auto flush_rows = [&] {
    size_t i = 0;
    while (i < rows.size()) {
      size_t j = i;
      while (j < rows.size() && rows[j].first == rows[i].first) j++;
      std::vector<std::string> group;
      for (size_t k = i; k < j; k++) group.push_back(rows[k].second);
      std::sort(group.begin(), group.end());
      out.insert(out.end(), group.begin(), group.end());
      i = j;
    }
    rows.clear();
  };
  while (std::getline(in, line)) {
    const auto events = line.find(" events\t");
    if (events != std::string::npos && line[0] != '\t') {
      const auto colon = line.rfind(": ", events);
      rows.emplace_back(std::stoull(line.substr(colon + 2, events - colon - 2)), line);
    } else if (!rows.empty() &&
               (line[0] == '\t' || (line.empty() && rows.back().second.back() != '\n' &&
                                     rows.back().second.find("\tOverrides:") != std::string::npos))) {
      // An Overrides block, and the blank line that closes it.
      rows.back().second += "\n" + line;
    } else {
      flush_rows();
      out.push_back(line);
    }
  }
  flush_rows();
  return out;
}

}  // namespace

TEST_CASE("memprof reports of the genuine fixtures match the reference parser") {
  for (const char *name : {"m1_seed_example", "m2_jit_traces", "m3_cfuncs_leaks"}) {
    SECTION(name) {
      const std::string bin = fixture(std::string(name) + ".memprof.bin");
      const RunResult full = run_bare({kAnalyzer, "report", "--compat-heap-summary", bin});
      CHECK(full.exit_code == 0);
      CHECK(canonical(full.out) == canonical(text(fixture(std::string(name) + ".memprof.txt"))));
      const RunResult leaks =
          run_bare({kAnalyzer, "report", "--leak-only", "--compat-heap-summary", bin});
      CHECK(leaks.out == text(fixture(std::string(name) + ".memprof.leak-only.txt")));
    }
  }
}

TEST_CASE("the default heap summary holds exactly the bytes still live") {
  for (const char *name : {"m1_seed_example", "m2_jit_traces", "m3_cfuncs_leaks"}) {
    SECTION(name) {
      const std::string bin = fixture(std::string(name) + ".memprof.bin");
      // Live bytes, computed here from the decoded events.
      const Recorded rec = read_memprof(bin);
      uint64_t live = 0;
      for (const auto &kv : rec.leaks_by_size) live += kv.first * kv.second;
      const RunResult r = run_bare({kAnalyzer, "report", "--leak-only", "--json", bin});
      REQUIRE(r.exit_code == 0);
      const auto j = nlohmann::json::parse(r.out);
      uint64_t held = 0;
      for (const auto &row : j["heap_summary"]) held += row["holds"].get<uint64_t>();
      CHECK(held == live);
      CHECK(j["unknown_frees"].get<uint64_t>() == rec.unknown_frees);
    }
  }
}

TEST_CASE("sysprof samples per VM state match the VM's own counters") {
  for (const char *name : {"s_lua_L", "s_lua_C"}) {
    SECTION(name) {
      const RunResult r =
          run_bare({kAnalyzer, "summary", "--json", fixture(std::string(name) + ".sysprof.bin")});
      REQUIRE(r.exit_code == 0);
      const auto j = nlohmann::json::parse(r.out)["cpu"];
      std::istringstream counters(text(fixture(std::string(name) + ".counters.txt")));
      std::string field;
      while (counters >> field) {
        const auto eq = field.find('=');
        const std::string key = field.substr(0, eq);
        const double value = std::stod(field.substr(eq + 1));
        if (key == "samples")
          CHECK(j["samples"].get<double>() == value);
        else
          CHECK(j["vmstates"].value(key, 0.0) == value);
      }
    }
  }
}

namespace {
std::string write_temp(const std::vector<uint8_t> &bytes) {
  char path[] = "/tmp/libprof-analyzer-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
  close(fd);
  return path;
}

// A libprof stream: two stacks A (id 2) and B (id 3) under a root (id 1).
// A allocates 10 x 100 B, B 5 x 1000 B; A's blocks are freed (one of them
// right after its allocation: temporary), then B shrinks one block to 300 B,
// then a free of an address never allocated. Peak: 1000 + 5000 = 6000 B,
// held 1000 by A and 5000 by B; at exit B holds 4 x 1000 + 300 = 4300 B.
std::vector<uint8_t> synthetic_stream(size_t *truncate_at = nullptr) {
  using namespace prof;
  VecOut o;
  put_prologue(o, SectionKind::Symtab, false);
  put_symtab_final(o);
  put_prologue(o, SectionKind::Memprof, true);
  put_process(o, 42, 1, 0, "/bin/x", 6);
  put_stack_host(o, 1, 0, 0x1000);
  put_stack_host(o, 2, 1, 0x2000);
  put_stack_host(o, 3, 1, 0x3000);
  const GuestLoc none{};
  for (uint64_t i = 0; i < 10; i++)
    put_memprof_event(o, kAeventAlloc, none, true, 2, 0, 0, 0, 0x10000 + i * 0x100, 100);
  for (uint64_t i = 0; i < 5; i++)
    put_memprof_event(o, kAeventAlloc, none, true, 3, 0, 0, 0, 0x20000 + i * 0x1000, 1000);
  for (uint64_t i = 0; i < 9; i++)
    put_memprof_event(o, kAeventFree, none, false, 0, 0, 0x10000 + i * 0x100, 0, 0, 0);
  put_memprof_event(o, kAeventAlloc, none, true, 2, 0, 0, 0, 0x90000, 100);
  put_memprof_event(o, kAeventFree, none, false, 0, 0, 0x90000, 0, 0, 0);
  if (truncate_at) *truncate_at = o.b.size();
  put_memprof_event(o, kAeventFree, none, false, 0, 0, 0x10000 + 9 * 0x100, 0, 0, 0);
  put_memprof_event(o, kAeventRealloc, none, true, 3, 0, 0x20000, 0, 0x50000, 300);
  put_memprof_event(o, kAeventFree, none, false, 0, 0, 0xdead0, 0, 0, 0);
  put_memprof_epilogue(o);
  return o.b;
}
}  // namespace

TEST_CASE("the native summary of a libprof stream gives the figures it was built with") {
  const std::string path = write_temp(synthetic_stream());
  const RunResult r = run_bare({kAnalyzer, "summary", "--json", path});
  REQUIRE(r.exit_code == 0);
  const auto m = nlohmann::json::parse(r.out)["memory"];
  CHECK(m["alloc_calls"] == 16);
  CHECK(m["realloc_calls"] == 1);
  CHECK(m["free_calls"] == 12);
  CHECK(m["peak_bytes"] == 6000.0);
  CHECK(m["leaked_bytes"] == 4300.0);
  CHECK(m["leaked_blocks"] == 5);
  CHECK(m["temporary_allocations"] == 1);
  CHECK(m["unknown_frees"] == 1);
  REQUIRE(m["peak"].size() == 2);
  CHECK(m["peak"][0]["bytes"] == 5000.0);
  CHECK(m["peak"][1]["bytes"] == 1000.0);
  REQUIRE(m["leaks"].size() == 1);
  CHECK(m["leaks"][0]["bytes"] == 4300.0);
  CHECK(m["leaks"][0]["min_size"] == 300);
  CHECK(m["leaks"][0]["max_size"] == 1000);
  // Sizes 100 (11 allocations) fall in 64..127, 1000 (5) in 512..1023, 300 in 256..511.
  std::map<uint64_t, uint64_t> hist;
  for (const auto &b : m["size_histogram"]) hist[b["min"].get<uint64_t>()] = b["count"];
  CHECK(hist == std::map<uint64_t, uint64_t>{{64, 11}, {256, 1}, {512, 5}});

  const RunResult folded = run_bare({kAnalyzer, "folded", "--metric", "leaked-bytes", path});
  CHECK(folded.out == "0x1000;0x3000 4300\n");
  unlink(path.c_str());
}

TEST_CASE("bad input: a cut file is reported up to its cut, a corrupt one refused") {
  size_t cut = 0;
  std::vector<uint8_t> bytes = synthetic_stream(&cut);
  bytes.resize(cut + 2);  // inside the next record
  const std::string truncated = write_temp(bytes);
  const RunResult t = run_bare({kAnalyzer, "summary", "--json", truncated});
  CHECK(t.exit_code == 0);
  // The cut falls in the ULEB128 after the next record's header byte.
  CHECK(t.err == "prof-analyze: warning: " + truncated + ": truncated at byte " +
                     std::to_string(cut + 1) +
                     " (input ends inside a ULEB128 value); reporting the records before it\n");
  CHECK(nlohmann::json::parse(t.out)["memory"]["free_calls"] == 10);

  bytes = synthetic_stream();
  bytes[15] = 0x7f;  // the Process record's header byte becomes an unknown kind
  const std::string corrupt = write_temp(bytes);
  const RunResult c = run_bare({kAnalyzer, "report", corrupt});
  CHECK(c.exit_code == 2);
  CHECK(c.err == "prof-analyze: " + corrupt + ": corrupt at byte 15: unknown extension record 0x7f\n");

  const std::string empty = write_temp({});
  const RunResult e = run_bare({kAnalyzer, "summary", empty});
  CHECK(e.exit_code == 2);
  CHECK(e.err.find("truncated at byte 0") != std::string::npos);
  for (const auto &p : {truncated, corrupt, empty}) unlink(p.c_str());
}
