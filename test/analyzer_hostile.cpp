// prof-analyze, run as a program, under hostile but valid input: small
// streams whose naive reading costs far more memory or time than they hold
// stay within bounds proportional to what they hold (peak RSS of the child
// process, generous timeouts); crafted stack tables and sizes are refused at
// the record that breaks them, or read without overflow.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <chrono>
#include <climits>
#include <initializer_list>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hostile_streams.h"

using namespace hostile_test;
using Json = nlohmann::json;

namespace {

constexpr long kMiB = 1024;  // ru_maxrss counts KiB

struct Run {
  int exit_code = -1;  // -1: killed
  bool timed_out = false;
  long max_rss_kb = 0;
  std::string err;
};

std::string slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A directory removed with its files at the end of the scope.
struct TempDir {
  std::string path;
  std::vector<std::string> files;
  TempDir() {
    char tmpl[] = "/tmp/libprof-hostile-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    for (const std::string &f : files) unlink(f.c_str());
    rmdir(path.c_str());
  }
  std::string file(const std::string &name) {
    files.push_back(path + "/" + name);
    return files.back();
  }
  std::string write(const std::string &name, const std::vector<uint8_t> &bytes) {
    const std::string p = file(name);
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    return p;
  }
};

// Runs prof-analyze with `args`, stdout to `out`, under an address-space
// limit of `limit_mib`; kills it after `timeout_s` seconds.
Run analyze(const std::vector<std::string> &args, const std::string &out = "/dev/null",
            long limit_mib = 2048, int timeout_s = 300) {
  char err_path[] = "/tmp/libprof-hostile-err-XXXXXX";
  const int err_fd = mkstemp(err_path);
  REQUIRE(err_fd >= 0);
  const pid_t pid = fork();
  if (pid == 0) {
    const rlimit lim{rlim_t(limit_mib) << 20, rlim_t(limit_mib) << 20};
    setrlimit(RLIMIT_AS, &lim);
    const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    std::vector<char *> argv{const_cast<char *>(PROF_ANALYZER_PATH)};
    for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  Run r;
  int status = 0;
  rusage ru{};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (wait4(pid, &status, WNOHANG, &ru) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &ru);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.max_rss_kb = ru.ru_maxrss;
  close(err_fd);
  r.err = slurp(err_path);
  unlink(err_path);
  return r;
}

// Where this test program is loaded: its path, bias and extent, as the
// agent's module-load record gives them.
struct MainModule {
  std::string path;
  uint64_t bias = 0, size = 0;
};

MainModule main_module() {
  MainModule m;
  char path[PATH_MAX];
  REQUIRE(realpath("/proc/self/exe", path));
  m.path = path;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *m = static_cast<MainModule *>(data);
        m->bias = info->dlpi_addr;
        for (int i = 0; i < info->dlpi_phnum; i++)
          if (info->dlpi_phdr[i].p_type == PT_LOAD)
            m->size = std::max<uint64_t>(m->size, info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz);
        return 1;  // the first object is the program
      },
      &m);
  return m;
}

}  // namespace

// A function with debug information in this program, for the symbolizer.
extern "C" __attribute__((noinline)) int hostile_test_marker(int x) { return x * 3 + 1; }

TEST_CASE("many module records of one file share one reader") {
  TempDir dir;
  const MainModule m = main_module();
  const uint64_t at = uint64_t(reinterpret_cast<uintptr_t>(&hostile_test_marker)) - m.bias;
  const std::string one = dir.write("one", same_module_stream(m.path, m.size, at, 1));
  const std::string many = dir.write("many", same_module_stream(m.path, m.size, at, 60));
  const std::string out_one = dir.file("one.folded"), out_many = dir.file("many.folded");
  const Run r1 = analyze({"folded", one}, out_one), rn = analyze({"folded", many}, out_many);
  INFO(r1.err << rn.err);
  REQUIRE(r1.exit_code == 0);
  REQUIRE(rn.exit_code == 0);
  // Each copy names the same function with its DWARF, each stack its byte.
  CHECK(slurp(out_one) == "hostile_test_marker 1\n");
  CHECK(slurp(out_many) == "hostile_test_marker 60\n");
  // A reader per record would cost 59 more of them.
  INFO("RSS: one record " << r1.max_rss_kb << " KiB, 60 records " << rn.max_rss_kb << " KiB");
  CHECK(rn.max_rss_kb < r1.max_rss_kb + 16 * kMiB);
}

namespace {

// `stream` as the agent compresses it: one zstd frame of 512 KiB windows,
// its size unknown when it began.
std::vector<uint8_t> as_agent_compresses(const std::vector<uint8_t> &stream) {
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 19);
  std::vector<uint8_t> out(ZSTD_compressBound(stream.size()) + 64);
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  ZSTD_inBuffer in{stream.data(), stream.size(), 0};
  ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_continue);
  ZSTD_inBuffer none{nullptr, 0, 0};
  while (ZSTD_compressStream2(cctx, &o, &none, ZSTD_e_end) != 0) {
  }
  ZSTD_freeCCtx(cctx);
  out.resize(o.pos);
  return out;
}

}  // namespace

TEST_CASE("many small compressed streams cost what they hold, not memory per file") {
  // Each file's reader (zstd's context and window, some 0.7 MB) was kept
  // for good, and what reading freed stayed resident: 623 small streams of
  // one run took 458 MB to summarise.
  TempDir dir;
  const std::vector<uint8_t> packed =
      as_agent_compresses(same_module_stream("/nonexistent/lib.so", 4096, 16, 1));
  const std::vector<std::string> one{"summary", dir.write("s0", packed)};
  std::vector<std::string> many{"summary"};
  for (int i = 0; i < 300; i++) many.push_back(dir.write("s" + std::to_string(i), packed));
  const Run r1 = analyze(one), rn = analyze(many);
  INFO(r1.err << rn.err);
  REQUIRE(r1.exit_code == 0);
  REQUIRE(rn.exit_code == 0);
  INFO("RSS: one stream " << r1.max_rss_kb << " KiB, 300 streams " << rn.max_rss_kb << " KiB");
  CHECK(rn.max_rss_kb < r1.max_rss_kb + 40 * kMiB);
}

TEST_CASE("a deep chain under 100k leaves: every report stays small and quick") {
  TempDir dir;
  constexpr uint64_t kDepth = 1023, kLeaves = 100000;
  const std::string deep = dir.write("deep", deep_chain_stream(kDepth, kLeaves));
  const std::string deeper = dir.write("deep2", deep_chain_stream(kDepth, kLeaves, 2));
  struct Command {
    std::vector<std::string> args;
    std::string out;  // written with -o, else stdout
  };
  const std::string folded = dir.file("folded"), diff = dir.file("diff.json");
  const std::vector<Command> commands = {
      {{"summary", deep}, ""},
      {{"folded", deep}, folded},
      {{"diff", "--json", deep, deeper}, diff},
      {{"flamegraph", deep, "-o", dir.file("flame.svg")}, ""},
      {{"html", deep, "-o", dir.file("page.html")}, ""},
      {{"pprof", deep, "-o", dir.file("profile.pb.gz")}, ""},
      {{"speedscope", deep, "-o", dir.file("speedscope.json")}, ""},
  };
  for (const Command &c : commands) {
    INFO(c.args[0]);
    // XXX: the old reader took over a gigabyte and minutes for some of them;
    // the timeout only stops a run that never ends on a loaded machine.
    const Run r = analyze(c.args, c.out.empty() ? "/dev/null" : c.out, 2048, 240);
    INFO(r.err << "peak RSS " << r.max_rss_kb << " KiB");
    CHECK(!r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(r.max_rss_kb < 256 * kMiB);
  }

  // folded: one line per leaf, the chain's frames named by their addresses
  // (no module covers them), each leaf's byte.
  std::string chain;
  for (uint64_t level = 1; level <= kDepth; level++) {
    std::ostringstream ip;
    ip << "0x" << std::hex << 0x1000 + 16 * level << ";";
    chain += ip.str();
  }
  uint64_t size = 0;
  for (uint64_t i = 0; i < kLeaves; i++) {
    std::ostringstream leaf;
    leaf << "0x" << std::hex << 0x100000 + 16 * i << " 1\n";
    size += chain.size() + leaf.str().size();
  }
  std::ifstream in(folded);
  std::string first;
  std::getline(in, first);
  CHECK(first == chain + "0x100000 1");
  in.seekg(0, std::ios::end);
  CHECK(uint64_t(in.tellg()) == size);

  // diff: every leaf grew by a byte; the first 20 in the order of their frames.
  const Json d = Json::parse(slurp(diff));
  REQUIRE(d["stacks"].size() == 20);
  CHECK(d["stacks"][0]["alloc_bytes"]["delta"] == 1.0);
  CHECK(d["stacks"][0]["stack"][0]["function"] == "0x100000");
  CHECK(d["stacks"][19]["stack"][0]["function"] == "0x100130");
  CHECK(d["stacks"][0]["stack"].size() == kDepth + 1);
}

TEST_CASE("distinct stacks cost a bounded number of bytes each") {
  TempDir dir;
  constexpr uint64_t kFew = 1000, kMany = 500000;
  const std::string few = dir.write("few", distinct_stacks_stream(kFew));
  const std::string many = dir.write("many", distinct_stacks_stream(kMany));
  struct Bound {
    const char *command;
    long bytes_per_stack;
  };
  // summary: the stack table, the stack ids and the per-stack figures
  // (StackStats, 112 bytes); folded also names every frame and stack.
  for (const Bound &b : {Bound{"summary", 256}, Bound{"folded", 448}}) {
    INFO(b.command);
    const Run small = analyze({b.command, few}), large = analyze({b.command, many});
    INFO(small.err << large.err);
    REQUIRE(small.exit_code == 0);
    REQUIRE(large.exit_code == 0);
    const long per_stack = (large.max_rss_kb - small.max_rss_kb) * 1024 / long(kMany - kFew);
    INFO("peak RSS " << small.max_rss_kb << " KiB, then " << large.max_rss_kb << " KiB: "
                     << per_stack << " bytes a stack");
    CHECK(per_stack < b.bytes_per_stack);
  }
}

TEST_CASE("running out of memory names the file and the record being read") {
  TempDir dir;
  const std::vector<uint8_t> bytes = distinct_stacks_stream(1000000);
  const std::string path = dir.write("million", bytes);
  // 100 MiB of address space: the program starts, the stacks do not fit.
  const Run r = analyze({"summary", path}, "/dev/null", 100);
  REQUIRE(r.exit_code == 2);
  const std::string prefix = "prof-analyze: " + path + ": out of memory while reading byte ";
  REQUIRE(r.err.compare(0, prefix.size(), prefix) == 0);
  const std::string rest = r.err.substr(prefix.size());
  CHECK(rest.find('\n') == rest.size() - 1);  // one line
  const uint64_t offset = std::stoull(rest);
  CHECK(offset > 0);
  CHECK(offset < bytes.size());
}

namespace {

// Each command refuses the stream at path in one line naming bad_at.
void check_corrupt(const std::string &path, uint64_t bad_at, const std::string &reason,
                   std::initializer_list<const char *> commands) {
  for (const char *command : commands) {
    INFO(command);
    const Run r = analyze({command, path});
    CHECK(r.exit_code == 2);
    CHECK(r.err == "prof-analyze: " + path + ": corrupt at byte " + std::to_string(bad_at) + ": " +
                       reason + "\n");
  }
}

}  // namespace

TEST_CASE("crafted stack tables and sizes are refused at the record that breaks them") {
  TempDir dir;
  for (const CraftedStream &c : crafted_streams()) {
    SECTION(c.what) {
      uint64_t bad_at = 0;
      const std::string path = dir.write("crafted", crafted_stream(c, &bad_at));
      check_corrupt(path, bad_at, c.reason, {"summary", "report", "folded"});
    }
  }
}

TEST_CASE("an object type must type the allocation right after it, not a free, an event-thread or the end") {
  TempDir dir;
  for (const char *then : {"a free", "an event-thread", "the end"}) {
    INFO("then " << then);
    VecOut o;
    begin_memory_stream(o);
    put_ext(o, ext::StackHost{1, 0, 0x1000});
    put_alloc(o, 1, 0x10000, 16);
    const uint64_t bad_at = o.b.size();
    put_ext(o, ext::ObjectType{2});
    if (then == std::string("a free")) put_free(o, 0x10000);
    if (then == std::string("an event-thread")) {
      put_ext(o, ext::EventThread{42});
      put_alloc(o, 1, 0x20000, 16);
    }
    put_memprof_epilogue(o);
    check_corrupt(dir.write("typed", o.b), bad_at,
                  "an object-type record not followed by an allocation", {"summary", "folded"});
  }
}

TEST_CASE("a record of one section's kinds in the other is refused") {
  TempDir dir;
  VecOut o;
  begin_memory_stream(o);
  const uint64_t bad_at = o.b.size();
  put_ext(o, ext::Thread{42});
  put_memprof_epilogue(o);
  check_corrupt(dir.write("thread-in-memprof", o.b), bad_at, "thread record in a memprof stream",
                {"summary"});
  VecOut cpu;
  put_prologue(cpu, SectionKind::Symtab, false);
  put_symtab_final(cpu);
  put_prologue(cpu, SectionKind::Sysprof, true);
  const uint64_t cpu_bad_at = cpu.b.size();
  put_ext(cpu, ext::EventThread{42});  // (the memory stream's own thread record)
  put_sysprof_epilogue(cpu);
  check_corrupt(dir.write("event-thread-in-sysprof", cpu.b), cpu_bad_at,
                "event-thread record in a sysprof stream", {"summary"});
}

TEST_CASE("a thread name longer than the kernel keeps is refused where it starts") {
  TempDir dir;
  VecOut o;
  begin_memory_stream(o);
  put_ext(o, ext::ThreadNameView{7, "fifteen-bytes.."});  // the longest there is: read
  o.put_u8(ext_header(ExtKind::ThreadName));
  o.put_uleb(8);
  const uint64_t bad_at = o.b.size();
  o.put_string("sixteen-bytes...", 16);
  put_memprof_epilogue(o);
  check_corrupt(dir.write("long-thread-name", o.b), bad_at, "thread name of 16 bytes (at most 15)",
                {"summary", "report", "folded"});
}

TEST_CASE("thread records with a tid Linux never gives are refused at the tid") {
  TempDir dir;
  for (const uint64_t tid : {uint64_t(0), kMaxTid + 1, UINT64_MAX}) {
    for (const ExtKind kind : {ExtKind::EventThread, ExtKind::ThreadName}) {
      const std::string record = ext_kind_name(kind);
      INFO(record << " of tid " << tid);
      VecOut o;
      begin_memory_stream(o);
      put_ext(o, ext::EventThread{kMaxTid});  // the highest there is: read
      put_ext(o, ext::StackHost{1, 0, 0x1000});
      put_alloc(o, 1, 0x10000, 8);
      o.put_u8(ext_header(kind));
      const uint64_t bad_at = o.b.size();
      o.put_uleb(tid);
      if (kind == ExtKind::ThreadName) o.put_string("w", 1);
      put_alloc(o, 1, 0x20000, 8);
      put_memprof_epilogue(o);
      check_corrupt(dir.write("bad-tid", o.b), bad_at,
                    record + " of tid " + std::to_string(tid) + " (a thread id is 1 to 4194304)",
                    {"summary", "report", "folded"});
    }
  }
}

TEST_CASE("a memory stream switching among more threads than a stream keeps apart is read within bounds") {
  // 100,000 threads, one allocation each: the first 65,534 get a line of
  // their own, the rest share one ("other threads"), and every block is
  // counted once.
  TempDir dir;
  VecOut o;
  begin_memory_stream(o);
  put_ext(o, ext::StackHost{1, 0, 0x1000});
  constexpr uint64_t kThreads = 100000;
  for (uint64_t t = 1; t <= kThreads; t++) {
    put_ext(o, ext::EventThread{t});
    put_alloc(o, 1, 0x10000 + 16 * t, 16);
  }
  put_memprof_epilogue(o);
  const std::string out = dir.file("threads.json");
  const Run r = analyze({"summary", "--json", dir.write("many-threads", o.b)}, out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.max_rss_kb < 400 * kMiB);  // (the JSON document of 65,535 lines is most of it)
  const Json j = Json::parse(slurp(out));
  const Json &threads = j["memory"]["threads"];
  REQUIRE(threads.size() == 65534 + 1);
  double calls = 0, others = 0;
  for (const Json &t : threads) {
    calls += t["alloc_count"].get<double>();
    if (t["name"] == "(other threads)") others = t["alloc_count"].get<double>();
  }
  CHECK(calls == kThreads);
  CHECK(others == kThreads - 65534);
  CHECK(j["memory"]["alloc_calls"] == kThreads);
}

TEST_CASE("a sampling mean and a mapping of 2^63 bytes are read without overflow") {
  TempDir dir;
  // XXX: the agent takes any 64-bit PROF_SAMPLE_BYTES, and records munmap
  // and mremap lengths as the program passed them: both are legitimate.
  VecOut o;
  begin_memory_stream(o);
  put_ext(o, ext::Sampling{uint64_t(1) << 63});
  put_ext(o, ext::StackHost{1, 0, 0x1000});
  put_alloc(o, 1, 0x10000, 1000);
  put_ext(o, ext::Map{0x7000000, uint64_t(1) << 63, 1, 0});
  put_memprof_epilogue(o);
  const std::string path = dir.write("large", o.b);

  // A block of 1000 bytes sampled at a mean of 2^63 stands for
  // 1000 / (1 - exp(-1000 / 2^63)) = 2^63 + 500 bytes, 2^63 as the model's
  // float weight.
  const std::string folded = dir.file("folded");
  const Run f = analyze({"folded", path}, folded);
  INFO(f.err);
  REQUIRE(f.exit_code == 0);
  CHECK(slurp(folded) == "0x1000 9223372036854775808\n");

  const std::string summary = dir.file("summary.json");
  const Run s = analyze({"summary", "--json", path}, summary);
  INFO(s.err);
  REQUIRE(s.exit_code == 0);
  const Json j = Json::parse(slurp(summary));
  CHECK(j["memory"]["sampling_mean_bytes"] == uint64_t(1) << 63);
  CHECK(j["memory"]["allocated_bytes"] == 9223372036854775808.0);
  CHECK(j["memory"]["mmap"]["mapped_bytes"] == 9223372036854775808.0);

  const std::string text = dir.file("summary.txt");
  REQUIRE(analyze({"summary", path}, text).exit_code == 0);
  const std::string t = slurp(text);
  INFO(t);
  CHECK(t.find("8589934592GiB") != std::string::npos);  // 2^63 bytes, in GiB
  // No negative number (a '-' inside a word, as in a temporary path, is not one).
  for (size_t at = t.find('-'); at != std::string::npos; at = t.find('-', at + 1))
    if (at == 0 || !isalnum(static_cast<unsigned char>(t[at - 1])))
      CHECK(!isdigit(static_cast<unsigned char>(t[at + 1])));
}

TEST_CASE("names from a stream reach terminals and JSON as text: no escape sequence, no bad UTF-8") {
  TempDir dir;
  // A module whose path holds a Latin-1 byte and an escape sequence, with a
  // stack in it.
  const std::string name = "/nonexistent/caf\xe9\x1b[2J.so";
  VecOut o;
  begin_memory_stream(o);
  put_ext(o, ext::ModuleLoadView{0x400000, 0x10000, name, ""});
  put_ext(o, ext::StackHost{1, 0, 0x401001});
  put_alloc(o, 1, 0x10000, 64);
  put_memprof_epilogue(o);
  const std::string path = dir.write("names", o.b);
  const std::string folded = dir.file("folded.txt");
  REQUIRE(analyze({"folded", path}, folded).exit_code == 0);
  const std::string text = slurp(folded);
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find("caf\xe9?[2J.so") != std::string::npos);  // the rest as it was
  for (const char *command : {"summary", "report", "folded"}) {
    INFO(command);
    const std::string out = dir.file(std::string(command) + ".json");
    const Run r = analyze({command, "--json", path}, out);
    CHECK(r.exit_code == 0);
    CHECK_NOTHROW(Json::parse(slurp(out)));  // U+FFFD for the Latin-1 byte
  }
}

TEST_CASE("a Lua chunk named /proc/self/pagemap is not read for function names") {
  // /proc files say they hold 0 bytes, and this one never ends.
  TempDir dir;
  VecOut o;
  begin_memory_stream(o);
  put_memprof_symbol(o, Symbol{kSymLfunc, 0x500, 1, 0, "@/proc/self/pagemap"});
  put_ext(o, ext::StackGuest{1, 0, kFrameLfunc, 0x500, 2});
  put_memprof_event(o, AllocEvent{kAeventAlloc, GuestLoc{kAsourceLfunc, 0x500, 2, 0}, true, 0, 1,
                                  0, 0, 0x10000, 64});
  put_memprof_epilogue(o);
  const std::string path = dir.write("pagemap", o.b);
  const Run r = analyze({"folded", path}, "/dev/null", 2048, 20);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
}

TEST_CASE("bytes after a stream's end are said, and a zero-length map holds nothing") {
  TempDir dir;
  VecOut o;
  begin_memory_stream(o);
  put_ext(o, ext::Map{0x7000000, 100, 0, 0});
  put_ext(o, ext::Map{0x7000000, 0, 0, 0});  // (mmap refuses it: crafted)
  put_ext(o, ext::Unmap{0x7000000, 100});
  put_memprof_epilogue(o);
  const uint64_t end = o.b.size();
  o.b.insert(o.b.end(), {'j', 'u', 'n', 'k'});
  const std::string path = dir.write("trailing", o.b);
  const std::string out = dir.file("summary.txt");
  const Run r = analyze({"summary", "--full", path}, out);
  CHECK(r.exit_code == 0);
  CHECK(r.err == "prof-analyze: warning: " + path + ": bytes after the stream's end, from byte " +
                     std::to_string(end) + ", are not read (one stream per file)\n");
  CHECK(slurp(out).find("mapped at the end 0B") != std::string::npos);
}
