// LLVM MemProf raw profiles, read from bytes written by the test's own
// writer (llvm_memprof_bytes.h): each version's records, corruption named at
// its offset, a cut at every byte, random bytes; then through the analyzer
// with this test program as the --binary (its build-id in the segments).
#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "commands.h"
#include "llvm_memprof.h"
#include "llvm_memprof_bytes.h"
#include "read/elf_file.h"
#include "temp_files.h"

using namespace llvm_memprof_test;

namespace {

const std::string kBuildId("\x12\x34\x56\x78\x9a\xbc\xde\xf0\x12\x34\x56\x78\x9a\xbc\xde\xf0\x11\x22\x33\x44", 20);

std::vector<uint8_t> sample(uint64_t version, const std::string &build_id = kBuildId) {
  ProfileBytes p(version);
  return p.build({{0x400000, 0x401000, 0x1000, version == 1 ? "" : build_id},
                  {0x7f0000000000, 0x7f0000010000, 0, ""}},
                 {{7, 1000, 1500, 64000, 64, 64, 2000, 1, 425, 3},
                  {9, 10, 10, 40960, 4096, 4096, 30}},
                 {{9, {0x400100, 0x400200, 0x400300}}, {7, {0x400110, 0x400210, 0x400300}}});
}

struct Decoded {
  std::vector<prof::LlvmMemprofItem> items;
  std::string error;
  bool truncated = false;
  uint64_t offset = 0;
};

Decoded decode(const std::vector<uint8_t> &bytes) {
  Decoded d;
  prof::ByteReader in(bytes.data(), bytes.size());
  prof::LlvmMemprofReader reader(in);
  prof::LlvmMemprofItem item;
  try {
    while (reader.next(item)) d.items.push_back(item);
  } catch (const prof::FormatError &e) {
    d.error = e.what();
    d.truncated = e.truncated();
    d.offset = e.offset();
  }
  return d;
}

void put_u64(std::vector<uint8_t> &b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; i++) b[at + size_t(i)] = uint8_t(v >> (8 * i));
}

}  // namespace

TEST_CASE("MemProf raw: each version's records decode as written", "[llvm_memprof]") {
  for (uint64_t version : {1, 3, 4}) {
    CAPTURE(version);
    ProfileBytes p(version);
    const auto bytes = p.build({{0x400000, 0x401000, 0x1000, version == 1 ? "" : kBuildId}},
                               {{7, 1000, 1500, 64000, 64, 64, 2000, 1, 425, version == 4 ? 3u : 0u},
                                {9, 10, 10, 40960, 4096, 4096, 30}},
                               {{9, {0x400100, 0x400200}}, {7, {0x400110}}});
    const Decoded d = decode(bytes);
    REQUIRE(d.error == "");
    REQUIRE(d.items.size() == 1 + 1 + 2 + 2);
    CHECK(d.items[0].record == prof::LlvmMemprofRecord::Header);
    CHECK(d.items[0].header.version == version);
    CHECK(d.items[1].segment.start == 0x400000);
    CHECK(d.items[1].segment.offset == 0x1000);
    CHECK(d.items[1].segment.build_id == (version == 1 ? "" : kBuildId));
    const prof::LlvmMemprofMib &m = d.items[2].mib;
    CHECK(m.stack_id == 7);
    CHECK(m.alloc_count == 1000);
    CHECK(m.total_access == 1500);
    CHECK(m.total_size == 64000);
    CHECK(m.min_size == 64);
    CHECK(m.total_lifetime == 2000);
    CHECK(m.migrations == 1);
    CHECK(m.lifetime_overlaps == 425);
    CHECK(m.histogram_size == (version == 4 ? 3 : 0));
    CHECK(d.items[3].mib.stack_id == 9);
    CHECK(d.items[3].mib.max_size == 4096);
    CHECK(d.items[4].stack.id == 9);
    CHECK(d.items[4].stack.pcs == std::vector<uint64_t>{0x400100, 0x400200});
    CHECK(d.items[5].stack.pcs == std::vector<uint64_t>{0x400110});
    CHECK(d.items[5].offset == bytes.size() - 24);
  }
}

TEST_CASE("MemProf raw: profiles concatenated in one file are read one after the other", "[llvm_memprof]") {
  std::vector<uint8_t> two = sample(4);
  const std::vector<uint8_t> second = sample(1);
  two.insert(two.end(), second.begin(), second.end());
  const Decoded d = decode(two);
  REQUIRE(d.error == "");
  size_t headers = 0;
  for (const auto &i : d.items) headers += i.record == prof::LlvmMemprofRecord::Header;
  CHECK(headers == 2);
  CHECK(d.items.size() == 2 * (1 + 2 + 2 + 2));
}

TEST_CASE("MemProf raw: corruption is named at the offset of the value", "[llvm_memprof]") {
  const std::vector<uint8_t> good = sample(4);
  struct Case {
    const char *what;
    size_t at;
    uint64_t value;
    uint64_t offset;
    const char *says;
  };
  // Header 0..47; segment count 48; segment 0 at 56 (64 bytes); MIB count
  // at 184; MIB 0 at 192 (8 + 144 bytes).
  const Case cases[] = {
      {"magic", 0, 0x1234, 0, "bad magic"},
      {"version 2", 8, 2, 8, "version 2 is not supported"},
      {"version 5", 8, 5, 8, "version 5 is not supported"},
      {"offsets out of order", 32, 40, 16, "section offsets out of order"},
      {"segment count", 48, 1000, 48, "1000 entries do not fit in the segment section"},
      {"build-id size", 56 + 24, 33, 56 + 24, "build-id size 33 exceeds 32"},
      {"MIB count", 184, uint64_t(1) << 60, 184, "entries do not fit in the MIB section"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.what);
    std::vector<uint8_t> bad = good;
    put_u64(bad, c.at, c.value);
    const Decoded d = decode(bad);
    CHECK(!d.truncated);
    CHECK(d.offset == c.offset);
    CHECK_THAT(d.error, Catch::Contains(c.says));
  }
  SECTION("a histogram longer than its section") {
    std::vector<uint8_t> bad = good;
    bad[192 + 8 + 132] = 0xff;
    bad[192 + 8 + 133] = 0xff;
    const Decoded d = decode(bad);
    CHECK(d.offset == 192 + 8 + 132);
    CHECK_THAT(d.error, Catch::Contains("runs past the MIB section"));
  }
  SECTION("a stack deeper than the limit") {
    std::vector<uint8_t> bad = good;
    const size_t stack0 = size_t(good[40]) | size_t(good[41]) << 8;  // stack-offset
    put_u64(bad, stack0 + 16, 5000);
    const Decoded d = decode(bad);
    CHECK(d.offset == stack0 + 16);
    CHECK_THAT(d.error, Catch::Contains("stack of 5000 pcs"));
  }
}

TEST_CASE("MemProf raw: a profile cut at every byte is a truncation, never anything else", "[llvm_memprof]") {
  for (uint64_t version : {1, 4}) {
    const std::vector<uint8_t> full = sample(version);
    for (size_t n = 0; n < full.size(); n++) {
      CAPTURE(version, n);
      const Decoded d = decode(std::vector<uint8_t>(full.begin(), full.begin() + long(n)));
      REQUIRE(d.truncated);
      REQUIRE(d.offset <= n);
    }
    CHECK(decode(full).error == "");
  }
}

TEST_CASE("MemProf raw: random bytes end in a FormatError or a clean read", "[llvm_memprof]") {
  std::mt19937_64 rng(21);
  const std::vector<uint8_t> good = sample(4);
  for (int round = 0; round < 20000; round++) {
    std::vector<uint8_t> bytes = good;
    const int flips = 1 + int(rng() % 8);
    for (int i = 0; i < flips; i++) bytes[rng() % bytes.size()] = uint8_t(rng());
    if (round % 4 == 0) bytes.resize(rng() % bytes.size());
    const Decoded d = decode(bytes);  // any other exception or a crash fails the test
    if (!d.error.empty()) REQUIRE(d.offset <= bytes.size());
  }
}

namespace {

// Runs a subcommand in-process on `bytes` with this program as the binary.
struct Run {
  int rc;
  std::string out, err;
};
Run analyze(int (*run)(const prof::CommandOptions &, std::ostream &),
            const std::vector<uint8_t> &bytes, const std::string &binary = "/proc/self/exe",
            const std::string &metric = "alloc-count") {
  TempDir dir;
  const std::string path = dir / "profile.memprofraw";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  prof::CommandOptions opt;
  opt.files = {path};
  opt.profile.binary = binary;
  opt.folded.metric = metric;
  std::ostringstream out, err;
  std::streambuf *saved = std::cerr.rdbuf(err.rdbuf());
  const int rc = run(opt, out);
  std::cerr.rdbuf(saved);
  return {rc, out.str(), err.str()};
}

std::string own_build_id() {
  const auto self = prof::ElfFile::open("/proc/self/exe");
  REQUIRE(self);
  REQUIRE(!self->build_id().empty());
  return self->build_id();
}

}  // namespace

TEST_CASE("MemProf raw: the analyzer counts contexts by stack, checking the binary's build-id",
          "[llvm_memprof]") {
  const std::string id = own_build_id();
  SECTION("counts and sizes per context") {
    const Run r = analyze(prof::run_folded, sample(4, id));
    REQUIRE(r.rc == 0);
    std::istringstream lines(r.out);
    std::map<uint64_t, int> counts;  // count -> lines
    for (std::string line; std::getline(lines, line);)
      counts[std::stoull(line.substr(line.rfind(' ') + 1))]++;
    CHECK(counts == std::map<uint64_t, int>{{10, 1}, {1000, 1}});
    CHECK(analyze(prof::run_folded, sample(4, id), "/proc/self/exe", "alloc-bytes").out.find(" 64000\n") !=
          std::string::npos);
    CHECK(analyze(prof::run_folded, sample(4, id), "/proc/self/exe", "lifetime-overlaps").out.find(" 425\n") !=
          std::string::npos);
  }
  SECTION("a binary of another build-id is refused in one line") {
    const Run r = analyze(prof::run_summary, sample(4));
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains("is not in this profile (its build-ids: 123456789abcdef0"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  SECTION("no binary is refused in one line") {
    const Run r = analyze(prof::run_summary, sample(4, id), "");
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains("give it with --binary PATH"));
  }
  SECTION("a MIB whose stack never comes is corrupt at its offset") {
    std::vector<uint8_t> bad = sample(4, id);
    const size_t mib1 = 192 + 152 + 3 * 8;  // after MIB 0 and its 3 histogram buckets
    put_u64(bad, mib1, 99);                  // MIB 1's stack id
    const Run r = analyze(prof::run_summary, bad);
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, Catch::Contains("corrupt at byte " + std::to_string(mib1) +
                                      ": MIB names stack 99"));
  }
  SECTION("a cut stack section keeps the contexts still waiting, without a stack") {
    std::vector<uint8_t> cut = sample(4, id);
    cut.resize(cut.size() - 30);  // inside the last stack
    const Run r = analyze(prof::run_folded, cut);
    CHECK(r.rc == 0);
    CHECK_THAT(r.err, Catch::Contains("truncated at byte"));
    CHECK_THAT(r.out, Catch::Contains("[no stack] 1000"));
    CHECK(r.out.find(" 10\n") != std::string::npos);
  }
  SECTION("random bytes through every command: exit 0 or 2") {
    std::mt19937_64 rng(14);
    const std::vector<uint8_t> good = sample(4, id);
    for (int round = 0; round < 300; round++) {
      std::vector<uint8_t> bytes = good;
      for (int i = 0; i < 4; i++) bytes[8 + rng() % (bytes.size() - 8)] = uint8_t(rng());
      for (auto run : {prof::run_summary, prof::run_folded}) {
        const int rc = analyze(run, bytes).rc;
        REQUIRE((rc == 0 || rc == 2));
      }
    }
  }
}
