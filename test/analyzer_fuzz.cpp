// Hostile input: thousands of randomly corrupted and cut streams (genuine
// LuaJIT fixtures and libprof's extended streams) go through every
// subcommand in-process, in a child under a hard address-space limit. Each
// must end in exit code 0 or 2, never a crash, a hang or a memory blow-up.
// Compressed streams (zstd, as the agent writes them) too, cut anywhere.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyzer_streams.h"
#include "commands.h"
#include "fixture_path.h"
#include "temp_files.h"
#include "zstd_input.h"

#include <zstd.h>

namespace {

std::vector<uint8_t> slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// Writes `bytes` to `path` and runs the three subcommands on it; returns
// their exit codes, -1 for a C++ exception that escaped (their output and
// warnings in *out, if given).
std::vector<int> run_all(const std::string &path, const std::vector<uint8_t> &bytes,
                         std::string *out = nullptr) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  prof::CommandOptions opt;
  opt.files = {path};
  opt.profile.snap_events = 100;
  std::ostringstream sink;
  std::streambuf *saved = std::cerr.rdbuf(sink.rdbuf());
  std::vector<int> rcs;
  for (auto run : {prof::run_report, prof::run_summary, prof::run_folded}) {
    try {
      rcs.push_back(run(opt, sink));
    } catch (...) {
      rcs.push_back(-1);
    }
  }
  std::cerr.rdbuf(saved);
  if (out) *out = sink.str();
  return rcs;
}

// `plain` as one zstd frame whose blocks end every `block` bytes, as the
// agent's periodic syncs end them.
std::vector<uint8_t> compress(const std::vector<uint8_t> &plain, size_t block) {
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  std::vector<uint8_t> out(ZSTD_compressBound(plain.size()) + plain.size() / block * 16 + 64);
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  for (size_t at = 0; at < plain.size(); at += block) {
    const size_t n = std::min(block, plain.size() - at);
    ZSTD_inBuffer i{plain.data() + at, n, 0};
    const bool last = at + n == plain.size();
    while (ZSTD_compressStream2(cctx, &o, &i, last ? ZSTD_e_end : ZSTD_e_flush) != 0) {
    }
  }
  ZSTD_freeCCtx(cctx);
  out.resize(o.pos);
  return out;
}

// `text` without its summaries' STREAMS rows for the file at `path` and
// heap-over-time rows.
std::string without_stream_rows(const std::string &text, const std::string &path) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("  " + path + ": ", 0) != 0 && line.rfind("  pid ", 0) != 0) out += line + "\n";
  return out;
}

// How many bytes of the stream the first `cut` bytes of `packed` decode to.
size_t decodable(const std::vector<uint8_t> &packed, size_t cut) {
  ZSTD_DCtx *dctx = ZSTD_createDCtx();
  std::vector<uint8_t> buf(1 << 16);
  ZSTD_inBuffer i{packed.data(), cut, 0};
  size_t total = 0;
  for (;;) {
    ZSTD_outBuffer o{buf.data(), buf.size(), 0};
    const size_t rc = ZSTD_decompressStream(dctx, &o, &i);
    total += o.pos;
    if (ZSTD_isError(rc) || o.pos == 0) break;
  }
  ZSTD_freeDCtx(dctx);
  return total;
}

// Runs `body` in a child under a 2 GiB address-space limit; the child fails
// on an exit code other than 0 or 2, or when its peak RSS passed 256 MiB.
void in_limited_child(const std::function<bool()> &body) {
  const pid_t pid = fork();
  if (pid == 0) {
    rlimit lim{rlim_t(2) << 30, rlim_t(2) << 30};
    setrlimit(RLIMIT_AS, &lim);
    const bool ok = body();
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    _exit(ok && ru.ru_maxrss < 256 * 1024 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

struct Seed {
  std::string name;
  std::vector<uint8_t> bytes;
  int mutations;  // fewer for the large fixtures, whose every run reads ~5700 symbols
};

std::vector<Seed> seeds() {
  return {{"m3_cfuncs_leaks", slurp(fixture("m3_cfuncs_leaks.memprof.bin")), 400},
          {"m2_jit_traces", slurp(fixture("m2_jit_traces.memprof.bin")), 150},
          {"s_lua_C", slurp(fixture("s_lua_C.sysprof.bin")), 400},
          {"libprof memory", analyzer_test::native_memory_stream(), 1500},
          {"libprof compact memory", analyzer_test::native_compact_stream(), 1500},
          {"libprof CPU", analyzer_test::native_cpu_stream(), 1500}};
}

}  // namespace

TEST_CASE("randomly corrupted streams never crash or exhaust memory") {
  for (const Seed &seed : seeds()) {
    INFO(seed.name);
    in_limited_child([&] {
      std::mt19937_64 rng(std::hash<std::string>()(seed.name));
      const TempFile stream;
      bool ok = true;
      for (int i = 0; i < seed.mutations && ok; i++) {
        std::vector<uint8_t> b = seed.bytes;
        const int damage = 1 + int(rng() % 8);
        for (int k = 0; k < damage && !b.empty(); k++) {
          // Half the damage lands past the leading symbol table, in the events.
          const size_t at = rng() % 2 ? rng() % b.size() : b.size() / 2 + rng() % (b.size() / 2 + 1);
          switch (rng() % 4) {
            case 0: b[at % b.size()] = uint8_t(rng()); break;  // any byte
            case 1: b[at % b.size()] = 0xff; break;             // long ULEB128 runs
            case 2: b[at % b.size()] = 0x40 | uint8_t(rng() % 16); break;  // an ext record
            case 3: b.resize(at % b.size()); break;              // a cut
          }
        }
        for (int rc : run_all(stream.path, b)) ok &= rc == 0 || rc == 2;
      }
      return ok;
    });
  }
}

// Where a stream's first record after its symbol table and prologue ends:
// a cut before it leaves nothing complete.
uint64_t first_record_end(const std::vector<uint8_t> &bytes) {
  prof::ByteReader in(bytes.data(), bytes.size());
  prof::SymtabReader symtab(in);
  for (prof::Symbol s; symtab.next(s);) {
  }
  const prof::Prologue p = prof::read_prologue(in, prof::SectionKind::Memprof, true);
  if (p.kind == prof::SectionKind::Memprof) {
    prof::MemprofReader r(in, p);
    prof::MemprofEvent e;
    REQUIRE(r.next(e));
  } else {
    prof::SysprofReader r(in, p);
    prof::SysprofSample e;
    REQUIRE(r.next(e));
  }
  return in.offset();
}

TEST_CASE("a stream cut at any byte is reported up to the cut, or refused if nothing is complete") {
  for (const Seed &seed : seeds()) {
    INFO(seed.name);
    const uint64_t start = first_record_end(seed.bytes);
    in_limited_child([&] {
      const TempFile stream;
      // Every offset of the small streams, about 150 offsets of the large ones.
      const size_t stride = seed.bytes.size() / 150 + 1;
      bool ok = true;
      for (size_t cut = 0; cut < seed.bytes.size() && ok; cut += stride) {
        const std::vector<uint8_t> b(seed.bytes.begin(), seed.bytes.begin() + long(cut));
        const std::vector<int> rcs = run_all(stream.path, b);
        // summary and folded: a report once a record is whole, else a refusal.
        ok &= rcs[0] == 0 || rcs[0] == 2;
        ok &= rcs[1] == (cut >= start ? 0 : 2) && rcs[2] == rcs[1];
      }
      return ok;
    });
  }
}

TEST_CASE("a compressed stream cut at any byte reads as the stream cut where its decodable blocks end") {
  const TempFile stream;
  for (const Seed &seed : seeds()) {
    INFO(seed.name);
    const std::vector<uint8_t> packed = compress(seed.bytes, 97);
    // Every offset of the small streams, about 150 offsets of the large ones,
    // and the whole file.
    std::vector<size_t> cuts;
    for (size_t cut = 0; cut < packed.size(); cut += packed.size() / 150 + 1) cuts.push_back(cut);
    cuts.push_back(packed.size());
    size_t same = 0;
    for (size_t cut : cuts) {
      const size_t prefix = decodable(packed, cut);
      const std::vector<uint8_t> cut_packed(packed.begin(), packed.begin() + long(cut));
      const std::vector<uint8_t> cut_plain(seed.bytes.begin(), seed.bytes.begin() + long(prefix));
      std::string from_packed, from_plain;
      const std::vector<int> a = run_all(stream.path, cut_packed, &from_packed);
      const std::vector<int> b = run_all(stream.path, cut_plain, &from_plain);
      // The same reports, warnings and offsets as the plain stream cut after
      // its last decodable byte (once the cut leaves zstd's magic whole).
      // (Their summaries' STREAMS rows, sizes of the files, differ, and so
      // do heap marks, placed by file bytes.)
      // (A cut before the stream's first string is whole leaves nothing of
      // ours to see: the plain file is named empty or truncated at byte 0,
      // the compressed one a zstd file that is not a libprof stream.)
      const bool nothing_ours = prefix == 0 || from_plain.find("truncated at byte 0:") != std::string::npos;
      same += a == b && (cut < sizeof prof::kZstdMagic || nothing_ours ||
                         without_stream_rows(from_packed, stream.path) ==
                             without_stream_rows(from_plain, stream.path));
      if (cut == packed.size()) CHECK(prefix == seed.bytes.size());
    }
    CHECK(same == cuts.size());
  }
}

TEST_CASE("a stream cut inside its first record has nothing to report, plain or compressed alike") {
  const std::vector<uint8_t> whole = analyzer_test::native_memory_stream();
  const uint64_t first_end = first_record_end(whole);
  // A plain cut inside the first record, and the compressed stream cut as
  // short (before its first block ends: nothing decodes).
  const std::vector<uint8_t> plain(whole.begin(), whole.begin() + long(first_end - 2));
  const std::vector<uint8_t> packed_all = compress(whole, 4096);
  REQUIRE(packed_all.size() > 40);
  const std::vector<uint8_t> packed(packed_all.begin(), packed_all.begin() + 40);
  REQUIRE(decodable(packed_all, 40) == 0);
  TempDir dir;
  auto write = [&](const std::string &name, const std::vector<uint8_t> &bytes) {
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    return dir / name;
  };
  const std::string good = write("good", whole);
  // Runs summary --json on `files`: its exit code, stdout and stderr.
  auto summary = [](const std::vector<std::string> &files, std::string &out, std::string &err) {
    prof::CommandOptions opt;
    opt.files = files;
    opt.json = true;
    std::ostringstream o, e;
    std::streambuf *saved = std::cerr.rdbuf(e.rdbuf());
    const int rc = prof::run_summary(opt, o);
    std::cerr.rdbuf(saved);
    out = o.str();
    err = e.str();
    return rc;
  };
  std::string alone_out, alone_err;
  REQUIRE(summary({good}, alone_out, alone_err) == 0);
  for (const auto &[name, bytes] : {std::pair<std::string, std::vector<uint8_t>>{"plain", plain},
                                    {"compressed", packed}}) {
    INFO(name);
    const std::string cut = write(name, bytes);
    std::string out, err;
    // Alone: one line, exit code 2.
    CHECK(summary({cut}, out, err) == 2);
    CHECK(out.empty());
    CHECK(err.rfind("prof-analyze: " + cut + ": truncated at byte ", 0) == 0);
    const std::string ending = ": (nothing complete to report)\n";
    CHECK(err.size() > ending.size());
    CHECK(err.find(" (nothing complete to report)\n") == err.size() - ending.size() + 1);
    CHECK(err.find('\n') == err.size() - 1);
    // Among others: left out with a warning, the others reported as alone.
    CHECK(summary({good, cut}, out, err) == 0);
    CHECK(err.find(cut + ": truncated at byte ") != std::string::npos);
    CHECK(err.find("(nothing complete to report; left out)\n") != std::string::npos);
    const nlohmann::json both = nlohmann::json::parse(out)["memory"],
                         one = nlohmann::json::parse(alone_out)["memory"];
    for (const char *figure : {"alloc_calls", "free_calls", "allocated_bytes", "leaked_bytes",
                               "peak_bytes", "leaks"})
      CHECK(both[figure] == one[figure]);
  }
}
