// prof-run --pid end to end: a running program is attached (gdb loads the
// agent), recorded for a few seconds, detached, attached again, then
// stopped as it would be without us; its output and exit status are a bare
// run's, its stacks name the functions it runs by construction, and no
// clock, handler or thread of the agent's is left after a detach. Each
// refusal is one line, the target unharmed.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "folded_stacks.h"
#include "free_port.h"
#include "openresty_nginx.h"
#include "temp_files.h"

namespace {

std::string program(const char *name) { return std::string(PROF_E2E_BIN_DIR) + "/" + name; }
std::string e2e_file(const char *name) { return std::string(PROF_E2E_DIR) + "/" + name; }

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

[[noreturn]] void exec_child(const std::vector<std::string> &argv, const std::vector<std::string> &env) {
  for (const std::string &e : env) putenv(const_cast<char *>(e.c_str()));
  std::vector<char *> args;
  for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  _exit(127);
}

// A program running under test, its stdin and stdout on pipes; killed if
// the test stops before finish() (a failed REQUIRE).
struct Target {
  pid_t pid = -1;
  int in = -1, out = -1;
  Target() = default;
  Target(Target &&o) noexcept : pid(o.pid), in(o.in), out(o.out) { o.pid = -1; }
  Target(const Target &) = delete;
  ~Target() {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
};

Target start(const std::vector<std::string> &argv, const std::vector<std::string> &env = {}) {
  int in[2], out[2];
  REQUIRE(pipe(in) == 0);
  REQUIRE(pipe(out) == 0);
  Target t;
  t.pid = fork();
  REQUIRE(t.pid >= 0);
  if (t.pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[1]);
    close(out[0]);
    exec_child(argv, env);
  }
  close(in[0]);
  close(out[1]);
  t.in = in[1], t.out = out[0];
  return t;
}

// Reads t's stdout up to a newline (or `seconds`).
std::string read_line(const Target &t, double seconds = 30) {
  std::string line;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{t.out, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char c;
    if (read(t.out, &c, 1) != 1) break;
    if (c == '\n') return line;
    line += c;
  }
  return line;
}

struct Ended {
  std::string out;
  int status = -1;
};

// Stops t (`stop`, then its stdin closed) and collects the rest of its
// output and its status; killed after 60 s.
Ended finish(Target &t, const std::function<void()> &stop) {
  stop();
  close(t.in);
  Ended e;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    pollfd p{t.out, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      char buf[4096];
      const ssize_t n = read(t.out, buf, sizeof buf);
      if (n <= 0) break;
      e.out.append(buf, size_t(n));
    }
    if (std::chrono::steady_clock::now() > until) {
      kill(t.pid, SIGKILL);
      break;
    }
  }
  close(t.out);
  waitpid(t.pid, &e.status, 0);
  t.pid = -1;
  return e;
}

void say_q(const Target &t) { REQUIRE(write(t.in, "q\n", 2) == 2); }

// Says `line` to t and requires `answer` back.
void ask(const Target &t, const std::string &line, const std::string &answer) {
  const std::string said = line + "\n";
  REQUIRE(write(t.in, said.data(), said.size()) == ssize_t(said.size()));
  REQUIRE(read_line(t) == answer);
}

// argv run bare, as a test's target is: it says "ready", answers `rounds`
// lines "round" with "done N", then ends at "q". Its remaining output and status.
Ended bare_run(const std::vector<std::string> &argv, int rounds) {
  Target bare = start(argv);
  REQUIRE(read_line(bare) == "ready");
  for (int round = 1; round <= rounds; round++) {
    ask(bare, "round", "done " + std::to_string(round));
  }
  const Ended end = finish(bare, [&] { say_q(bare); });
  REQUIRE(WIFEXITED(end.status));
  return end;
}

// prof-run, as a child: its exit code and what it printed.
struct Run {
  pid_t pid = -1;
  TempDir logs{"attach-log"};
  int rc = -1;
  std::string out, err;
};

// Runs argv as a child of r, its stdout and stderr into r's files.
void launch_command(Run &r, const std::vector<std::string> &argv, const std::vector<std::string> &env) {
  r.pid = fork();
  REQUIRE(r.pid >= 0);
  if (r.pid == 0) {
    const int out = open((r.logs / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    const int err = open((r.logs / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    dup2(out, 1);
    dup2(err, 2);
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    exec_child(argv, env);
  }
}

// prof-run with `args`, after `prefix` (setpriv ...).
// (script and build: prof-run and the build tree it uses.)
void launch(Run &r, const std::vector<std::string> &args, const std::vector<std::string> &prefix = {},
            const std::string &script = PROF_RUN_SCRIPT, const std::string &build = PROF_BUILD_DIR) {
  std::vector<std::string> argv = prefix;
  argv.push_back("bash");
  argv.push_back(script);
  argv.insert(argv.end(), args.begin(), args.end());
  launch_command(r, argv, {"PROF_BUILD_DIR=" + build});
}

void wait_run(Run &r) {
  int status = 0;
  waitpid(r.pid, &status, 0);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(r.logs / "out");
  r.err = slurp(r.logs / "err");
}

Run prof_run(const std::vector<std::string> &args, const std::vector<std::string> &prefix = {},
             const std::string &script = PROF_RUN_SCRIPT, const std::string &build = PROF_BUILD_DIR) {
  Run r;
  launch(r, args, prefix, script, build);
  wait_run(r);
  return r;
}

std::vector<std::string> files_in(const std::string &dir, const std::string &suffix) {
  std::vector<std::string> found;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > suffix.size() && name.find(suffix) != std::string::npos)
        found.push_back(dir + "/" + name);
    }
    closedir(d);
  }
  return found;
}

bool wait_for_file(const std::string &dir, const std::string &suffix, double seconds = 60) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (!files_in(dir, suffix).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// `prof-analyze folded` of the one CPU stream in dir: stack -> samples.
std::map<FoldedStack, double> cpu_stacks(const std::string &dir) {
  const std::vector<std::string> files = files_in(dir, ".sysprof");
  REQUIRE(files.size() == 1);
  return folded(files[0]);
}

// The samples with a frame named `function` ("function", "function
// (file:line)", or a Lua chunk's "function:line").
double samples_in(const std::map<FoldedStack, double> &stacks, const std::string &function) {
  double with = 0;
  for (const auto &kv : stacks)
    for (const std::string &f : kv.first)
      if (f == function || f.rfind(function + " (", 0) == 0 || f.rfind(function + ":", 0) == 0) {
        with += kv.second;
        break;
      }
  return with;
}

// What the agent could have left in process pid.
int perf_descriptors(pid_t pid) {
  int n = 0;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  for (const std::string &fd : files_in(dir, "")) {
    char link[256] = "";
    const ssize_t len = readlink(fd.c_str(), link, sizeof link - 1);
    if (len > 0 && std::string(link, size_t(len)) == "anon_inode:[perf_event]") n++;
  }
  return n;
}
std::string status_field(pid_t pid, const std::string &field) {
  std::istringstream in(slurp("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 2);
  return "";
}
bool catches_sigprof(pid_t pid) {
  return (std::stoull(status_field(pid, "SigCgt"), nullptr, 16) >> (SIGPROF - 1)) & 1;
}
int threads(pid_t pid) { return std::stoi(status_field(pid, "Threads")); }

std::vector<std::string> attach_args(pid_t pid, const std::string &dir, const char *duration) {
  return {"-q", "--pid", std::to_string(pid), "--duration", duration, "-o", dir};
}

// Checks that prof-run attached and detached, and left nothing running.
void check_detached(const Run &r, pid_t pid, bool sigprof_caught_before, int threads_before) {
  INFO(r.err);
  CHECK(r.rc == 0);
  CHECK(r.err.find("prof-run: attached to process " + std::to_string(pid)) == 0);
  CHECK(r.err.find("prof-run: detached from process " + std::to_string(pid)) != std::string::npos);
  CHECK(perf_descriptors(pid) == 0);
  CHECK(catches_sigprof(pid) == sigprof_caught_before);
  CHECK(threads(pid) == threads_before);
}

// Attaches to t twice (2-3 s each) and checks both profiles name every one
// of `functions`; `while_attached` runs during the first.
void attach_twice(pid_t pid, const std::vector<std::string> &functions,
                  const std::function<void()> &while_attached = [] {}) {
  const bool caught = catches_sigprof(pid);
  const TempDir first("attach"), second("attach");
  Run r;
  launch(r, attach_args(pid, first.path, "3s"));
  REQUIRE(wait_for_file(first.path, ".sysprof"));
  while_attached();
  wait_run(r);
  const int threads_after = threads(pid);
  check_detached(r, pid, caught, threads_after);
  const std::map<FoldedStack, double> stacks = cpu_stacks(first.path);
  for (const std::string &f : functions) {
    INFO("first attach: " << f);
    CHECK(samples_in(stacks, f) > 0);
  }
  const Run again = prof_run(attach_args(pid, second.path, "2s"));
  check_detached(again, pid, caught, threads_after);
  const std::map<FoldedStack, double> again_stacks = cpu_stacks(second.path);
  for (const std::string &f : functions) {
    INFO("second attach: " << f);
    CHECK(samples_in(again_stacks, f) > 0);
  }
}

bool have(const char *command) {
  return system((std::string("command -v ") + command + " >/dev/null 2>&1").c_str()) == 0;
}

// `command` running script (which prints "ready", then works until the
// file its first argument names exists), `attach`ed (its pid); its output
// and exit status those of a bare run.
void script_attached(std::vector<std::string> command, const std::string &script,
                     const std::function<void(pid_t)> &attach) {
  const TempDir dir("attach-script");
  chmod(dir.path.c_str(), 0755);  // (the file may be another user's to find)
  std::vector<std::string> argv = std::move(command);
  argv.push_back(script);
  argv.push_back(dir / "stop");
  Target bare = start(argv);
  REQUIRE(read_line(bare) == "ready");
  const Ended bare_end = finish(bare, [&] { std::ofstream(dir / "stop"); });
  REQUIRE(WIFEXITED(bare_end.status));
  remove((dir / "stop").c_str());

  Target t = start(argv);
  REQUIRE(read_line(t) == "ready");
  attach(t.pid);
  const Ended end = finish(t, [&] { std::ofstream(dir / "stop"); });
  CHECK(end.out == bare_end.out);
  CHECK(end.status == bare_end.status);
}

// The same attached twice, each profile naming every one of `functions`.
void script_attached_twice(const char *interpreter, const char *script,
                           const std::vector<std::string> &functions) {
  script_attached({interpreter}, e2e_file(script), [&](pid_t pid) { attach_twice(pid, functions); });
}

}  // namespace

TEST_CASE("a C program's threads, those started after attach too, sampled by prof-run --pid, twice") {
  Target bare = start({program("attach_loop")});
  REQUIRE(read_line(bare) == "ready");
  kill(bare.pid, SIGUSR1);
  const Ended bare_end = finish(bare, [&] { say_q(bare); });
  REQUIRE(WIFEXITED(bare_end.status));

  Target t = start({program("attach_loop")});
  REQUIRE(read_line(t) == "ready");
  // The third thread starts while the first attach records.
  attach_twice(t.pid, {"attach_main_work", "attach_early_work", "attach_late_work"},
               [&] { kill(t.pid, SIGUSR1); });
  const Ended end = finish(t, [&] { say_q(t); });
  CHECK(end.out == bare_end.out);
  CHECK(end.status == bare_end.status);
}

namespace {

// Waits until prof-run r says it attached (the GOT rewritten: the calls
// from now on are recorded).
bool wait_attached(const Run &r, double seconds = 60) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (slurp(r.logs / "err").find("prof-run: attached to process") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// The one memory stream in dir.
std::string memory_stream(const std::string &dir) {
  const std::vector<std::string> files = files_in(dir, ".memprof");
  REQUIRE(files.size() == 1);
  return files[0];
}

// `prof-analyze summary ARGS` (its stdout).
std::string summary_of(const std::string &args) {
  FILE *f = popen((std::string(PROF_ANALYZER_PATH) + " summary " + args + " 2>&1").c_str(), "r");
  REQUIRE(f);
  std::string all;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) all.append(buf, n);
  pclose(f);
  return all;
}

// The function the program's GOT entry for `name` (its PLT's) points to, as
// gdb names it: "malloc in section .text of /.../libprof.so".
std::string got_entry(pid_t pid, const std::string &name) {
  const std::string cmd = "gdb -nx -q -batch -p " + std::to_string(pid) +
                          " -iex 'set debuginfod enabled off' -iex 'set auto-load no'"
                          " -ex \"info symbol (long)'" + name + "@got.plt'\" 2>&1";
  FILE *f = popen(cmd.c_str(), "r");
  REQUIRE(f);
  std::string found;
  char line[4096];
  while (fgets(line, sizeof line, f))
    if (strstr(line, " in section ")) found = line;
  pclose(f);
  return found;
}

// The number after "name": in summary --json's text (-1 when absent).
long long json_number(const std::string &json, const std::string &name) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + name + "\": *([0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

}  // namespace

TEST_CASE("a C program's allocation calls while attached: exact counts per function, blocks from before apart, twice") {
  const Ended bare_end = bare_run({program("attach_alloc")}, 3);

  Target t = start({program("attach_alloc")});
  REQUIRE(read_line(t) == "ready");
  const int threads_before = threads(t.pid);
  // (free, not called yet, holds its PLT stub: bound lazily.)
  const std::string malloc_before = got_entry(t.pid, "malloc"), free_before = got_entry(t.pid, "free");
  CHECK(malloc_before.find("/libc.so.6") != std::string::npos);
  for (int round = 1; round <= 2; round++) {
    INFO("attach " << round);
    const TempDir dir("attach-mem");
    Run r;
    launch(r, attach_args(t.pid, dir.path, "4s"));
    REQUIRE(wait_attached(r));
    ask(t, "round", "done " + std::to_string(round));
    // The program's calls lead to the agent while attached, and where they
    // led before after.
    CHECK(got_entry(t.pid, "malloc").find("/libprof.so") != std::string::npos);
    CHECK(got_entry(t.pid, "free").find("/libprof.so") != std::string::npos);
    wait_run(r);
    check_detached(r, t.pid, false, threads_before);
    CHECK(got_entry(t.pid, "malloc") == malloc_before);
    CHECK(got_entry(t.pid, "free") == free_before);
    const std::string stream = memory_stream(dir.path);
    // Allocations by the function that made them (realloc's new blocks
    // included), exactly as attach_alloc.c makes them in a round.
    const std::map<FoldedStack, double> made = folded("--metric alloc-count " + stream);
    CHECK(samples_in(made, "round_malloc") == 1000);
    CHECK(samples_in(made, "round_calloc") == 300);
    CHECK(samples_in(made, "round_aligned") == 200);
    CHECK(samples_in(made, "round_realloc") == 1000);
    CHECK(samples_in(made, "round_kept") == 50);
    CHECK(samples_in(made, "round_old_realloc") == 100);
    CHECK(samples_in(made, "attach_old_block") == 0);  // (before the attach)
    const std::string json = summary_of("--json " + stream);
    INFO(json);
    CHECK(json_number(json, "alloc_calls") == 1000 + 300 + 200 + 50);
    CHECK(json_number(json, "realloc_calls") == 1000 + 100);
    CHECK(json_number(json, "free_calls") == 100 + 1000 + 300 + 200);
    // The old blocks freed or grown: from before recording, not unknown.
    CHECK(json_number(json, "frees_before_recording") == 100 + 100);
    CHECK(json_number(json, "unknown_frees") == 0);
    // Live at the detach: the kept blocks and the grown old ones.
    CHECK(json_number(json, "leaked_blocks") == 50 + 100);
    CHECK(json_number(json, "attach_number") == round);
    const std::string text = summary_of(stream);
    CHECK(text.find("recording began when the agent attached to the running process, pid " +
                    std::to_string(t.pid) + " (attach " + std::to_string(round) + ")") != std::string::npos);
    CHECK(text.find("freed before:  200 frees and reallocations of blocks allocated before recording began") !=
          std::string::npos);
    CHECK(text.find("still live:    ") != std::string::npos);
  }
  // After the detach the calls go to libc again: a round runs as bare.
  ask(t, "round", "done 3");
  const Ended end = finish(t, [&] { say_q(t); });
  CHECK(end.out == bare_end.out);
  CHECK(end.status == bare_end.status);
}

TEST_CASE("threads allocating without pause attached and detached three times: no call lost its way") {
  // (Each detach finds calls inside the hooks, and calls that read the GOT
  // entry just before it was written back.)
  const Ended bare_end = bare_run({program("attach_alloc"), "churn"}, 0);

  Target t = start({program("attach_alloc"), "churn"});
  REQUIRE(read_line(t) == "ready");
  const int threads_before = threads(t.pid);
  for (int round = 1; round <= 3; round++) {
    INFO("attach " << round);
    const TempDir dir("attach-churn");
    // (The third samples allocations, 64 KiB apart on average.)
    std::vector<std::string> args = attach_args(t.pid, dir.path, "1s");
    if (round == 3) args.insert(args.begin(), {"--sample-bytes", "64k"});
    const Run r = prof_run(args);
    check_detached(r, t.pid, false, threads_before);
    const std::string stream = memory_stream(dir.path);
    const std::map<FoldedStack, double> made = folded("--metric alloc-count " + stream);
    CHECK(samples_in(made, "churn_work") > 1000);
    CHECK(json_number(summary_of("--json " + stream), "sampling_mean_bytes") == (round == 3 ? 65536 : 0));
  }
  const Ended end = finish(t, [&] { say_q(t); });
  CHECK(end.out == bare_end.out);
  CHECK(end.status == bare_end.status);
}

TEST_CASE("a thread stopped inside the allocator, attached and detached five times: no call waits for it") {
  // (gdb stops it inside malloc or free, holding the arena's lock, most
  // times: the calls it makes there wait until the thread is out, else
  // they would wait for the lock forever, or work on a heap half-changed,
  // prof-attach-safe-point.py.)
  const Ended bare_end = bare_run({program("attach_heap")}, 0);

  Target t = start({program("attach_heap")});
  REQUIRE(read_line(t) == "ready");
  for (int round = 1; round <= 5; round++) {
    INFO("attach " << round);
    const TempDir dir("attach-heap");
    const Run r = prof_run(attach_args(t.pid, dir.path, "1s"));
    check_detached(r, t.pid, false, 2);
    const std::map<FoldedStack, double> made = folded("--metric alloc-count " + memory_stream(dir.path));
    CHECK(samples_in(made, "heap_churn") > 1000);
  }
  const Ended end = finish(t, [&] { say_q(t); });
  CHECK(end.out == bare_end.out);
  CHECK(end.status == bare_end.status);
}

TEST_CASE("python3 making bytes objects attached: its allocations with the interpreter's frames") {
  if (!have("python3")) std::exit(4);
  script_attached({"python3"}, e2e_file("attach_alloc.py"), [](pid_t pid) {
    for (int round = 1; round <= 2; round++) {
      INFO("attach " << round);
      const TempDir out("attach-mem");
      const Run r = prof_run(attach_args(pid, out.path, "2s"));
      check_detached(r, pid, false, threads(pid));
      // bytes(100000): bytes_new, _PyBytes_FromSize, then _PyObject_Calloc,
      // past the small-object allocator, calls calloc: thousands a second.
      const std::map<FoldedStack, double> made = folded("--metric alloc-count " + memory_stream(out.path));
      CHECK(samples_in(made, "_PyObject_Calloc") > 100);
      CHECK(samples_in(made, "bytes_new") > 100);
    }
  });
}

TEST_CASE("python3 attached twice: its threads' host stacks, output and exit status unchanged") {
  if (!have("python3")) std::exit(4);
  script_attached_twice("python3", "attach_work.py", {"crc32_z"});
}

TEST_CASE("lua5.4 running a script attached twice: host stacks, output and exit status unchanged") {
  if (!have("lua5.4")) std::exit(4);
  // (Debian's lua5.4 names its exported API alone: the script runs under
  // lua_pcallk, and string.rep with a separator ends in luaL_pushresult.)
  script_attached_twice("lua5.4", "attach_work.lua", {"lua_pcallk", "luaL_pushresult"});
}

namespace {

// All the samples of the one CPU stream in dir.
double all_samples(const std::map<FoldedStack, double> &stacks) {
  double n = 0;
  for (const auto &kv : stacks) n += kv.second;
  return n;
}

// The samples with a frame `is` holds for.
double samples_with(const std::map<FoldedStack, double> &stacks,
                    const std::function<bool(const std::string &)> &is) {
  double with = 0;
  for (const auto &kv : stacks)
    for (const std::string &f : kv.first)
      if (is(f)) {
        with += kv.second;
        break;
      }
  return with;
}

// The samples in attach_hot.lua's hot_spin (its lines 9 to 20): its Lua
// frame, or (LuaJIT) a JIT trace that started in it.
double samples_in_hot_spin(const std::map<FoldedStack, double> &stacks) {
  const std::regex trace(R"(TRACE \[[0-9]+\] started at @.*attach_hot\.lua:([9]|1[0-9]|20))");
  return samples_with(stacks, [&](const std::string &f) {
    return f.rfind("hot_spin (", 0) == 0 || std::regex_match(f, trace);
  });
}

// `interpreter` running attach_hot.lua as nobody, whose Lua state was made and whose
// hot_spin runs before any attach ("ready" comes from inside it), attached
// twice: each time at least 80% of the samples carry hot_spin's Lua frame
// (`traces`: at least half of them JIT traces), and prof-run says the
// states were sampled; the output (with the debug hook the script finds set
// at its end: none) and exit status are a bare run's.
void hot_lua_attached_twice(const char *interpreter, bool traces) {
  if (getuid() != 0) std::exit(4);  // (only root can switch users)
  // (nobody runs a copy of the script and loads copies of the agent and of
  // the adapters beside it, as installed: the source and build trees may
  // be their owner's alone.)
  const TempDir bin("attach-lua");
  chmod(bin.path.c_str(), 0755);
  copy_file(e2e_file("attach_hot.lua"), bin / "attach_hot.lua", 0644);
  for (const char *dir : {"lua51", "lua53", "lua54", "luajit"}) mkdir((bin / dir).c_str(), 0755);
  for (const char *file : {"libprof.so", "libprof-cpu.so", "lua51/prof_lua.so", "lua53/prof_lua.so",
                           "lua54/prof_lua.so", "luajit/prof_luajit.so"})
    copy_file(PROF_BUILD_DIR "/preload/" + std::string(file), bin / file, 0644);
  setenv("PROF_AGENT", (bin / "libprof.so").c_str(), 1);
  const std::vector<std::string> as_nobody{"setpriv", "--reuid=nobody", "--regid=nogroup",
                                           "--clear-groups", interpreter};
  script_attached(as_nobody, bin / "attach_hot.lua", [&](pid_t pid) {
    const bool caught = catches_sigprof(pid);
    for (int attach = 1; attach <= 2; attach++) {
      INFO("attach " << attach);
      const TempDir out("attach");
      const Run r = prof_run(attach_args(pid, out.path, "3s"));
      check_detached(r, pid, caught, 1);
      CHECK(r.err.find(": its states are sampled with their Lua frames, and their allocations "
                       "charged to their Lua lines\n") != std::string::npos);
      const std::map<FoldedStack, double> stacks = cpu_stacks(out.path);
      const double all = all_samples(stacks), hot = samples_in_hot_spin(stacks);
      INFO(hot << " of " << all << " samples in hot_spin");
      CHECK(all >= 100);
      CHECK(hot >= 0.8 * all);
      if (traces)
        CHECK(samples_with(stacks, [](const std::string &f) { return f.rfind("TRACE [", 0) == 0; }) >=
              0.5 * all);
    }
  });
  unsetenv("PROF_AGENT");
}

}  // namespace

TEST_CASE("lua5.4's state made before the attach: its Lua frames in the samples, twice") {
  if (!have("lua5.4")) std::exit(4);
  hot_lua_attached_twice("lua5.4", false);
}

TEST_CASE("luajit's state made before the attach, JIT on: its Lua frames in the samples, twice") {
  if (!have("luajit")) std::exit(4);
  hot_lua_attached_twice("luajit", true);
}

TEST_CASE("lua5.1 and lua5.3's states made before the attach: their Lua frames in the samples") {
  if (!have("lua5.1") || !have("lua5.3")) std::exit(4);
  hot_lua_attached_twice("lua5.1", false);
  hot_lua_attached_twice("lua5.3", false);
}

namespace {

// The allocation calls in `stacks` (folded) whose stack holds `function`
// and, if `leaf` is not empty, ends in it.
double calls_in(const std::map<FoldedStack, double> &stacks, const std::string &function,
                const std::string &leaf = "") {
  double n = 0;
  for (const auto &kv : stacks) {
    if (!leaf.empty() && (kv.first.empty() || kv.first.back() != leaf)) continue;
    for (const std::string &f : kv.first)
      if (f.rfind(function + " (", 0) == 0) {
        n += kv.second;
        break;
      }
  }
  return n;
}

// `interpreter` (with `option`) running attach_lua_alloc.lua, whose Lua
// state was made before any attach, attached twice. Each time a spin lets
// a CPU sample find the state (and put the adapter's allocator wrapper
// into it), then a round makes 1000 empty tables in make_tables: the
// memory stream holds `tables` allocation calls charged to make_tables
// (exactly, or at least so many when `at_least`: the JIT compiles the loop
// as it runs, and its own allocations are the frame's), each a [table]
// when `typed` (the release tells object types). After the detaches the
// program runs as bare: same output, same exit status.
void lua_allocations_attached_twice(const char *interpreter, const char *option, double tables,
                                    bool at_least, bool typed) {
  std::vector<std::string> argv{interpreter, e2e_file("attach_lua_alloc.lua")};
  if (*option) argv.push_back(option);
  const Ended bare_end = bare_run(argv, 3);

  Target t = start(argv);
  REQUIRE(read_line(t) == "ready");
  const bool caught = catches_sigprof(t.pid);
  for (int round = 1; round <= 2; round++) {
    INFO("attach " << round);
    const TempDir dir("attach-lua-mem");
    Run r;
    launch(r, attach_args(t.pid, dir.path, "4s"));
    REQUIRE(wait_attached(r));
    ask(t, "spin", "spun");
    ask(t, "round", "done " + std::to_string(round));
    wait_run(r);
    check_detached(r, t.pid, caught, 1);
    CHECK(r.err.find(": its states are sampled with their Lua frames, and their allocations "
                     "charged to their Lua lines\n") != std::string::npos);
    const std::string stream = memory_stream(dir.path);
    const double made = calls_in(folded("--metric alloc-count " + stream), "make_tables");
    if (at_least)
      CHECK(made >= tables);
    else
      CHECK(made == tables);
    if (typed)
      CHECK(calls_in(folded("--by-type --metric alloc-count " + stream), "make_tables", "[table]") ==
            tables);
  }
  // (Detached: a round made by the program's own allocator again.)
  ask(t, "round", "done 3");
  const Ended end = finish(t, [&] { say_q(t); });
  CHECK(end.out == bare_end.out);
  CHECK(end.status == bare_end.status);
}

}  // namespace

TEST_CASE("lua5.4's state made before the attach: its allocations charged to its Lua functions, as tables, twice") {
  if (!have("lua5.4")) std::exit(4);
  lua_allocations_attached_twice("lua5.4", "", 1000, false, true);
}

TEST_CASE("lua5.1's state made before the attach: its allocations charged to its Lua functions, twice") {
  if (!have("lua5.1")) std::exit(4);
  lua_allocations_attached_twice("lua5.1", "", 1000, false, false);
}

TEST_CASE("luajit's state made before the attach: its allocations charged to its Lua functions, JIT off and on, twice") {
  if (!have("luajit")) std::exit(4);
  lua_allocations_attached_twice("luajit", "nojit", 1000, false, false);
  lua_allocations_attached_twice("luajit", "", 1000, true, false);
}

TEST_CASE("refused in one line, the target unharmed: profiled already, attached already") {
  const TempDir preloaded_out("attach-pre");
  Target bare = start({program("attach_loop")});
  REQUIRE(read_line(bare) == "ready");
  const Ended bare_end = finish(bare, [&] { say_q(bare); });

  // Started under LD_PRELOAD: the agent came with the program.
  Target pre = start({program("attach_loop")},
                     {"LD_PRELOAD=" PROF_AGENT_PATH, "PROF_MEMORY=0", "PROF_CPU=callgraph",
                      "PROF_OUTPUT=" + preloaded_out.path + "/prof.%p"});
  REQUIRE(read_line(pre) == "ready");
  const TempDir out("attach");
  const Run refused = prof_run(attach_args(pre.pid, out.path, "1s"));
  CHECK(refused.rc == 2);
  CHECK(refused.err == "prof-run: process " + std::to_string(pre.pid) +
                           " is profiled already (the agent came with the program: LD_PRELOAD)\n");
  const Ended pre_end = finish(pre, [&] { say_q(pre); });
  CHECK(pre_end.out == bare_end.out);
  CHECK(pre_end.status == bare_end.status);

  // A second prof-run while one records.
  Target t = start({program("attach_loop")});
  REQUIRE(read_line(t) == "ready");
  const TempDir first("attach"), second("attach");
  Run r;
  launch(r, attach_args(t.pid, first.path, "4s"));
  REQUIRE(wait_for_file(first.path, ".sysprof"));
  const Run twice = prof_run(attach_args(t.pid, second.path, "1s"));
  CHECK(twice.rc == 2);
  CHECK(twice.err == "prof-run: process " + std::to_string(t.pid) +
                         " is being profiled already (attached by another prof-run)\n");
  wait_run(r);
  check_detached(r, t.pid, false, threads(t.pid));
  const Ended end = finish(t, [&] { say_q(t); });
  CHECK(end.out == bare_end.out);
  CHECK(end.status == bare_end.status);
}

TEST_CASE("refused in one line, the target unharmed: a static program, a process that ends as it is attached") {
  Target s = start({program("attach_spin_static")});
  REQUIRE(read_line(s) == "ready");
  const TempDir out("attach");
  const Run refused = prof_run(attach_args(s.pid, out.path, "1s"));
  CHECK(refused.rc == 2);
  CHECK(refused.err == "prof-run: process " + std::to_string(s.pid) + " (" + program("attach_spin_static") +
                           ") is statically linked: it has no dynamic loader to load the agent\n");
  const Ended end = finish(s, [&] { say_q(s); });
  CHECK(end.out == "done\n");
  CHECK(WIFEXITED(end.status));
  CHECK(WEXITSTATUS(end.status) == 0);

  // It ends (status 3) the moment a debugger is attached to it.
  Target q = start({program("attach_quitter")});
  REQUIRE(read_line(q) == "ready");
  const TempDir qout("attach");
  const Run gone = prof_run(attach_args(q.pid, qout.path, "1s"));
  CHECK(gone.rc == 2);
  CHECK(gone.err == "prof-run: process " + std::to_string(q.pid) + " ended while it was being attached\n");
  const Ended qend = finish(q, [] {});
  CHECK(WIFEXITED(qend.status));
  CHECK(WEXITSTATUS(qend.status) == 3);
}

TEST_CASE("refused in one line, the target unharmed: a process of another user, a setuid program") {
  if (getuid() != 0) std::exit(4);  // (only root can switch users)
  Target bare = start({program("attach_loop")});
  REQUIRE(read_line(bare) == "ready");
  const Ended bare_end = finish(bare, [&] { say_q(bare); });

  Target t = start({program("attach_loop")});
  REQUIRE(read_line(t) == "ready");
  const std::string pid = std::to_string(t.pid);
  // (nobody runs a copy of prof-run, of the settings checker and of the
  // agent it checks first: the source and build trees may be their
  // owner's alone.)
  const TempDir bin("attach-bin");
  chmod(bin.path.c_str(), 0755);
  const std::string scripts = std::string(PROF_RUN_SCRIPT).substr(0, std::string(PROF_RUN_SCRIPT).rfind('/'));
  copy_file(scripts + "/prof-run", bin / "prof-run", 0755);
  copy_file(scripts + "/prof-attach.sh", bin / "prof-attach.sh", 0644);
  mkdir((bin / "preload").c_str(), 0755);
  for (const char *file : {"prof-check-config", "libprof.so"})
    copy_file(PROF_BUILD_DIR "/preload/" + std::string(file), bin / ("preload/" + std::string(file)), 0755);
  const Run r = prof_run({"-q", "--pid", pid},
                         {"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"},
                         bin / "prof-run", bin.path);
  CHECK(r.rc == 2);
  CHECK(r.err == "prof-run: cannot read /proc/" + pid + "/exe: process " + pid +
                     " is not ours to trace (another user's? run as root)\n");
  const Ended end = finish(t, [&] { say_q(t); });
  CHECK(end.out == bare_end.out);
  CHECK(end.status == bare_end.status);

  // A setuid-root copy run by nobody: root may trace it, and the agent,
  // loaded, stays inert under secure execution.
  const TempDir dir("attach-setuid");
  chmod(dir.path.c_str(), 0755);
  copy_file(program("attach_loop"), dir / "setuid", 04755);
  Target su = start({"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", dir / "setuid"});
  REQUIRE(read_line(su) == "ready");
  const std::string su_pid = std::to_string(su.pid);
  const TempDir out("attach");
  const Run secure = prof_run(attach_args(su.pid, out.path, "1s"));
  CHECK(secure.rc == 2);
  CHECK(secure.err == "prof-run: process " + su_pid +
                          " runs a setuid/setgid program: the agent stays inert there\n");
  CHECK(files_in(out.path, ".sysprof").empty());
  const Ended su_end = finish(su, [&] { say_q(su); });
  CHECK(su_end.out == bare_end.out);
  CHECK(su_end.status == bare_end.status);
}

namespace {

const std::string kOpenResty = "/var/cache/libprof/openresty";

// nginx with OpenResty's Lua module (as test/nginx_e2e.cpp runs it), one
// worker, not under the agent: a master in the foreground.
struct Nginx {
  TempDir dir{"attach-nginx"};
  int port = free_port();
  pid_t master = -1;

  void start() {
    const std::string modules = kOpenResty + "/usr/lib/nginx/modules/";
    std::ofstream(dir / "nginx.conf")
        << "load_module " << modules << "ndk_http_module.so;\n"
        << "load_module " << modules << "ngx_http_lua_module.so;\n"
        << "worker_processes 1;\ndaemon off;\n"
        << "error_log " << dir.path << "/error.log;\npid " << dir.path << "/nginx.pid;\n"
        << "events { worker_connections 64; }\n"
        << "http {\n  access_log off;\n"
        << "  lua_package_path '" << kOpenResty << "/usr/share/lua/5.1/?.lua;;';\n"
        << "  server { listen 127.0.0.1:" << port << ";\n"
        << "    location /t { content_by_lua_block {\n"
        << "      local s = 0\n      for i = 1, 20000 do s = s + i % 7 end\n"
        << "      local made = {s}\n"  // (a table a request: the VM allocates)
        << "      ngx.say('sum ', made[1])\n    } }\n  }\n}\n";
    chmod(dir.path.c_str(), 0755);
    mkdir((dir / "logs").c_str(), 0755);
    master = fork();
    REQUIRE(master >= 0);
    if (master == 0) {
      exec_openresty_nginx(kOpenResty, dir.path);
    }
    std::string body;
    for (int i = 0; i < 200 && (body = get()).empty(); i++) usleep(25000);
    REQUIRE(body == "sum 59998\n");
  }

  // The body of GET /t ("" when nothing answers).
  std::string get() const {
    const std::string cmd = "bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port) +
                            " && printf \"GET /t HTTP/1.0\\r\\n\\r\\n\" >&3 && cat <&3' 2>/dev/null";
    FILE *p = popen(cmd.c_str(), "r");
    std::string all;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) all.append(buf, n);
    pclose(p);
    const size_t at = all.find("\r\n\r\n");
    return at == std::string::npos ? "" : all.substr(at + 4);
  }

  pid_t worker() const {
    std::ifstream in("/proc/" + std::to_string(master) + "/task/" + std::to_string(master) + "/children");
    pid_t w = -1;
    in >> w;
    return w;
  }

  // Ends the master as `nginx -s quit` does; its exit status.
  int quit() {
    kill(master, SIGQUIT);
    int status = 0;
    waitpid(master, &status, 0);
    return status;
  }
};

}  // namespace

TEST_CASE("an nginx worker under ab load attached twice: no request fails, nginx ends as it would") {
  if (!have("nginx") || !have("ab") || access((kOpenResty + "/usr/lib/nginx/modules").c_str(), F_OK) != 0)
    std::exit(4);
  Nginx bare;
  bare.start();
  const int bare_status = bare.quit();
  REQUIRE(WIFEXITED(bare_status));

  Nginx n;
  n.start();
  const pid_t worker = n.worker();
  REQUIRE(worker > 0);
  Run ab;
  launch_command(ab, {"ab", "-t", "20", "-n", "10000000", "-c", "4",
                      "http://127.0.0.1:" + std::to_string(n.port) + "/t"}, {});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The worker (nobody) loads the agent itself: a copy it may read, as an
  // installed one is (the build tree may be its owner's alone).
  const TempDir lib("attach-lib");
  chmod(lib.path.c_str(), 0755);
  for (const char *file : {"libprof.so", "libprof-cpu.so", "luajit/prof_luajit.so"}) {
    mkdir((lib / "luajit").c_str(), 0755);
    copy_file(PROF_BUILD_DIR "/preload/" + std::string(file), lib / file, 0644);
  }
  setenv("PROF_AGENT", (lib / "libprof.so").c_str(), 1);
  // (The handler's Lua chunk, its state made by the master long before:
  // found by the samples.)
  attach_twice(worker, {"ngx_process_events_and_timers", "ngx_http_lua_content_by_chunk",
                        "=content_by_lua(nginx.conf:12)"});
  {
    // The VM's own allocator's calls (OpenResty's LuaJIT calls no malloc),
    // through the wrapper put into the state: the chunk's among them.
    const TempDir dir("attach-nginx-mem");
    const Run r = prof_run(attach_args(worker, dir.path, "2s"));
    check_detached(r, worker, false, threads(worker));
    const std::map<FoldedStack, double> made = folded("--metric alloc-count " + memory_stream(dir.path));
    CHECK(samples_in(made, "=content_by_lua(nginx.conf:12)") > 100);
  }
  unsetenv("PROF_AGENT");
  wait_run(ab);
  INFO(ab.out);
  CHECK(ab.rc == 0);
  CHECK(std::regex_search(ab.out, std::regex("\nFailed requests: +0\n")));
  CHECK(std::regex_search(ab.out, std::regex("\nComplete requests: +[1-9][0-9]*\n")));
  CHECK(n.get() == "sum 59998\n");
  CHECK(n.worker() == worker);  // (the same worker: it never died)
  CHECK(n.quit() == bare_status);
}
