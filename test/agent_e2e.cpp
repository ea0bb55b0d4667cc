// End-to-end tests of libprof.so: real processes under the agent, with the
// counts each test program makes by construction (see test/e2e/mem_*.c).
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_run.h"
#include "temp_files.h"

namespace {

std::string program(const char *name) { return std::string(PROF_E2E_BIN_DIR) + "/" + name; }

// Allocations of `size` bytes over all the files.
uint64_t allocs_in(const std::vector<std::string> &files, uint64_t size) {
  uint64_t n = 0;
  for (const auto &f : files) n += count_at(read_memprof(f).allocs_by_size, size);
  return n;
}

}  // namespace

TEST_CASE("every allocation of known sites is recorded and paired") {
  const RunResult r = run_under_agent({program("mem_sites")});
  CHECK(r.exit_code == 7);
  CHECK(r.err.empty());
  const Recorded rec = read_only_memprof(r);
  CHECK_FALSE(rec.truncated);
  CHECK(count_at(rec.allocs_by_size, 4242) == 100);
  CHECK(count_at(rec.frees_by_size, 4242) == 90);
  CHECK(count_at(rec.leaks_by_size, 4242) == 10);
  CHECK(count_at(rec.allocs_by_size, 777) == 50);
  CHECK(count_at(rec.frees_by_size, 777) == 50);
  CHECK(count_at(rec.allocs_by_size, 333) == 20);
  CHECK(count_at(rec.frees_by_size, 333) == 20);  // by the reallocs
  CHECK(count_at(rec.allocs_by_size, 3333) == 20);
  CHECK(count_at(rec.frees_by_size, 3333) == 20);
  CHECK(count_at(rec.leaks_by_size, 5555) == 5);
  CHECK(rec.unknown_frees == 0);

  // The innermost frame of each 4242-byte allocation is inside site_kept:
  // the agent's own frames are gone.
  std::istringstream line(r.out);
  std::string word;
  uint64_t lo = 0;
  line >> word >> std::hex >> lo;
  REQUIRE(word == "site_kept");
  REQUIRE(rec.stacks_by_size.count(4242));
  for (uint64_t id : rec.stacks_by_size.at(4242)) {
    const auto frames = rec.frames(id);
    REQUIRE_FALSE(frames.empty());
    CHECK(frames[0] > lo);
    CHECK(frames[0] < lo + 64);
    CHECK(frames.size() >= 3);  // site_kept <- main <- libc start
  }
  CHECK_FALSE(rec.modules.empty());
  // The agent's writer runs, yet glibc still counts one thread.
  CHECK(r.out.find("\nsingle_threaded 1\n") != std::string::npos);
}

namespace {
// mem_threads with n blocks each way: exact counts, no false leak.
void check_handed_blocks(uint64_t n) {
  const RunResult r = run_under_agent({program("mem_threads"), std::to_string(n)});
  CHECK(r.exit_code == 0);
  const Recorded rec = read_only_memprof(r);
  CHECK_FALSE(rec.truncated);
  for (uint64_t size : {1111, 2222}) {
    CHECK(count_at(rec.allocs_by_size, size) == n);
    CHECK(count_at(rec.frees_by_size, size) == n);
    CHECK(count_at(rec.leaks_by_size, size) == 0);
  }
  CHECK(rec.unknown_frees == 0);
}
}  // namespace

TEST_CASE("blocks handed between threads pair exactly with no false leak") {
  check_handed_blocks(2000);
}

TEST_CASE("many more events than the ring holds keep their order across threads") {
  // 800 000 events, about 10 MB: the 4 MiB ring wraps and fills many times.
  check_handed_blocks(200000);
}

TEST_CASE("the safe unwinding mode (libunwind) finds the same stacks") {
  const RunResult fast = run_under_agent({program("mem_sites")});
  const RunResult safe = run_under_agent({program("mem_sites")}, {"PROF_UNWIND=libunwind"});
  const Recorded a = read_only_memprof(fast), b = read_only_memprof(safe);
  // Same binary, no ASLR difference inside it: compare module-relative frames.
  auto relative = [](const Recorded &rec, uint64_t size) {
    std::vector<std::vector<uint64_t>> out;
    for (uint64_t id : rec.stacks_by_size.at(size)) {
      std::vector<uint64_t> frames;
      for (uint64_t ip : rec.frames(id)) {
        uint64_t base = 0;
        for (const auto &m : rec.modules)
          if (ip >= m.base && ip < m.base + m.size && m.base > base) base = m.base;
        frames.push_back(ip - base);
      }
      out.push_back(frames);
    }
    return out;
  };
  for (uint64_t size : {4242, 777, 3333, 5555}) {
    INFO(size);
    const auto fa = relative(a, size), fb = relative(b, size);
    REQUIRE(fa.size() == fb.size());
    CHECK(fa == fb);
  }
  CHECK(stat_counter(a, "unwind_fallbacks") == 0);
}

TEST_CASE("threads that allocate after main left with pthread_exit keep the fast walk") {
  // The leader's /proc/self/maps reads empty then: each thread's stack is
  // found in its own view (thread-self), and no walk falls back to libunwind.
  const RunResult r = run_under_agent({program("mem_main_exits")});
  REQUIRE(r.exit_code == 0);
  const Recorded rec = read_only_memprof(r);
  CHECK(rec.allocs_by_size.at(6001) == 4000);
  CHECK(rec.frees_by_size.at(6001) == 4000);
  CHECK(stat_counter(rec, "unwind_fallbacks") == 0);
  CHECK(stat_counter(rec, "unwind_failures") == 0);
}

TEST_CASE("threads started after the program chroots into a jail without /proc keep their stacks") {
  if (geteuid() != 0) {
    std::fprintf(stderr, "SKIPPED: chroot needs root\n");
    std::exit(4);
  }
  TempDir jail;
  const RunResult r = run_under_agent({program("mem_chroot"), jail.path});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "jailed\n");
  CHECK(r.err.empty());
  const Recorded rec = read_only_memprof(r);
  CHECK(rec.allocs_by_size.at(6003) == 2000);
  CHECK(stat_counter(rec, "unwind_fallbacks") == 0);
  CHECK(stat_counter(rec, "unwind_failures") == 0);
}

TEST_CASE("a child made without fork() is not profiled, says so in one line, and never waits") {
  // Its memory is a copy of the parent's, ring and writer included, but no
  // fork handler ran: no writer will ever drain its ring. Few events (the
  // ring never fills) or many (it does, at once), the same line.
  for (const char *n : {"10", "300000"}) {
    INFO(n);
    const RunResult r = run_under_agent({program("mem_raw_fork"), n});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "child 3\n");
    const std::string line = " was made by a raw clone() without fork(), which the agent cannot "
                             "follow; it is not profiled\n";
    CHECK(r.err.rfind("libprof: process ", 0) == 0);
    CHECK(r.err.size() > line.size());
    CHECK(r.err.compare(r.err.size() - line.size(), line.size(), line) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    const Recorded rec = read_only_memprof(r);  // the parent's, whole
    CHECK_FALSE(rec.truncated);
    CHECK(rec.allocs_by_size.at(7001) == 10);
    CHECK(rec.frees_by_size.at(7001) == 10);
    CHECK(rec.allocs_by_size.count(7002) == 0);
  }
}

TEST_CASE("a process that records nothing writes no memory stream") {
  // The stream opens with its first event: true allocates nothing.
  const RunResult none = run_under_agent({"true"});
  CHECK(none.exit_code == 0);
  CHECK(none.memprof_files.empty());
  // A shell's child that only execs records nothing either; the shell does.
  const RunResult shell = run_under_agent({"sh", "-c", "true; true"});
  CHECK(shell.exit_code == 0);
  CHECK(shell.memprof_files.size() == 1);
  // Nor does the agent set up the heap of a program that never allocates
  // (it tests the allocator with its first block instead): no [heap] in
  // its map, as bare.
  CHECK(run_bare({program("mem_untouched")}).exit_code == 0);
  const RunResult untouched = run_under_agent({program("mem_untouched")});
  CHECK(untouched.exit_code == 0);
  CHECK(untouched.memprof_files.empty());
}

TEST_CASE("the agent brings no library of its own into the program") {
  // cat prints its own memory map: the agent's runtime is linked in, hidden,
  // libunwind is loaded only when a walk needs it (never, here), and libm
  // not at all (cat needs none).
  const RunResult r = run_under_agent({"cat", "/proc/self/maps"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("libprof.so") != std::string::npos);
  for (const char *lib : {"libstdc++", "libgcc_s", "libunwind", "liblzma", "libm.so"}) {
    INFO(lib);
    CHECK(r.out.find(lib) == std::string::npos);
  }
  // The safe mode loads libunwind when its first walk needs it, and records
  // that module like any the program loads.
  const RunResult safe = run_under_agent({program("mem_sites")}, {"PROF_UNWIND=libunwind"});
  const Recorded rec = read_only_memprof(safe);
  const bool recorded = std::any_of(rec.modules.begin(), rec.modules.end(), [](const auto &m) {
    return m.path.find("libunwind") != std::string::npos;
  });
  CHECK(recorded);
}

TEST_CASE("C++ new and delete are recorded through malloc and free") {
  const RunResult r = run_under_agent({program("mem_cxx")});
  CHECK(r.exit_code == 0);
  const Recorded rec = read_only_memprof(r);
  CHECK(count_at(rec.allocs_by_size, 1234) == 30);
  CHECK(count_at(rec.frees_by_size, 1234) == 30);
  CHECK(count_at(rec.allocs_by_size, 48) == 40);
  CHECK(count_at(rec.leaks_by_size, 48) == 10);
}

TEST_CASE("a forked child writes its own file and the parent's stays intact") {
  const RunResult r = run_under_agent({program("mem_lifecycle"), "fork"});
  CHECK(r.exit_code == 0);
  REQUIRE(r.memprof_files.size() == 2);
  const ForkedRun run = read_forked(r);
  const Recorded &parent = run.parent, &child = run.child;
  CHECK(child.ppid == parent.pid);
  CHECK_FALSE(parent.truncated);
  CHECK_FALSE(child.truncated);
  CHECK(count_at(parent.allocs_by_size, 1001) == 10);
  CHECK(count_at(parent.allocs_by_size, 2002) == 0);
  CHECK(count_at(child.allocs_by_size, 2002) == 20);
  CHECK(count_at(child.allocs_by_size, 1001) == 0);  // inherited, not the child's
  CHECK_FALSE(child.modules.empty());
}

TEST_CASE("a registered guest's frames and symbols reach both sides of a fork") {
  const RunResult r = run_under_agent({program("mem_guest")});
  CHECK(r.exit_code == 0);
  REQUIRE(r.memprof_files.size() == 2);
  const ForkedRun run = read_forked(r);
  const Recorded &parent = run.parent, &child = run.child;
  CHECK(count_at(parent.allocs_by_size, 4321) == 4);
  CHECK(count_at(child.allocs_by_size, 4321) == 6);
  for (const Recorded *rec : {&parent, &child}) {
    // The child's fresh stream names the symbols again.
    CHECK(rec->symbols.count(0x1000) == 1);
    CHECK(rec->symbols.count(0x2000) == 1);
    for (const prof::GuestLoc &loc : rec->locs_by_size.at(4321)) {
      CHECK(loc.source == prof::kAsourceLfunc);
      CHECK(loc.addr == 0x1000);
      CHECK(loc.line == 7);
    }
    for (uint64_t id : rec->guest_stacks_by_size.at(4321)) {
      REQUIRE(rec->guest_nodes.count(id));
      const prof::ext::StackGuest &top = rec->guest_nodes.at(id);
      CHECK(top.frame_type == 1);
      CHECK(top.frame_addr == 0x1000);
      CHECK(top.line == 7);
      REQUIRE(rec->guest_nodes.count(top.parent));
      const prof::ext::StackGuest &caller = rec->guest_nodes.at(top.parent);
      CHECK(caller.frame_type == 2);
      CHECK(caller.frame_addr == 0x2000);
      CHECK(caller.parent == 0);
    }
  }
}

TEST_CASE("exec keeps the pid and the earlier image's file") {
  for (const char *call : {"exec", "fexecve", "execveat"}) {
    INFO(call);
    const RunResult r = run_under_agent({program("mem_lifecycle"), call});
    CHECK(r.exit_code == 0);
    REQUIRE(r.memprof_files.size() == 2);  // prof.<pid>.memprof and prof.<pid>.memprof.1
    const Recorded before = read_memprof(r.memprof_files[0]),
                   after = read_memprof(r.memprof_files[1]);
    CHECK(before.pid == after.pid);
    CHECK_FALSE(before.truncated);
    CHECK_FALSE(before.unclean_end);
    CHECK(count_at(before.allocs_by_size, 3003) == 3);
    CHECK(count_at(after.allocs_by_size, 4004) == 4);
    CHECK(count_at(after.allocs_by_size, 3003) == 0);
  }
}

TEST_CASE("quick_exit ends the stream after the program's own quick-exit handlers") {
  const RunResult r = run_under_agent({program("mem_lifecycle"), "quick_exit"});
  CHECK(r.exit_code == 6);
  const Recorded rec = read_only_memprof(r);
  CHECK_FALSE(rec.truncated);
  CHECK_FALSE(rec.unclean_end);
  CHECK(count_at(rec.allocs_by_size, 8008) == 8);
  CHECK(count_at(rec.allocs_by_size, 9009) == 2);
}

// What mem_children's descendants print, in order, once each has run.
const char *const kChildrenOutput = "fork\nvfork\nposix_spawn\nsystem\npopen\n";

TEST_CASE("PROF_FOLLOW=0 profiles the process through its execs and none of its children") {
  // An interpreter script: env's image, then mem_children's, then its exec
  // of itself, all one pid; their children are made by fork, vfork,
  // posix_spawn, system() and popen().
  const TempDir dir("follow");
  const std::string script = dir / "script";
  std::ofstream(script) << "#!/usr/bin/env -S " << program("mem_children") << " exec-chain\n";
  REQUIRE(chmod(script.c_str(), 0755) == 0);

  const RunResult alone = run_under_agent({script}, {"PROF_FOLLOW=0"});
  INFO(alone.err);
  CHECK(alone.exit_code == 0);
  CHECK(alone.out == kChildrenOutput);  // the children ran
  CHECK(alone.err.empty());
  REQUIRE(alone.memprof_files.size() == 3);  // prof.<pid>.memprof, .1 and .2
  const Recorded env = read_memprof(alone.memprof_files[0]),
                 chain = read_memprof(alone.memprof_files[1]),
                 spawner = read_memprof(alone.memprof_files[2]);
  CHECK(env.pid == chain.pid);
  CHECK(chain.pid == spawner.pid);
  for (const Recorded *rec : {&env, &chain, &spawner}) CHECK_FALSE(rec->truncated);
  CHECK(count_at(chain.allocs_by_size, 3003) == 3);
  CHECK(count_at(spawner.allocs_by_size, 4004) == 4);
  CHECK(allocs_in(alone.memprof_files, 2002) == 0);  // the fork child's
  CHECK(allocs_in(alone.memprof_files, 5005) == 0);  // the exec'd children's

  // Followed (the default), each child writes its own file: the control.
  const RunResult all = run_under_agent({script});
  CHECK(all.exit_code == 0);
  CHECK(all.out == kChildrenOutput);
  CHECK(allocs_in(all.memprof_files, 2002) == 20);
  CHECK(allocs_in(all.memprof_files, 5005) == 4 * 5);
}

TEST_CASE("a relative PROF_OUTPUT is resolved where profiling started, for every descendant") {
  // A '%' in a directory's name is no template's %p.
  const TempDir launch_dir("launch%p"), elsewhere_dir("elsewhere");
  const std::string &launch = launch_dir.path, &elsewhere = elsewhere_dir.path;
  char cwd[4096];
  REQUIRE(getcwd(cwd, sizeof cwd) != nullptr);
  REQUIRE(chdir(launch.c_str()) == 0);
  // mem_children moves to `elsewhere`, then execs itself and starts children.
  const RunResult r =
      run_under_agent({program("mem_children"), "chdir", elsewhere}, {"PROF_OUTPUT=prof.%p"});
  REQUIRE(chdir(cwd) == 0);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == kChildrenOutput);
  CHECK(memprof_files_in(elsewhere).empty());
  const auto files = memprof_files_in(launch);
  CHECK(allocs_in(files, 3003) == 3);  // before the chdir
  CHECK(allocs_in(files, 4004) == 4);  // the exec'd image, after it
  CHECK(allocs_in(files, 2002) == 20);
  CHECK(allocs_in(files, 5005) == 4 * 5);
}

TEST_CASE("exit() while another thread allocates flushes and ends the stream") {
  const RunResult r = run_under_agent({program("mem_lifecycle"), "exit-threads"});
  CHECK(r.exit_code == 0);
  const Recorded rec = read_only_memprof(r);
  CHECK_FALSE(rec.truncated);
  CHECK(count_at(rec.allocs_by_size, 6006) == 6);
  CHECK(rec.unknown_frees == 0);
  REQUIRE(rec.stats.size() == 1);
}

TEST_CASE("a thread's last allocations, after the agent's destructor, are recorded") {
  const RunResult r = run_under_agent({program("mem_lifecycle"), "thread-exit"});
  CHECK(r.exit_code == 0);
  const Recorded rec = read_only_memprof(r);
  CHECK_FALSE(rec.truncated);
  CHECK(count_at(rec.allocs_by_size, 7007) == 1 + 1 + 3);
}

TEST_CASE("_exit ends the stream, abort leaves every event with its end marked unclean, statuses are kept") {
  const RunResult ex = run_under_agent({program("mem_lifecycle"), "_exit"});
  CHECK(ex.exit_code == 5);
  const Recorded a = read_only_memprof(ex);
  CHECK_FALSE(a.truncated);
  CHECK(count_at(a.allocs_by_size, 8008) == 8);
  const RunResult ab = run_under_agent({program("mem_lifecycle"), "abort"});
  CHECK(ab.signal == SIGABRT);
  const Recorded b = read_only_memprof(ab);
  CHECK_FALSE(b.truncated);  // the stream's ring file holds the rest
  CHECK(b.unclean_end);
  CHECK(count_at(b.allocs_by_size, 8008) == 8);
  CHECK(b.pid != 0);
}

TEST_CASE("a dlopen'd library's allocations stay attributed after dlclose") {
  const RunResult r = run_under_agent({program("mem_dlopen"), program("libmem_plugin.so")});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("dropping RTLD_DEEPBIND") != std::string::npos);
  const Recorded rec = read_only_memprof(r);
  CHECK(count_at(rec.allocs_by_size, 9009) == 3);
  const prof::ext::ModuleLoad *plugin = nullptr;
  for (const auto &m : rec.modules)
    if (m.path.find("libmem_plugin.so") != std::string::npos) plugin = &m;
  REQUIRE(plugin != nullptr);
  CHECK_FALSE(plugin->build_id.empty());
  bool unloaded = false;
  for (const auto &u : rec.unloads) unloaded |= u.base == plugin->base;
  CHECK(unloaded);
  for (uint64_t id : rec.stacks_by_size.at(9009)) {
    const auto frames = rec.frames(id);
    REQUIRE_FALSE(frames.empty());
    CHECK(frames[0] >= plugin->base);
    CHECK(frames[0] < plugin->base + plugin->size);
  }
}

TEST_CASE("bad settings and unwritable outputs switch the agent off, unharmed") {
  const RunResult bare = run_bare({program("mem_lifecycle")});
  REQUIRE(bare.out == "hello\n");
  REQUIRE(bare.exit_code == 9);
  const struct {
    std::vector<std::string> env;
    const char *message;
  } cases[] = {
      {{"PROF_DEPTH=lots"}, "libprof: invalid PROF_DEPTH='lots'"},
      {{"PROF_SAMPLE_BYTES=-1"}, "libprof: invalid PROF_SAMPLE_BYTES='-1'"},
      {{"PROF_UNWIND=guess"}, "libprof: invalid PROF_UNWIND='guess'"},
      {{"PROF_OUTPUT=/dev/full"}, "libprof: cannot write /dev/full: No space left on device"},
      {{"PROF_OUTPUT=/nonexistent/dir/prof"}, "libprof: cannot create /nonexistent/dir/prof."},
      // Both streams would fail there: one line for both.
      {{"PROF_OUTPUT=/nonexistent/dir/prof", "PROF_CPU=callgraph"},
       "libprof: cannot create /nonexistent/dir/prof.sysprof: No such file or directory; profiling "
       "disabled\n"},
  };
  for (const auto &c : cases) {
    const RunResult r = run_under_agent({program("mem_lifecycle")}, c.env);
    INFO(c.env[0]);
    CHECK(r.out == bare.out);
    CHECK(r.exit_code == bare.exit_code);
    CHECK(r.err.rfind(c.message, 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.memprof_files.empty());
    CHECK(r.sysprof_files.empty());
  }
}

TEST_CASE("an agent that switched itself off gives its address space back") {
  // grep allocates (the agent's first event fails to make the file), then
  // reads its own VmSize: the agent's tables, about 100 MiB of address space
  // that counts against `ulimit -v`, were never mapped or are unmapped.
  auto vm_kib = [](const RunResult &r) {
    const size_t at = r.out.find("VmSize:");
    return at == std::string::npos ? -1L : std::strtol(r.out.c_str() + at + 7, nullptr, 10);
  };
  const RunResult bare = run_bare({"grep", "VmSize", "/proc/self/status"});
  const RunResult off = run_under_agent({"grep", "VmSize", "/proc/self/status"},
                                        {"PROF_OUTPUT=/nonexistent/dir/prof", "PROF_SAMPLE_BYTES=4k"});
  REQUIRE(vm_kib(bare) > 0);
  REQUIRE(off.err.rfind("libprof: cannot create", 0) == 0);
  INFO(bare.out << off.out);
  CHECK(vm_kib(off) - vm_kib(bare) < 16 * 1024);  // the agent's own code and data
}

TEST_CASE("an empty setting is no setting") {
  // As a shell's `PROF_CPU= ./app` leaves it: the defaults, no line.
  const RunResult r = run_under_agent(
      {program("mem_lifecycle"), "fork"},
      {"PROF_CPU=", "PROF_DEPTH=", "PROF_SAMPLE_BYTES=", "PROF_INTERVAL=", "PROF_MEMORY="});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.memprof_files.size() == 2);
  CHECK(r.sysprof_files.empty());
}

TEST_CASE("the program's errno is as it set it across the agent's first event, opened or failed") {
  // Opening a stream probes its path (ENOENT) and, failing, says so on
  // stderr; none of it may reach the errno the program reads next.
  const RunResult opened = run_under_agent({program("mem_errno")});
  CHECK(opened.exit_code == 0);
  CHECK(opened.err.empty());
  CHECK(opened.memprof_files.size() == 2);  // the process's and its child's
  const RunResult failed = run_under_agent({program("mem_errno")}, {"PROF_OUTPUT=/nonexistent/dir/prof"});
  CHECK(failed.exit_code == 0);
  CHECK(failed.err.rfind("libprof: cannot create /nonexistent/dir/prof.", 0) == 0);
}

TEST_CASE("the default stream is compressed and every event in it compact, PROF_COMPRESS=0 has none") {
  const RunResult compact = run_under_agent({program("mem_sites")});
  const Recorded c = read_only_memprof(compact);
  REQUIRE(c.events > 300);
  CHECK(stat_counter(c, "compact_events") == int64_t(c.events));
  const RunResult plain = run_under_agent({program("mem_sites")}, {"PROF_COMPRESS=0"});
  const Recorded p = read_only_memprof(plain);
  CHECK(p.events == c.events);
  CHECK(stat_counter(p, "compact_events") == -1);  // no such counter
}

TEST_CASE("sampled mode records a consistent subset and its mean") {
  const RunResult r = run_under_agent({program("mem_sites")}, {"PROF_SAMPLE_BYTES=4k"});
  CHECK(r.exit_code == 7);
  const Recorded rec = read_only_memprof(r);
  CHECK(rec.unknown_frees == 0);  // exactly the sampled blocks' frees are recorded
  // 4242 B > the 4 KiB mean: sampled with probability 1 - exp(-4242/4096) ~ 0.65.
  CHECK(count_at(rec.allocs_by_size, 4242) > 30);
  CHECK(count_at(rec.allocs_by_size, 4242) < 100);
}

TEST_CASE("each realloc is recorded once, whole or sampled, and a failed one keeps its block") {
  // See test/e2e/mem_realloc.c: the chains' 11 sizes, 24 B << k.
  constexpr uint64_t kChains = 1000, kSizes = 11, kFailing = 100, kFailingSize = 64 * 1024;
  SECTION("every event") {
    const RunResult r = run_under_agent({program("mem_realloc")});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "failed reallocs 100\n");
    const Recorded rec = read_only_memprof(r);
    for (uint64_t k = 0; k < kSizes; k++) {
      INFO("size " << (24 << k));
      CHECK(count_at(rec.allocs_by_size, 24 << k) == kChains);
      CHECK(count_at(rec.frees_by_size, 24 << k) == kChains);
    }
    CHECK(count_at(rec.allocs_by_size, kFailingSize) == kFailing);
    CHECK(count_at(rec.frees_by_size, kFailingSize) == kFailing);
    CHECK(rec.leaks_by_size.empty());
    CHECK(rec.unknown_frees == 0);
  }
  SECTION("sampled") {
    const RunResult r = run_under_agent({program("mem_realloc")}, {"PROF_SAMPLE_BYTES=4k"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "failed reallocs 100\n");
    const Recorded rec = read_only_memprof(r);
    // Exactly the sampled blocks' frees, also of blocks whose realloc failed:
    // nothing unknown, nothing left live.
    CHECK(rec.unknown_frees == 0);
    CHECK(rec.leaks_by_size.empty());
    // 64 KiB against a 4 KiB mean: sampled with probability 1 - exp(-16).
    CHECK(count_at(rec.allocs_by_size, kFailingSize) == kFailing);
    CHECK(count_at(rec.frees_by_size, kFailingSize) == kFailing);
    // 24 B: with probability 1 - exp(-24/4096), about 6 of the 1000.
    CHECK(count_at(rec.allocs_by_size, 24) < kChains / 10);
    CHECK(rec.allocs_by_size.rbegin()->first == kFailingSize);  // no failed realloc's size
  }
}

TEST_CASE("a guest VM's own allocator calls, every one or sampled, and in the heap count") {
  // See test/e2e/mem_guest_alloc.c.
  SECTION("every call") {
    const RunResult r = run_under_agent({program("mem_guest_alloc")}, {"PROF_MMAP=0"});
    REQUIRE(r.exit_code == 0);
    const Recorded rec = read_only_memprof(r);
    CHECK(count_at(rec.allocs_by_size, 48) == 1000);
    CHECK(count_at(rec.frees_by_size, 48) == 401);  // the collector's, and the growth's
    CHECK(count_at(rec.leaks_by_size, 48) == 599);
    CHECK(count_at(rec.allocs_by_size, 65536) == 100);
    CHECK(count_at(rec.frees_by_size, 65536) == 100);  // a failed growth ends nothing
    CHECK(count_at(rec.allocs_by_size, 1 << 20) == 0);
    CHECK(count_at(rec.leaks_by_size, 4096) == 1);
    CHECK(rec.unknown_frees == 0);
    for (const prof::GuestLoc &loc : rec.locs_by_size.at(48)) {
      CHECK(loc.source == prof::kAsourceLfunc);
      CHECK(loc.addr == 0x1000);
      CHECK(loc.line == 3);
    }
    // The heap's peak is the VM's: the 600 small blocks and a large one,
    // with what the C library holds (a few KiB).
    uint64_t peak = 0;
    for (const prof::ext::HeapTotal &h : rec.heap_totals) peak = std::max(peak, h.live_bytes);
    CHECK(peak >= 600 * 48 + 65536);
    CHECK(peak <= 600 * 48 + 65536 + 16384);
  }
  SECTION("sampled") {
    const RunResult r =
        run_under_agent({program("mem_guest_alloc")}, {"PROF_MMAP=0", "PROF_SAMPLE_BYTES=4k"});
    REQUIRE(r.exit_code == 0);
    const Recorded rec = read_only_memprof(r);
    // Exactly the sampled blocks' ends, also of those whose growth failed.
    CHECK(rec.unknown_frees == 0);
    // 64 KiB against a 4 KiB mean: sampled with probability 1 - exp(-16).
    CHECK(count_at(rec.allocs_by_size, 65536) == 100);
    CHECK(count_at(rec.frees_by_size, 65536) == 100);
    CHECK(count_at(rec.leaks_by_size, 65536) == 0);
    // 48 B: with probability 1 - exp(-48/4096), about 12 of the 1000.
    CHECK(count_at(rec.allocs_by_size, 48) < 100);
  }
}

TEST_CASE("third-party programs run unharmed under the agent") {
  const std::vector<std::vector<std::string>> programs = {
      {"sh", "-c", "ls / | sort | wc -l; exit 3"},
      {"lua5.4", "-e", "local t = {} for i = 1, 20000 do t[i] = {i} end print(#t)"},
      {"sh", "-c", "for i in 1 2 3; do (echo child $i) & done; wait"},
  };
  for (const auto &argv : programs) {
    INFO(argv.back());
    const RunResult bare = run_bare(argv), agent = run_under_agent(argv);
    CHECK(agent.exit_code == bare.exit_code);
    std::string a = agent.out, b = bare.out;
    std::sort(a.begin(), a.end());  // background children print in any order
    std::sort(b.begin(), b.end());
    CHECK(a == b);
    CHECK(agent.err == bare.err);
    CHECK_FALSE(agent.memprof_files.empty());
    for (const auto &f : agent.memprof_files) CHECK_FALSE(read_memprof(f).truncated);
  }
}

namespace {

// Runs `path` as user nobody in `dir`, with PROF_OUTPUT there; returns its
// stdout and sets *exit_code.
std::string run_as_nobody(const std::string &path, const std::string &dir, int *exit_code) {
  const std::string out_path = dir + "/stdout";
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(out >= 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out, 1);
    if (chdir(dir.c_str()) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(126);
    const std::string output = "PROF_OUTPUT=" + dir + "/prof.%p";
    char *const argv[] = {const_cast<char *>(path.c_str()), nullptr};
    char *const envp[] = {const_cast<char *>(output.c_str()), nullptr};
    execve(path.c_str(), argv, envp);
    _exit(127);
  }
  close(out);
  int status = 0;
  waitpid(pid, &status, 0);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("under secure execution (a setuid program) the agent stays inert") {
  // (Making a setuid-root copy needs root too.)
  const TempDir dir = agent_dir_for_other_users("secure");
  copy_file(program("mem_secure"), dir / "plain", 0755);
  copy_file(program("mem_secure"), dir / "setuid", 04755);

  // The same program without the setuid bit is profiled: the control.
  int code = -1;
  CHECK(run_as_nobody(dir / "plain", dir.path, &code) == "secure ok\n");
  CHECK(code == 0);
  REQUIRE(memprof_files_in(dir.path).size() == 1);

  // nobody running a setuid-root program: AT_SECURE is set.
  CHECK(run_as_nobody(dir / "setuid", dir.path, &code) == "secure ok\n");
  CHECK(code == 0);
  CHECK(memprof_files_in(dir.path).size() == 1);
}

TEST_CASE("an executable with its own malloc is told in one line that its calls are not seen") {
  const RunResult r = run_under_agent({program("mem_own_malloc")});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "ok\n");
  CHECK(r.err == "libprof: the executable " + program("mem_own_malloc") +
                     " defines its own malloc, free, calloc and realloc: the agent cannot see "
                     "those calls, and the blocks they make are not recorded\n");
}

TEST_CASE("calls of glibc's own allocator names are recorded as such, not as leaks or unknown frees") {
  const RunResult r = run_under_agent({program("mem_libc_names")});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "ok\n");
  CHECK(r.err.empty());
  const Recorded rec = read_only_memprof(r);
  for (uint64_t size : {4004, 4005, 4007, 4008}) {
    INFO(size);
    CHECK(count_at(rec.allocs_by_size, size) == (size == 4007 ? 50 : size == 4008 ? 20 : 100));
    CHECK(count_at(rec.frees_by_size, size) == count_at(rec.allocs_by_size, size));
    CHECK(count_at(rec.leaks_by_size, size) == 0);
  }
  CHECK(count_at(rec.allocs_by_size, 4006) == 50);
  CHECK(count_at(rec.frees_by_size, 4006) == 50);  // by the reallocs
  CHECK(rec.unknown_frees == 0);
  CHECK(stat_counter(rec, "libc_direct_calls") == 340);
}

TEST_CASE("a profile whose directory is removed under the running program says where it went") {
  const TempDir top("removed");
  const std::string dir = top / "out";
  REQUIRE(mkdir(dir.c_str(), 0755) == 0);
  const RunResult r = run_under_agent({program("mem_dir_removed"), dir},
                                      {"PROF_OUTPUT=" + dir + "/prof.%p"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "done\n");
  INFO(r.err);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("libprof: " + dir + "/prof.", 0) == 0);
  CHECK(r.err.find(".memprof was removed while the program runs (its directory too?); the profile "
                   "goes on in the deleted file, which can be copied from /proc/") != std::string::npos);
  CHECK(r.err.find(" until the program ends\n") != std::string::npos);
}
