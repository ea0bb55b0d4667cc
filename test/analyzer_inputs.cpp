// prof-analyze's refusals, as a user meets them: every command-line error
// exits 2 with a message a user can act on, a file of another tool's format
// is named, an option the streams have nothing for is an error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sys/stat.h>

#include "agent_run.h"
#include "analyzer_streams.h"
#include "temp_files.h"

using namespace analyzer_test;

namespace {

RunResult analyze(std::vector<std::string> args) {
  args.insert(args.begin(), PROF_ANALYZER_PATH);
  return run_bare(args);
}

void write_bytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// One zstd frame holding `text` (under 256 bytes) as one raw block, whole.
std::string zstd_frame(const std::string &text) {
  const uint32_t block = uint32_t(text.size()) << 3 | 1;  // last block, raw
  std::string frame("\x28\xb5\x2f\xfd\x20", 5);      // single segment, 1-byte size
  frame += char(text.size());
  frame += {char(block & 0xff), char(block >> 8 & 0xff), char(block >> 16)};
  return frame + text;
}

}  // namespace

TEST_CASE("every command-line error of every command exits 2 with CLI11's message") {
  const TempFile memory(native_memory_stream());
  const std::string m = memory.path;
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"--bogus"},
      {"sumary", m},
  };
  const std::vector<std::string> commands = {"report", "summary", "folded", "diff", "flamegraph",
                                             "chart", "html", "pprof", "speedscope"};
  std::vector<std::vector<std::string>> lines = bad;
  for (const std::string &c : commands) {
    lines.push_back({c});                          // no file
    lines.push_back({c, m, "--bogus"});            // unknown option
    lines.push_back({c, m + ".missing", m});       // a missing file
    lines.push_back({c, "/", m});                  // a directory
  }
  lines.push_back({"diff", m, m, m});  // one file too many
  lines.push_back({"diff", m, m, "--top"});
  for (const auto &opt : {"--top", "--heap-snap-interval", "--heap-snap-events"})
    for (const char *value : {"0", "-1", "abc", "1e99"}) lines.push_back({"summary", m, opt, value});
  for (const char *value : {"0", "-3", "x"}) lines.push_back({"diff", m, m, "--top", value});
  lines.push_back({"folded", m, "--metric", "bogus"});
  lines.push_back({"diff", m, m, "--sort", "bogus"});
  lines.push_back({"summary", m, "--stack-depth", "-1"});
  for (const auto &line : lines) {
    std::string shown;
    for (const std::string &w : line) shown += w + " ";
    INFO(shown);
    const RunResult r = analyze(line);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    // One line, named as every message of the tool.
    CHECK(r.err.rfind("prof-analyze: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK(analyze({"summary"}).err ==
        "prof-analyze: a run's folder or profile files are required (see prof-analyze --help)\n");
}

TEST_CASE("an unknown command is named, a range is said in plain numbers") {
  const TempFile memory(native_memory_stream());
  const RunResult unknown = analyze({"sumary", memory.path});
  CHECK(unknown.err.find("unknown command 'sumary'") != std::string::npos);
  const RunResult top = analyze({"summary", "--top", "0", memory.path});
  CHECK(top.exit_code == 2);
  CHECK(top.err.find("--top: '0' is not a whole number from 1 to 1000000000") != std::string::npos);
  const RunResult interval = analyze({"summary", "--heap-snap-interval", "0", memory.path});
  CHECK(interval.err.find("is not a number above 0 and at most 1000000000") != std::string::npos);
  CHECK(analyze({"summary", "--top", "1", memory.path}).exit_code == 0);
  CHECK(analyze({"summary", "--top", "1000000000", memory.path}).exit_code == 0);
}

TEST_CASE("a file of another tool's format is named, any other non-profile refused with a reason") {
  TempDir dir;
  struct Case {
    std::string name, bytes, says;
  };
  // zstd: a frame cut inside its first block; whole_zstd: one raw block of
  // 32 bytes of text, whole.
  const std::string gzip("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10),
      zstd("\x28\xb5\x2f\xfd\x04\x58\x00\x00\x00\x00", 10),
      whole_zstd("\x28\xb5\x2f\xfd\x20\x20\x01\x01\x00plain text, not a profile stream", 41);
  const std::vector<Case> cases = {
      {"empty.memprof", "", "an empty file, not a profile stream"},
      {"heaptrack.prog.1234.zst", zstd, "a heaptrack file, not a profile stream; read it with heaptrack_print"},
      {"heaptrack.prog.1234", "v 10100 3\ns 5\n", "a heaptrack file"},
      {"cpu.pb.gz", gzip, "a pprof profile (gzip), not a profile stream; read it with go tool pprof"},
      {"perf.data", "PERFILE2" + std::string(100, '\0'), "a perf.data file (perf record)"},
      {"stream.gz", gzip, "a gzip-compressed file, not a profile stream (if it holds one, gunzip it first)"},
      {"other.zst", whole_zstd, "a zstd-compressed text file, not a profile stream"},
      {"other-binary.zst", zstd_frame(std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8)),
       "a zstd-compressed file that is not a libprof stream"},
      {"cut.memprof", zstd, "truncated at byte 0: input ends inside"},
      {"twenty", "0123456789abcdefghij",
       "a text file, not a profile stream (profiles are binary files named prof.<pid>.memprof or "
       ".sysprof)"},
      {"notes.txt.zst", zstd_frame("some notes\n"), "a zstd-compressed text file, not a profile stream"},
      // heaptrack's files by their content, whatever their name.
      {"app.out.zst", zstd_frame("v 10100 3\nX ./app\n"),
       "a heaptrack file, not a profile stream; read it with heaptrack_print or heaptrack_gui"},
      {"app.out", "v 10100 3\nX ./app\n", "a heaptrack file"},
      {"Heap.heapsnapshot", "{\"snapshot\":{\"meta\":{\"node_fields\":[\"type\"]}}}",
       "a Chrome heap snapshot (.heapsnapshot), not a profile stream; open it in Chrome DevTools' "
       "Memory tab"},
      {"binary", std::string("\x01\x02\x03\x04zzzz", 8), "corrupt at byte 0: not a LuaJIT profiler stream"},
  };
  for (const Case &c : cases) {
    INFO(c.name);
    const std::string path = dir / c.name;
    write_bytes(path, c.bytes);
    for (const char *command : {"summary", "report", "folded", "flamegraph"}) {
      INFO(command);
      const RunResult r = analyze({command, path});
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err.rfind("prof-analyze: " + path + ": " + c.says, 0) == 0);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
  }
  const std::string folder = dir / "folder";
  REQUIRE(mkdir(folder.c_str(), 0755) == 0);
  const RunResult directory = analyze({"summary", folder});
  CHECK(directory.exit_code == 2);
  CHECK(directory.err == "prof-analyze: " + folder + ": no profile in this folder (files named "
                         "*.memprof* or *.sysprof*, as prof-run and PROF_OUTPUT write them)\n");
}

TEST_CASE("an option the streams have nothing for is an error, and -o says why it cannot write") {
  TempDir dir;
  const std::string memory = dir / "m.memprof", cpu = dir / "c.sysprof";
  const std::vector<uint8_t> m = native_memory_stream(), c = native_cpu_stream();
  write_bytes(memory, std::string(m.begin(), m.end()));
  write_bytes(cpu, std::string(c.begin(), c.end()));
  for (const char *command : {"folded", "flamegraph"}) {
    INFO(command);
    const RunResult metric = analyze({command, cpu, "--metric", "leaked-bytes"});
    CHECK(metric.exit_code == 2);
    CHECK(metric.err == "prof-analyze: --metric applies to memory profiles; " + cpu +
                            " is a CPU profile (sysprof)\n");
    const RunResult vmstate = analyze({command, memory, "--by-vmstate"});
    CHECK(vmstate.exit_code == 2);
    CHECK(vmstate.err == "prof-analyze: --by-vmstate applies to CPU profiles; " + memory +
                             " is a memory profile (memprof)\n");
    CHECK(analyze({command, cpu, "--by-vmstate"}).exit_code == 0);
    CHECK(analyze({command, memory, "--metric", "leaked-bytes"}).exit_code == 0);
  }
  // LLVM MemProf's measures are not in libprof's streams: named, not an empty graph.
  for (const char *command : {"folded", "flamegraph"})
    for (const char *metric : {"access-count", "lifetime-ms"}) {
      INFO(command << " " << metric);
      const RunResult r = analyze({command, memory, "--metric", metric});
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err == std::string("prof-analyze: --metric ") + metric +
                         ": only LLVM MemProf profiles measure it; these streams have "
                         "alloc-bytes, alloc-count, leaked-bytes, peak-bytes\n");
    }
  CHECK(analyze({"diff", memory, memory, "--sort", "cpu-migrations"}).exit_code == 2);
  CHECK(analyze({"summary", cpu, "--heap-snap-events", "5"}).exit_code == 2);
  const RunResult missing = analyze({"flamegraph", memory, "-o", dir / "no/such/dir/f.svg"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "prof-analyze: cannot write " + dir / "no/such/dir/f.svg" +
                           ": No such file or directory\n");
}
