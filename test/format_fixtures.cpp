// The genuine LuaJIT streams in ../shared/fixtures/luajit decode completely,
// with record counts checked against independent sources: the reference
// parser's reports (events per section) and the VM's own sysprof counters.
// Cutting them at every byte offset gives a clean truncation, never a crash.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "fixture_path.h"
#include "memprof.h"
#include "sysprof.h"

using namespace prof;

namespace {

std::vector<uint8_t> slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

std::string text(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Sums "N events" per section of a reference memprof report.
std::map<std::string, uint64_t> reference_event_counts(const std::string &report) {
  std::map<std::string, uint64_t> sums;
  std::string section;
  std::istringstream lines(report);
  std::string line;
  static const std::regex row(": (\\d+) events\t");
  while (std::getline(lines, line)) {
    if (line == "ALLOCATIONS" || line == "REALLOCATIONS" || line == "DEALLOCATIONS")
      section = line;
    else if (line.rfind("HEAP SUMMARY", 0) == 0)
      section.clear();
    std::smatch m;
    if (!section.empty() && std::regex_search(line, m, row)) sums[section] += std::stoull(m[1]);
  }
  return sums;
}

// One record of a decoded stream: where it lies and which reader reads it.
struct Span {
  uint64_t start, end;
  SectionKind section;
};

struct Decoded {
  std::vector<Span> spans;
  uint64_t symtab_symbols = 0;
  std::map<MemprofRecord, uint64_t> memprof;
  std::map<int, uint64_t> vmstates;  // sysprof samples per vmstate
  std::vector<uint64_t> trace_symbols;
  Prologue profile{};
  uint64_t profile_start = 0;
};

Decoded decode_all(const std::vector<uint8_t> &bytes) {
  Decoded d;
  ByteReader in(bytes.data(), bytes.size());
  SymtabReader symtab(in);
  Symbol sym;
  for (uint64_t at = in.offset(); symtab.next(sym); at = in.offset()) {
    d.spans.push_back({at, in.offset(), SectionKind::Symtab});
    d.symtab_symbols++;
  }
  d.profile_start = in.offset();
  d.profile = read_prologue(in, SectionKind::Memprof, true);
  if (d.profile.kind == SectionKind::Memprof) {
    MemprofReader r(in, d.profile);
    MemprofEvent ev;
    for (uint64_t at = in.offset(); r.next(ev); at = in.offset()) {
      d.spans.push_back({at, in.offset(), SectionKind::Memprof});
      d.memprof[ev.record]++;
      if (ev.record == MemprofRecord::Symbol && ev.symbol.type == kSymTrace)
        d.trace_symbols.push_back(ev.symbol.traceno);
    }
  } else {
    SysprofReader r(in, d.profile);
    SysprofSample s;
    for (uint64_t at = in.offset(); r.next(s); at = in.offset()) {
      d.spans.push_back({at, in.offset(), SectionKind::Sysprof});
      if (s.record == SysprofRecord::Sample) d.vmstates[s.vmstate]++;
    }
  }
  REQUIRE(in.at_end());
  return d;
}

// Reads one record of `section` from [start, cut) as a reader would after a cut.
void read_one(const std::vector<uint8_t> &bytes, const Span &span, uint64_t cut,
              const Prologue &profile) {
  ByteReader in(bytes.data() + span.start, cut - span.start, span.start);
  switch (span.section) {
    case SectionKind::Symtab: {
      SymtabReader r(in, Prologue{SectionKind::Symtab, false, 0});
      Symbol s;
      r.next(s);
      break;
    }
    case SectionKind::Memprof: {
      MemprofReader r(in, profile);
      MemprofEvent ev;
      r.next(ev);
      break;
    }
    case SectionKind::Sysprof: {
      SysprofReader r(in, profile);
      SysprofSample s;
      r.next(s);
      break;
    }
  }
}

// Every cut inside every record is reported as truncation at an offset inside
// that record; every cut between records decodes the records before it.
void check_all_cuts(const std::vector<uint8_t> &bytes) {
  const Decoded d = decode_all(bytes);
  uint64_t cuts = 0;
  for (const Span &span : d.spans) {
    for (uint64_t cut = span.start; cut < span.end; cut++, cuts++) {
      try {
        read_one(bytes, span, cut, d.profile);
        FAIL("a record cut at " << cut << " decoded");
      } catch (const FormatError &e) {
        REQUIRE(e.truncated());
        REQUIRE(e.offset() >= span.start);
        REQUIRE(e.offset() <= cut);
      }
    }
    REQUIRE_NOTHROW(read_one(bytes, span, span.end, d.profile));
  }
  // The prologues, and whole-stream prefixes ending on record boundaries.
  std::vector<uint64_t> prefixes;
  for (uint64_t c = 0; c < 7; c++) prefixes.push_back(c);
  for (uint64_t c = d.profile_start; c < d.profile_start + 7; c++) prefixes.push_back(c);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20; i++) prefixes.push_back(d.spans[rng() % d.spans.size()].end);
  for (uint64_t cut : prefixes) {
    std::vector<uint8_t> head(bytes.begin(), bytes.begin() + long(cut));
    try {
      decode_all(head);
      FAIL("a prefix of " << cut << " bytes decoded as a whole stream");
    } catch (const FormatError &e) {
      REQUIRE(e.truncated());
      REQUIRE(e.offset() <= cut);
    }
  }
  CHECK(cuts + d.profile_start > 0);
  CHECK(d.spans.back().end + 1 == bytes.size());  // only the epilogue byte follows
}

}  // namespace

TEST_CASE("genuine memprof fixtures decode with the reference parser's event counts") {
  for (const char *name : {"m1_seed_example", "m2_jit_traces", "m3_cfuncs_leaks"}) {
    SECTION(name) {
      const auto bytes = slurp(fixture(std::string(name) + ".memprof.bin"));
      const auto want = reference_event_counts(text(fixture(std::string(name) + ".memprof.txt")));
      const Decoded d = decode_all(bytes);
      CHECK_FALSE(d.profile.extended);
      CHECK(d.profile.kind == SectionKind::Memprof);
      CHECK(d.memprof.at(MemprofRecord::Alloc) == want.at("ALLOCATIONS"));
      CHECK(d.memprof.at(MemprofRecord::Realloc) == want.at("REALLOCATIONS"));
      CHECK(d.memprof.at(MemprofRecord::Free) == want.at("DEALLOCATIONS"));
      // The fixture README: every stream starts with about 5,700 C symbols.
      CHECK(d.symtab_symbols > 5000);
      CHECK(d.symtab_symbols < 7000);
    }
  }
}

TEST_CASE("the JIT fixture carries the traces its report names") {
  const auto bytes = slurp(fixture("m2_jit_traces.memprof.bin"));
  const std::string report = text(fixture("m2_jit_traces.memprof.txt"));
  const Decoded d = decode_all(bytes);
  for (uint64_t traceno : {1, 2}) {
    CHECK(report.find("TRACE [" + std::to_string(traceno) + "]") != std::string::npos);
    CHECK(std::count(d.trace_symbols.begin(), d.trace_symbols.end(), traceno) >= 1);
  }
}

TEST_CASE("genuine sysprof fixtures match the VM's own counters exactly") {
  for (const char *name : {"s_lua_L", "s_lua_C"}) {
    SECTION(name) {
      const auto bytes = slurp(fixture(std::string(name) + ".sysprof.bin"));
      const std::string counters = text(fixture(std::string(name) + ".counters.txt"));
      const Decoded d = decode_all(bytes);
      CHECK(d.profile.kind == SectionKind::Sysprof);
      uint64_t total = 0;
      for (const auto &kv : d.vmstates) total += kv.second;
      static const std::regex field("(\\w+)=(\\d+)");
      uint64_t checked = 0;
      for (std::sregex_iterator it(counters.begin(), counters.end(), field), end; it != end;
           ++it) {
        const std::string key = (*it)[1];
        const uint64_t value = std::stoull((*it)[2]);
        if (key == "samples") {
          CHECK(total == value);
          continue;
        }
        int vm = -1;
        for (int i = 0; i < kVmstCount; i++)
          if (key == vmstate_name(uint8_t(i))) vm = i;
        REQUIRE(vm >= 0);
        const auto found = d.vmstates.find(vm);
        CHECK((found == d.vmstates.end() ? 0 : found->second) == value);
        checked++;
      }
      CHECK(checked == 6);
    }
  }
}

TEST_CASE("cutting a genuine stream at any byte gives a clean truncation") {
  for (const char *name : {"m1_seed_example.memprof.bin", "m2_jit_traces.memprof.bin",
                           "m3_cfuncs_leaks.memprof.bin", "s_lua_L.sysprof.bin",
                           "s_lua_C.sysprof.bin"}) {
    SECTION(name) { check_all_cuts(slurp(fixture(name))); }
  }
}
