// End-to-end tests of the agent's life in the program it profiles: the
// descriptors it holds (never the program's), how each process's streams
// end (exit from several threads, exit_group, a kill), and forked children
// (test/e2e/mem_*.c and cpu_*.c, counts known by construction).
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <string>
#include <unistd.h>

#include "agent_run.h"
#include "lua_streams.h"
#include "zstd_input.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_findFrameCompressedSize
#include <zstd.h>

namespace {

std::string program(const char *name) { return std::string(PROF_E2E_BIN_DIR) + "/" + name; }

size_t lines(const std::string &s) { return size_t(std::count(s.begin(), s.end(), '\n')); }


}  // namespace

TEST_CASE("after a failed start, forked children leave the program's descriptors alone") {
  // Each process's stream fails at once; the descriptor the agent closed
  // then is the pipe's, in the program, and the child must still read it.
  const RunResult r = run_under_agent({program("mem_full_disk")}, {"PROF_OUTPUT=/dev/full"});
  CHECK(r.out == "child read: from parent\n");
  CHECK(r.exit_code == 3);
  CHECK(lines(r.err) == 1);  // the parent's; the child of a switched-off agent stays off
  CHECK(r.err.rfind("libprof: cannot write /dev/full: No space left on device", 0) == 0);
}

namespace {

// mem_closefrom's files as they must read: `line(i, r)` for each round.
template <class Line>
void check_files(const std::string &dir, const char *stem, int rounds, Line &&line) {
  for (int i = 0; i < 4; i++) {
    std::string want;
    for (int round = 0; round < rounds; round++) want += line(i, round);
    INFO(stem << i);
    CHECK(read_text(dir + "/" + stem + std::to_string(i)) == want);
  }
}

}  // namespace

TEST_CASE("a program that closes every descriptor keeps its files and the profile goes on") {
  // The agent's descriptors are closed under it; the program's files get the
  // low numbers. Not a byte of the profile may land in them, and no event
  // may be lost: the agent opens its file again where it was.
  for (const char *cpu : {"PROF_CPU=off", "PROF_CPU=leaf"}) {
    INFO(cpu);
    char tmpl[] = "/tmp/libprof-files-XXXXXX";
    const std::string dir = mkdtemp(tmpl);
    const std::shared_ptr<void> cleanup(nullptr, [&dir](void *) { remove_tree(dir); });
    const RunResult r = run_under_agent({program("mem_closefrom"), "files", dir}, {cpu});
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    check_files(dir, "data", 5, [](int i, int round) {
      return "data " + std::to_string(i) + " round " + std::to_string(round) + "\n";
    });
    const Recorded rec = read_only_memprof(r);
    CHECK_FALSE(rec.truncated);
    CHECK(count_at(rec.allocs_by_size, 1111) == 10);
    CHECK(count_at(rec.allocs_by_size, 2222) == 5 * 2000);
    CHECK(count_at(rec.frees_by_size, 2222) == 5 * 2000);
    CHECK(count_at(rec.allocs_by_size, 3333) == 10);
    CHECK(rec.unknown_frees == 0);
    for (const auto &f : r.sysprof_files) {
      const GuestProfile p = read_guest_sysprof(f);
      CHECK_FALSE(p.truncated);
      // The main thread's perf clock was among the descriptors closed.
      CHECK(p.stats.at("cpu_thread_clocks_closed") == (p.sampler.backend == 1 ? 1 : 0));
    }
  }
}

TEST_CASE("after the program closed the agent's descriptors, a forked child writes only its own file") {
  char tmpl[] = "/tmp/libprof-logs-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::shared_ptr<void> cleanup(nullptr, [&dir](void *) { remove_tree(dir); });
  const RunResult r = run_under_agent({program("mem_closefrom"), "fork", dir});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  check_files(dir, "log", 1, [](int, int) { return std::string("parent before\nchild\nparent after\n"); });
  const ForkedRun run = read_forked(r);
  const Recorded &parent = run.parent, &child = run.child;
  CHECK(child.ppid == parent.pid);
  CHECK_FALSE(parent.truncated);
  CHECK_FALSE(child.truncated);
  CHECK(count_at(parent.allocs_by_size, 1111) == 10);
  CHECK(count_at(parent.allocs_by_size, 5005) == 5);
  CHECK(count_at(parent.allocs_by_size, 2002) == 0);
  CHECK(count_at(child.allocs_by_size, 2002) == 20);
  CHECK(count_at(child.allocs_by_size, 5005) == 0);
}

TEST_CASE("a profile whose file the program closed and removed ends with one line saying where") {
  // Neither stream can open its file again (the memory stream's ring file
  // is gone too): each says so in one line.
  char tmpl[] = "/tmp/libprof-lost-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::shared_ptr<void> cleanup(nullptr, [&dir](void *) { remove_tree(dir); });
  const RunResult r = run_under_agent({program("mem_closefrom"), "lost", dir},
                                      {"PROF_OUTPUT=" + dir + "/p.%p", "PROF_CPU=leaf"});
  CHECK(r.exit_code == 0);
  CHECK(lines(r.err) == 2);
  CHECK(r.err.rfind("libprof: the program closed the descriptor of " + dir + "/p.", 0) == 0);
  CHECK(r.err.find(".sysprof and it cannot be opened again (No such file or directory); the profile "
                   "ends at byte ") != std::string::npos);
  CHECK(r.err.find("; the CPU profile is truncated\n") != std::string::npos);
  CHECK(r.err.find(".memprof and it cannot be opened again (No such file or directory); the profile "
                   "ends at byte ") != std::string::npos);
}

TEST_CASE("a program that forbids itself stat (seccomp) keeps its profile whole") {
  const RunResult r = run_under_agent({program("mem_seccomp")});
  CHECK(r.exit_code == 42);
  CHECK(r.err.empty());
  REQUIRE(r.memprof_files.size() == 1);
  const Recorded rec = read_memprof(r.memprof_files[0]);
  CHECK_FALSE(rec.truncated);
  CHECK_FALSE(rec.unclean_end);
  CHECK(count_at(rec.allocs_by_size, 3131) == 1000);
}

TEST_CASE("libunwind's memory checks never read or write the program's pipe") {
  // libunwind checks addresses through a pipe of its own, made at the
  // lowest free numbers; the program closes it and makes a pipe of its own.
  const RunResult r = run_under_agent({program("mem_closefrom"), "pipe", "/nonexistent"},
                                      {"PROF_UNWIND=libunwind"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "pipe intact\n");
  CHECK(r.err.empty());
  const Recorded rec = read_only_memprof(r);
  CHECK_FALSE(rec.truncated);
  CHECK(count_at(rec.allocs_by_size, 4444) == 8);
  CHECK(count_at(rec.frees_by_size, 4444) == 8);
  // libunwind could check every address: the threads' stacks are whole
  // (alloc_4444, start_thread, clone).
  for (uint64_t id : rec.stacks_by_size.at(4444)) CHECK(rec.frames(id).size() >= 3);
}

TEST_CASE("a forked child's stats count its own events, not its parent's") {
  const RunResult r = run_under_agent({program("mem_fork_stats")});
  CHECK(r.exit_code == 0);
  const ForkedRun run = read_forked(r);
  CHECK(count_at(run.parent.allocs_by_size, 6060) == 5);
  CHECK(count_at(run.child.allocs_by_size, 7070) == 7);
  REQUIRE(run.parent.stats.size() == 1);
  REQUIRE(run.child.stats.size() == 1);
  std::map<std::string, uint64_t> parent, child;
  for (const auto &c : run.parent.stats[0].counters) parent[c.name] = c.value;
  for (const auto &c : run.child.stats[0].counters) child[c.name] = c.value;
  REQUIRE(parent["unwind_fallbacks"] >= 1);  // the walk could not step through
  REQUIRE(parent["signals_deferred"] >= 1);  // raised inside the agent
  for (const auto &kv : child) {
    INFO(kv.first);
    // The child's few ordinary events need none of these (but bytes, and
    // the compact events and sites they were written as).
    if (kv.first.rfind("stream_", 0) == 0 || kv.first.rfind("compact_", 0) == 0)
      CHECK(kv.second > 0);
    else CHECK(kv.second == 0);
  }
  CHECK(child.size() == parent.size());
}

namespace {

// mem_wait_all's streams: the one with the parent's 100 x 1000 B (its image
// after the exec, if any), and how many hold a child's 10 x 2000 B.
struct WaitAllStreams {
  uint64_t parents = 0, children = 0;
};
WaitAllStreams read_wait_all(const RunResult &r) {
  WaitAllStreams s;
  for (const std::string &file : r.memprof_files) {
    const Recorded rec = read_memprof(file);
    CHECK_FALSE(rec.truncated);
    CHECK_FALSE(rec.unclean_end);
    s.parents += count_at(rec.allocs_by_size, 1000) == 100;
    s.children += count_at(rec.allocs_by_size, 2000) == 10;
  }
  return s;
}

}  // namespace

TEST_CASE("a program that reaps every child with __WALL (as strace does) sees only its own") {
  // The agent's writer is no child of the program's: the loop ends once
  // its 3 forked children are reaped (it would wait on the writer forever,
  // and SIGALRM end it, were the writer its child).
  const RunResult r = run_under_agent({program("mem_wait_all")});
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 3);
  CHECK(r.out == "0 others\n");
  CHECK(r.err.empty());
  CHECK(r.memprof_files.size() == 4);
  const WaitAllStreams s = read_wait_all(r);
  CHECK(s.parents == 1);  // each child's stream has its own events only
  CHECK(s.children == 3);
}

TEST_CASE("a subreaper sees only its own children, never a writer of the agent's") {
  // Were the agent's writers tasks of their own, the subreaper would adopt
  // its children's as orphans, and reap them as children it never made.
  const RunResult r = run_under_agent({program("mem_wait_all"), "subreaper"});
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 3);
  CHECK(r.out == "0 others\n");
  CHECK(r.err.empty());
  CHECK(r.memprof_files.size() == 4);  // (the image before the exec records nothing)
  CHECK(r.ring_files.empty());
  const WaitAllStreams s = read_wait_all(r);
  CHECK(s.parents == 1);
  CHECK(s.children == 3);
}

TEST_CASE("pidof, pgrep and a single-instance check over /proc find the program alone") {
  // (PROF_FOLLOW=0: the tools it runs record nothing.)
  const RunResult r = run_under_agent({program("mem_visible")}, {"PROF_FOLLOW=0"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out == "pidof=self pgrep=self others=0\n");
  const Recorded rec = read_only_memprof(r);
  CHECK_FALSE(rec.unclean_end);
  CHECK(count_at(rec.allocs_by_size, 5005) == 100);
}

TEST_CASE("kill -STOP of the pid pidof gives, then SIGCONT, costs the program only the stop") {
  // The whole program stops and goes on: no wait on a writer left stopped.
  const RunResult r = run_under_agent({program("mem_visible"), "stop"}, {"PROF_FOLLOW=0"});
  INFO("stdout: " << r.out << "stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  const size_t eol = r.out.find('\n');
  REQUIRE(eol != std::string::npos);
  CHECK(r.out.substr(0, eol) == "pidof=self pgrep=self others=0");
  const long ms = std::stol(r.out.substr(eol + 1));
  CHECK(ms >= 500);   // it was stopped
  CHECK(ms < 1500);   // and nothing waited after
  const Recorded rec = read_only_memprof(r);
  CHECK_FALSE(rec.truncated);
  CHECK_FALSE(rec.unclean_end);
  CHECK(count_at(rec.allocs_by_size, 6006) == 1000);
}

TEST_CASE("a killed process keeps its CPU samples up to the last 100 ms") {
  // 0.5 s of CPU at 1 ms: about 500 samples, written out every 100 ms.
  const RunResult r = run_under_agent({program("cpu_killed")}, {"PROF_CPU=leaf", "PROF_INTERVAL=1ms"});
  CHECK(r.signal == SIGKILL);
  // Its memory stream, read with its ring file.
  const Recorded rec = read_only_memprof(r);
  CHECK_FALSE(rec.truncated);
  CHECK(rec.unclean_end);
  REQUIRE(r.sysprof_files.size() == 1);
  const GuestProfile p = read_guest_sysprof(r.sysprof_files[0]);
  CHECK(p.truncated);
  uint64_t weighted = 0;
  for (const GuestSample &s : p.samples) weighted += s.weight;
  CHECK(weighted >= 300);
}

TEST_CASE("threads calling exit() at once leave a complete stream") {
  // The first exit() runs the handlers and the agent's destructor; the
  // others must not end the process before the stream is.
  for (int run = 0; run < 6; run++) {
    const char *cpu = run % 2 ? "PROF_CPU=leaf" : "PROF_CPU=off";
    INFO("run " << run << ", " << cpu);
    const RunResult r = run_under_agent({program("mem_exit_race")}, {cpu});
    CHECK(r.exit_code == 7);
    CHECK(r.err.empty());
    const Recorded rec = read_only_memprof(r);
    CHECK_FALSE(rec.truncated);
    CHECK(count_at(rec.allocs_by_size, 3030) == 9 * 1000);
    CHECK(rec.stats.size() == 1);
    for (const auto &f : r.sysprof_files) CHECK_FALSE(read_guest_sysprof(f).truncated);
  }
}

namespace {

// `prof-analyze summary FILE`'s stderr.
std::string analyzer_warnings(const std::string &file) {
  const std::string err = file + ".analyze-err";
  const std::string cmd = std::string(PROF_ANALYZER_PATH) + " summary " + file + " > /dev/null 2> " + err;
  REQUIRE(std::system(cmd.c_str()) == 0);
  return read_text(err);
}

// The text summary of the files (space-separated), which must succeed.
std::string summary_of(const std::string &files) {
  const std::string out = files.substr(0, files.find(' ')) + ".summary";
  const std::string cmd = std::string(PROF_ANALYZER_PATH) + " summary " + files + " > " + out + " 2>/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return read_text(out);
}

}  // namespace

TEST_CASE("a process that leaves through exit_group keeps every event, ended as unclean") {
  // The ring file holds what the process completed: read after the
  // stream, then an unclean end (the agent's counters died with it).
  for (const char *sampling : {"PROF_SAMPLE_BYTES=0", "PROF_SAMPLE_BYTES=64k"}) {
    INFO(sampling);
    const RunResult r = run_under_agent({program("mem_exit_group")}, {sampling});
    CHECK(r.exit_code == 5);
    CHECK(r.err.empty());
    const Recorded rec = read_only_memprof(r);
    CHECK_FALSE(rec.truncated);
    CHECK(rec.unclean_end);
    CHECK(rec.lost_bytes == 0);
    if (sampling == std::string("PROF_SAMPLE_BYTES=0")) CHECK(count_at(rec.allocs_by_size, 4040) == 4 * 2500);
    CHECK(rec.stats.empty());
    CHECK(r.ring_files.size() == 1);
    const std::string warnings = analyzer_warnings(r.memprof_files[0]);
    CHECK(lines(warnings) == 1);
    CHECK(warnings.find("warning: " + r.memprof_files[0] + ": the process ended without finishing") !=
          std::string::npos);
  }
}

TEST_CASE("a daemon's parent, which leaves inside daemon(), ends its stream cleanly") {
  // glibc's daemon() leaves the parent through its own _exit, which no hook
  // sees: the parent's stream used to end as a killed process's.
  const TempDir out("daemon");
  const RunResult r = run_under_agent({program("mem_daemon"), out.path});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  // The daemon ran, a session leader of its own, and its output is /dev/null.
  CHECK(read_text(out / "daemon.txt").rfind("daemon pid ", 0) == 0);
  REQUIRE(r.memprof_files.size() == 2);
  int parents = 0, daemons = 0;
  for (const std::string &file : r.memprof_files) {
    INFO(file);
    const Recorded rec = read_memprof(file);
    CHECK_FALSE(rec.truncated);
    CHECK_FALSE(rec.unclean_end);
    CHECK(analyzer_warnings(file).empty());
    parents += count_at(rec.leaks_by_size, 1111) == 3 && count_at(rec.allocs_by_size, 2222) == 0;
    daemons += count_at(rec.leaks_by_size, 2222) == 5 && count_at(rec.allocs_by_size, 1111) == 0;
  }
  CHECK(parents == 1);
  CHECK(daemons == 1);
}

namespace {

// The first bytes of a file, and whether it is one whole zstd frame.
struct FileStart {
  bool zstd = false, whole_frame = false, plain = false;
};
FileStart file_start(const std::string &path) {
  const std::string bytes = read_text(path);
  const auto *data = reinterpret_cast<const uint8_t *>(bytes.data());
  FileStart f;
  f.zstd = prof::has_zstd_magic(data, bytes.size());
  f.whole_frame = ZSTD_findFrameCompressedSize(data, bytes.size()) == bytes.size();
  f.plain = bytes.compare(0, 3, "ljs") == 0;
  return f;
}

}  // namespace

TEST_CASE("streams are zstd frames by default, plain under PROF_COMPRESS=0, with the same events") {
  for (const char *compress : {"PROF_COMPRESS=1", "PROF_COMPRESS=0"}) {
    INFO(compress);
    const bool packed = compress == std::string("PROF_COMPRESS=1");
    const RunResult r = run_under_agent({program("mem_exit_race")}, {compress, "PROF_CPU=leaf"});
    CHECK(r.exit_code == 7);
    CHECK(r.err.empty());
    REQUIRE(r.memprof_files.size() == 1);
    REQUIRE(r.sysprof_files.size() == 1);
    for (const std::string &file : {r.memprof_files[0], r.sysprof_files[0]}) {
      INFO(file);
      const FileStart f = file_start(file);
      CHECK(f.zstd == packed);
      CHECK(f.whole_frame == packed);  // ended by the agent, not cut
      CHECK(f.plain == !packed);
    }
    const Recorded rec = read_only_memprof(r);
    CHECK_FALSE(rec.truncated);
    CHECK(count_at(rec.allocs_by_size, 3030) == 9 * 1000);
    CHECK(rec.stats.size() == 1);
    CHECK_FALSE(read_guest_sysprof(r.sysprof_files[0]).truncated);
    CHECK(analyzer_warnings(r.memprof_files[0]).empty());
  }
}

namespace {

// The stream, of those in `files`, of the process that made blocks of
// `size` bytes, and its file.
std::pair<Recorded, std::string> memprof_with(const std::vector<std::string> &files, uint64_t size) {
  for (const std::string &file : files) {
    Recorded rec = read_memprof(file);
    if (count_at(rec.allocs_by_size, size)) return {rec, file};
  }
  FAIL("no stream made blocks of " << size << " bytes");
  return {};
}

// mem_killed's counts, every one: blocks of the stream's durable part
// paired with frees that only the ring file holds.
void check_killed_counts(const Recorded &rec, const std::string &file) {
  CHECK_FALSE(rec.truncated);
  CHECK(rec.unclean_end);
  CHECK(rec.lost_bytes == 0);
  CHECK(count_at(rec.allocs_by_size, 9009) == 1000);
  CHECK(count_at(rec.frees_by_size, 9009) == 400);
  CHECK(count_at(rec.leaks_by_size, 9009) == 600);
  CHECK(count_at(rec.allocs_by_size, 9010) == 500);
  CHECK(count_at(rec.frees_by_size, 9010) == 100);
  CHECK(count_at(rec.leaks_by_size, 9010) == 400);
  CHECK(rec.unknown_frees == 0);
  const std::string warnings = analyzer_warnings(file);
  CHECK(lines(warnings) == 1);
  CHECK(warnings.find(": the process ended without finishing its profile") != std::string::npos);
  CHECK(warnings.find("every event it completed is here") != std::string::npos);
}

}  // namespace

TEST_CASE("a process killed with kill -9 keeps every event it completed, ended as unclean") {
  const RunResult r = run_under_agent({program("mem_killed"), "self"});
  REQUIRE(r.signal == SIGKILL);
  REQUIRE(r.out == "done\n");
  const FileStart f = file_start(r.memprof_files.at(0));
  CHECK(f.zstd);
  CHECK_FALSE(f.whole_frame);  // no one ended it
  CHECK(r.ring_files.size() == 1);
  check_killed_counts(read_only_memprof(r), r.memprof_files.at(0));
  // The ring file named beside its stream (a glob: p.*), or alone, stands
  // for the stream, read once.
  const std::string stream = r.memprof_files.at(0), ring = r.ring_files.at(0);
  const std::string by_stream = summary_of(stream);
  CHECK(by_stream.find("calls:") != std::string::npos);
  CHECK(summary_of(stream + " " + ring) == by_stream);
  CHECK(summary_of(ring) == by_stream);
}

TEST_CASE("a fork child killed with kill -9 keeps every event it completed in its own ring file") {
  // (Its ring file was once made from a descriptor number the child had
  // just moved away from: a fork child's ring was plain memory.)
  const RunResult r = run_under_agent({program("mem_killed"), "fork"});
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.out == "done\n");
  REQUIRE(r.memprof_files.size() == 2);
  CHECK(r.ring_files.size() == 1);
  const auto [rec, file] = memprof_with(r.memprof_files, 9009);
  check_killed_counts(rec, file);
}

TEST_CASE("a process killed while its writer writes keeps every free paired") {
  // Two threads hand blocks back and forth for seconds; SIGKILL comes at a
  // random point of the writer's work: the ring file's table, its undo log
  // undone, pairs every free the ring holds with its block. A block is
  // live only if it was in flight (8 slots each way) or its free was cut.
  for (int round = 0; round < 3; round++) {
    INFO("round " << round);
    const RunResult r = run_under_agent(
        {"timeout", "-s", "KILL", std::to_string(1.0 + 0.5 * round), program("mem_threads"),
         "20000000"});
    REQUIRE((r.exit_code == 137 || r.signal == SIGKILL));  // (timeout's group, it too)
    const auto [rec, file] = memprof_with(r.memprof_files, 1111);
    CHECK_FALSE(rec.truncated);
    CHECK(rec.unclean_end);
    CHECK(rec.unknown_frees == 0);
    CHECK(count_at(rec.allocs_by_size, 1111) > 2000);  // (past 64 KiB: the writer runs)
    CHECK(count_at(rec.leaks_by_size, 1111) + count_at(rec.leaks_by_size, 2222) <= 2 * 8 + 4);
  }
}

TEST_CASE("kill -9 in a PID namespace whose init then ends keeps every completed event") {
  // (The namespace's end kills every task in it at once.)
  const TempDir dir("pidns");
  const std::string script = "mkfifo " + dir / "fifo" + "; env LD_PRELOAD=" + PROF_AGENT_PATH +
                             " PROF_OUTPUT=" + dir / "prof.%p " + program("mem_killed") + " > " +
                             dir / "fifo" + " & P=$!; read line < " + dir / "fifo" +
                             "; kill -9 $P; wait $P; s=$?; echo $line; exit $s";
  const RunResult r = run_bare({"unshare", "-fp", "--mount-proc", "sh", "-c", script});
  REQUIRE(r.exit_code == 137);
  REQUIRE(r.out == "done\n");
  const auto [rec, file] = memprof_with(memprof_files_in(dir.path), 9009);
  check_killed_counts(rec, file);
}

TEST_CASE("a process a debugger kills keeps every completed event") {
  const TempDir dir("gdb");
  const RunResult r = run_bare(
      {"gdb", "-batch", "-nx", "-ex",
       "set exec-wrapper env LD_PRELOAD=" + std::string(PROF_AGENT_PATH) + " PROF_OUTPUT=" +
           dir / "prof.%p",
       "-ex", "run", "-ex", "kill", "--args", program("mem_killed"), "stop"});
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.out.find("done\n") != std::string::npos);
  const auto [rec, file] = memprof_with(memprof_files_in(dir.path), 9009);
  check_killed_counts(rec, file);
}

TEST_CASE("a writer stopped alone costs the program a bounded time, and the profile is whole") {
  // The writer stopped (a debugger's ptrace) while it waits for work: the
  // program's threads write for it once a wait for room has made no
  // progress for 0.1 s, and its exit waits 2 s, not until the writer goes on.
  const RunResult r = run_under_agent({program("mem_writer_stopped")});
  INFO("stdout: " << r.out << "stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.out != "hung\n");
  CHECK(std::stol(r.out) < 4000);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.rfind("libprof: the agent's writer thread ", 0) == 0);
  CHECK(r.err.find(" made no progress for 2 s (stopped or starved); the program finished " +
                   r.dir.path + "/prof.") != std::string::npos);
  const Recorded rec = read_only_memprof(r);
  CHECK_FALSE(rec.truncated);
  CHECK_FALSE(rec.unclean_end);
  CHECK(count_at(rec.allocs_by_size, 7007) == 1000);
  CHECK(count_at(rec.frees_by_size, 7007) == 400);
  CHECK(count_at(rec.allocs_by_size, 48) == 300000);
  CHECK(count_at(rec.frees_by_size, 48) == 300000);
  CHECK(count_at(rec.allocs_by_size, 8008) == 1000);
  CHECK(rec.unknown_frees == 0);
}

TEST_CASE("under a low task limit, an unprivileged program's forks fail no more often than bare") {
  // RLIMIT_NPROC counts the user's every task: a writer per process would
  // take the room of the program's own children. Run as a user of its own
  // (no other task of it counts).
  const TempDir dir = agent_dir_for_other_users("nproc");
  copy_file(program("mem_fork_limit"), dir / "forker", 0755);
  const std::vector<std::string> user = {"prlimit", "--nproc=30", "setpriv", "--reuid=47213",
                                         "--regid=47213", "--clear-groups", "env"};
  std::vector<std::string> bare = user, agent = user;
  bare.push_back(dir / "forker");
  agent.insert(agent.end(), {"LD_PRELOAD=" + dir / "libprof.so",
                             "PROF_OUTPUT=" + dir / "prof.%p", dir / "forker"});
  const RunResult b = run_bare(bare);
  REQUIRE(b.exit_code == 0);
  REQUIRE(b.out == "failed=0\n");  // the control: 21 tasks fit in 30
  const RunResult a = run_bare(agent);
  CHECK(a.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(a.err.empty());
  const std::vector<std::string> files = memprof_files_in(dir.path);
  REQUIRE(files.size() == 21);
  uint64_t parent_blocks = 0, child_blocks = 0, child_frees = 0;
  for (const auto &f : files) {
    const Recorded rec = read_memprof(f);
    CHECK_FALSE(rec.truncated);
    parent_blocks += count_at(rec.allocs_by_size, 5005);
    child_blocks += count_at(rec.allocs_by_size, 6006);
    child_frees += count_at(rec.frees_by_size, 6006);
  }
  CHECK(parent_blocks == 50);
  CHECK(child_blocks == 20 * 100);
  CHECK(child_frees == 20 * 100);
}
