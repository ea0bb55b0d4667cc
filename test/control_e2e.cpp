// The launcher and the run-time control, end to end: scripts/prof-run and the
// agent on real processes (test/e2e/ctl_prog.c, whose counts are known by
// construction), and the analyzer's marker windows, diff, suppressions and
// progress on the streams they write.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "agent_run.h"
#include "temp_files.h"

namespace {

using Json = nlohmann::json;

struct Proc {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  std::string out, err;  // a pseudo-terminal's output is all in `out`
};

std::string slurp(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool exists(const std::string &path) { return access(path.c_str(), F_OK) == 0; }

// Waits up to `seconds` for a file to appear.
bool wait_for(const std::string &path, double seconds = 20) {
  for (int i = 0; i < seconds * 100; i++) {
    if (exists(path)) return true;
    usleep(10000);
  }
  return false;
}

// The profiles in dir whose names hold `kind` (".memprof", ".sysprof").
std::vector<std::string> stream_files(const std::string &dir, const char *kind) {
  std::vector<std::string> files;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      // (A stream's ring file, left by a killed process, is no stream.)
      const std::string name = e->d_name;
      const bool ring = name.size() > 5 && name.compare(name.size() - 5, 5, ".ring") == 0;
      if (strstr(e->d_name, kind) && !ring) files.push_back(dir + "/" + e->d_name);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> memprof_files(const std::string &dir) {
  return stream_files(dir, ".memprof");
}

// The child's environment: ours without the agent's variables, plus `env`.
std::vector<std::string> child_env(const std::vector<std::string> &env) {
  std::vector<std::string> out;
  for (char **e = environ; *e; e++)
    if (strncmp(*e, "LD_PRELOAD=", 11) && strncmp(*e, "PROF_", 5)) out.push_back(*e);
  out.push_back(std::string("PROF_AGENT=") + PROF_AGENT_PATH);
  out.push_back(std::string("PROF_ANALYZER=") + PROF_ANALYZER_PATH);
  out.insert(out.end(), env.begin(), env.end());
  return out;
}

[[noreturn]] void exec_child(const std::vector<std::string> &argv,
                             const std::vector<std::string> &env) {
  std::vector<std::string> envs = child_env(env);
  std::vector<char *> cargv, cenv;
  for (const auto &a : argv) cargv.push_back(const_cast<char *>(a.c_str()));
  for (const auto &e : envs) cenv.push_back(const_cast<char *>(e.c_str()));
  cargv.push_back(nullptr);
  cenv.push_back(nullptr);
  execvpe(cargv[0], cargv.data(), cenv.data());
  _exit(127);
}

// Reaps pid, killing its process group after `timeout_s`; drains `pty` (if
// not -1) into *out meanwhile, so the child never blocks on a full terminal.
void reap(pid_t pid, int timeout_s, int pty, Proc *p) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  for (;;) {
    if (pty >= 0) {
      pollfd pfd{pty, POLLIN, 0};
      char buf[4096];
      while (poll(&pfd, 1, 0) > 0) {
        const ssize_t n = read(pty, buf, sizeof buf);
        if (n <= 0) break;
        p->out.append(buf, size_t(n));
      }
    }
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      p->timed_out = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    usleep(5000);
  }
  if (WIFEXITED(status)) p->exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) p->signal = WTERMSIG(status);
}

// Runs argv with stdin from /dev/null; `during` runs once it started.
Proc run(const std::vector<std::string> &argv, const std::vector<std::string> &env = {},
         int timeout_s = 60, const std::function<void(pid_t)> &during = {}) {
  TempDir io;
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(open("/dev/null", O_RDONLY), 0);
    dup2(open((io / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
    dup2(open((io / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
    exec_child(argv, env);
  }
  Proc p;
  if (during) during(pid);
  reap(pid, timeout_s, -1, &p);
  p.out = slurp(io / "out");
  p.err = slurp(io / "err");
  return p;
}

// Runs argv on a pseudo-terminal (its stdin, stdout and stderr); `during`
// gets the terminal's master side.
Proc run_on_terminal(const std::vector<std::string> &argv, const std::vector<std::string> &env = {},
                     const std::function<void(pid_t, int)> &during = {}) {
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) exec_child(argv, env);
  REQUIRE(pid > 0);
  Proc p;
  if (during) during(pid, master);
  reap(pid, 60, master, &p);
  close(master);
  return p;
}

std::vector<std::string> prof_run(const std::vector<std::string> &args) {
  std::vector<std::string> argv{PROF_RUN_SCRIPT};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

Proc analyze(const std::vector<std::string> &args) {
  std::vector<std::string> argv{PROF_ANALYZER_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

Json analyze_json(const std::vector<std::string> &args) {
  std::vector<std::string> a = args;
  a.push_back("--json");
  const Proc p = analyze(a);
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  return Json::parse(p.out);
}

// Profiles ctl_prog `args` into a fresh directory (held by *dir); its file.
std::string profile_ctl(const std::vector<std::string> &args, TempDir *dir,
                        const std::vector<std::string> &env = {}) {
  std::vector<std::string> argv{PROF_CTL_PROGRAM};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> e = env;
  e.push_back(std::string("LD_PRELOAD=") + PROF_AGENT_PATH);
  e.push_back("PROF_OUTPUT=" + *dir / "prof.%p");
  const Proc p = run(argv, e);
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  const auto files = memprof_files(dir->path);
  REQUIRE(files.size() == 1);
  return files[0];
}

uint64_t lines_with(const std::string &text, const std::string &what) {
  uint64_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.find(what) != std::string::npos;
  return n;
}

uint64_t count(const std::map<uint64_t, uint64_t> &m, uint64_t key) {
  auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

// Whether a JSON stack (innermost first) has a frame of `function`.
bool has_function(const Json &stack, const std::string &function) {
  for (const Json &f : stack)
    if (f["function"] == function) return true;
  return false;
}

}  // namespace

// ---------------------------------------------------------------- the launcher

TEST_CASE("prof-run keeps the command's exit code and summarises the files") {
  TempDir dir;
  const Proc p = run(prof_run({"-o", dir / "out", "--", PROF_CTL_PROGRAM, "exit", "42"}));
  INFO(p.err);
  CHECK(p.exit_code == 42);
  CHECK(memprof_files(dir / "out").size() == 1);
  CHECK(p.err.find("1 profile file(s) in " + dir / "out") != std::string::npos);
  CHECK(p.err.find("MEMORY") != std::string::npos);  // the analyzer's summary
  CHECK(p.err.find("flame graph: " + dir / "out/memory.") != std::string::npos);
  CHECK(run(prof_run({"-q", "-o", dir / "zero", "--", PROF_CTL_PROGRAM, "exit", "0"})).exit_code ==
        0);
}

TEST_CASE("each run keeps its own folder, and the analyzer reads a run's folder") {
  TempDir dir;
  const std::string out = dir / "out";
  const Proc first = run(prof_run({"-o", out, "--", PROF_CTL_PROGRAM, "leaks", "3"}));
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(lines_with(first.err, "1 profile file(s) in " + out) == 1);
  // A second run into the same folder is refused before it starts.
  const Proc again = run(prof_run({"-o", out, "--", PROF_CTL_PROGRAM, "exit", "42"}));
  CHECK(again.exit_code == 2);
  CHECK(again.err == "prof-run: " + out + " is not empty: give a new folder (each run keeps its "
                     "profiles apart)\n");
  REQUIRE(memprof_files(out).size() == 1);
  CHECK(memprof_files(out)[0].rfind(out + "/prof.ctl_prog.", 0) == 0);  // named by its program
  // The folder is read as its profile, the flame graph written into it skipped.
  REQUIRE(exists(out + "/memory.svg"));
  const Json by_folder = analyze_json({"summary", out});
  const Json by_file = analyze_json({"summary", memprof_files(out)[0]});
  CHECK(by_folder["memory"]["allocated_blocks"] == by_file["memory"]["allocated_blocks"]);
  CHECK(by_folder["memory"]["leaked_blocks"] == by_file["memory"]["leaked_blocks"]);
  CHECK(by_folder["memory"]["leaked_blocks"] >= 4 + 3 + 3);
  CHECK(analyze({"flamegraph", out, "-o", dir / "f.svg"}).exit_code == 0);
  const Proc empty = analyze({"summary", dir / "out/.."});  // holds only folders
  CHECK(empty.exit_code == 2);
  CHECK(empty.err.rfind("prof-analyze: " + dir / "out/..: no profile in this folder", 0) == 0);
}

TEST_CASE("several programs in a run: files named by program, the main one summarised") {
  TempDir dir;
  const std::string out = dir / "out";
  // A shell that runs ls, then ctl_prog, which allocates the most.
  const std::string script = std::string("ls / >/dev/null; ") + PROF_CTL_PROGRAM + " leaks 5000";
  const Proc p = run(prof_run({"-q", "-o", out, "--", "sh", "-c", script}));
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  std::vector<std::string> ctl, sh, ls;
  for (const std::string &f : memprof_files(out)) {
    const std::string name = f.substr(out.size() + 1);
    if (name.rfind("prof.ctl_prog.", 0) == 0) ctl.push_back(f);
    if (name.rfind("prof.sh.", 0) == 0) sh.push_back(f);
    if (name.rfind("prof.ls.", 0) == 0) ls.push_back(f);
  }
  REQUIRE(ctl.size() == 1);
  CHECK(sh.size() >= 1);
  CHECK(ls.size() == 1);
  const Json s = analyze_json({"summary", out});
  const Json alone = analyze_json({"summary", ctl[0]});
  // The headline is ctl_prog's alone, the others one line each.
  CHECK(s["memory"]["leaked_blocks"] == alone["memory"]["leaked_blocks"]);
  CHECK(s["memory"]["allocated_bytes"] == alone["memory"]["allocated_bytes"]);
  REQUIRE(s["processes"].size() == memprof_files(out).size());
  CHECK(s["processes"][0]["program"] == "ctl_prog");
  CHECK(s["processes"][0]["main"] == true);
  CHECK(s["processes"][0]["file"] == ctl[0]);
  size_t mains = 0;
  for (const Json &row : s["processes"]) mains += row["main"].get<bool>();
  CHECK(mains == 1);
  const Proc text = analyze({"summary", out});
  CHECK(text.out.rfind("PROCESSES: " + std::to_string(memprof_files(out).size()) +
                           ", of 3 programs; below is ctl_prog's summary",
                       0) == 0);
  // --all-processes merges them all, as before.
  const Json all = analyze_json({"summary", "--all-processes", out});
  CHECK(all["memory"]["allocated_bytes"].get<double>() >
        alone["memory"]["allocated_bytes"].get<double>());
  CHECK_FALSE(all.contains("processes"));
}

TEST_CASE("the summary fits a screen by default, and --full has every table") {
  TempDir dir;
  const std::string out = dir / "out";
  const Proc p = run(prof_run({"-o", out, "--cpu", "callgraph", "--", PROF_CTL_PROGRAM,
                               "cpu-phases", "100"}));
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  const Proc shown = analyze({"summary", out});
  INFO(shown.out);
  CHECK(shown.exit_code == 0);
  CHECK(lines_with(shown.out, "") <= 60);
  for (const char *part : {"MEMORY", "peak heap:", "leaked:", "CPU",
                           "HOTTEST FUNCTIONS: samples in the function itself",
                           "HOTTEST FUNCTIONS: samples in the function and what it calls", "(--full: "})
    CHECK(lines_with(shown.out, part) == 1);
  for (const char *part : {"SIZES", "ALLOCATED:", "HOTTEST STACKS", "STREAMS"})
    CHECK(lines_with(shown.out, part) == 0);
  // prof-run prints that summary.
  CHECK(lines_with(p.err, "(--full: ") == 1);
  const Proc full = analyze({"summary", "--full", out});
  for (const char *part : {"SIZES", "ALLOCATED:", "CALLS:", "HOTTEST STACKS", "STREAMS"})
    CHECK(lines_with(full.out, part) == 1);
  CHECK(lines_with(full.out, "(--full: ") == 0);
  // Frames in nearly every sample (_start, main) are left out of the total table.
  const Json cpu = analyze_json({"summary", out})["cpu"];
  bool main_left_out = false;
  for (const Json &f : cpu["in_nearly_every_sample"]) main_left_out |= f == "main";
  CHECK(main_left_out);
  for (const Json &row : cpu["total"]) CHECK(row["function"] != "main");
  // burn() runs itself in every sample: it is the work, and stays.
  REQUIRE(cpu["total"].size() >= 1);
  CHECK(cpu["total"][0]["function"] == "burn");
}

TEST_CASE("prof-run passes SIGTERM and SIGINT on, and its status is the command's") {
  for (const int sig : {SIGTERM, SIGINT}) {
    TempDir dir;
    const Proc p =
        run(prof_run({"-q", "-o", dir / "out", "--", PROF_CTL_PROGRAM, "signals", dir.path}), {},
            60, [&](pid_t launcher) {
              REQUIRE(wait_for(dir / "ready"));
              kill(launcher, sig);
            });
    INFO(p.err);
    CHECK_FALSE(p.timed_out);
    CHECK(slurp(dir / (sig == SIGTERM ? "TERM" : "INT")) == "1");  // passed on once
    CHECK(p.exit_code == 7);  // what the command's handler exits with
  }
  // A command killed by the signal: the shell's 128 + signal.
  TempDir dir;
  const Proc p = run(prof_run({"-q", "-o", dir.path, "--", PROF_CTL_PROGRAM, "sleep"}), {}, 60,
                     [&](pid_t launcher) {
                       for (int i = 0; i < 2000 && memprof_files(dir.path).empty(); i++)
                         usleep(10000);
                       kill(launcher, SIGTERM);
                     });
  CHECK_FALSE(p.timed_out);
  CHECK(p.exit_code == 128 + SIGTERM);
}

TEST_CASE("a command killed by a signal has only its own output, and 128 + the signal") {
  for (const int sig : {SIGINT, SIGTERM, SIGSEGV}) {
    const std::string n = std::to_string(sig);
    INFO("signal " << n);
    TempDir dir;
    const Proc p = run(prof_run({"-q", "-o", dir.path, "--", PROF_CTL_PROGRAM, "raise", n}));
    CHECK(p.err == "raising " + n + "\n");
    CHECK(p.out.empty());
    CHECK(p.exit_code == 128 + sig);
    CHECK(memprof_files(dir.path).size() == 1);
    // At a terminal the launcher runs it otherwise (the terminal's stdin kept).
    const Proc tty = run_on_terminal(prof_run({"-q", "-o", dir / "tty", "--", PROF_CTL_PROGRAM, "raise", n}));
    CHECK(tty.out == "raising " + n + "\r\n");
    CHECK(tty.exit_code == 128 + sig);
  }
}

TEST_CASE("at a terminal, Ctrl-C reaches the command once and the launcher survives it") {
  TempDir dir;
  const Proc p =
      run_on_terminal(prof_run({"-o", dir / "out", "--", PROF_CTL_PROGRAM, "signals", dir.path}),
                      {}, [&](pid_t, int master) {
                        REQUIRE(wait_for(dir / "ready"));
                        REQUIRE(write(master, "\x03", 1) == 1);
                      });
  INFO(p.out);
  CHECK_FALSE(p.timed_out);
  CHECK(slurp(dir / "INT") == "1");
  CHECK(p.exit_code == 7);
  CHECK(p.out.find("profile file(s)") != std::string::npos);  // the summary still came
}

TEST_CASE("static programs are refused in one line, without running them or hanging") {
  TempDir dir;
  const auto start = std::chrono::steady_clock::now();
  const Proc p =
      run(prof_run({"-o", dir / "out", "--", PROF_CTL_STATIC, "signals", dir.path}), {}, 20);
  CHECK_FALSE(p.timed_out);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  CHECK(p.exit_code != 0);
  CHECK(lines_with(p.err, "") == 1);
  CHECK(p.err.find("statically linked") != std::string::npos);
  CHECK_FALSE(exists(dir / "ready"));  // never ran
  // The same program, dynamically linked, passes the check.
  CHECK(run(prof_run({"-q", "-o", dir / "dyn", "--", PROF_CTL_PROGRAM, "exit", "0"})).exit_code ==
        0);
}

TEST_CASE("setuid programs are refused in one line, without running them") {
  TempDir dir;
  const std::string copy = dir / "ctl_setuid";
  {
    std::ifstream in(PROF_CTL_PROGRAM, std::ios::binary);
    std::ofstream out(copy, std::ios::binary);
    out << in.rdbuf();
  }
  REQUIRE(chmod(copy.c_str(), 04755) == 0);
  const Proc p = run(prof_run({"-o", dir / "out", "--", copy, "signals", dir.path}), {}, 20);
  CHECK_FALSE(p.timed_out);
  CHECK(p.exit_code != 0);
  CHECK(lines_with(p.err, "") == 1);
  CHECK(p.err.find("setuid") != std::string::npos);
  CHECK_FALSE(exists(dir / "ready"));
}

TEST_CASE("CPU flags reach the agent's environment, and bad ones stop before running") {
  TempDir dir;
  const Proc p = run(prof_run({"-q", "-o", dir.path, "--no-memory", "--cpu", "callgraph",
                               "--interval", "500us", "--", "env"}));
  INFO(p.err);
  CHECK(p.exit_code == 0);
  CHECK(lines_with(p.out, "PROF_CPU=callgraph") == 1);
  CHECK(lines_with(p.out, "PROF_INTERVAL=500us") == 1);
  CHECK(lines_with(p.out, "PROF_MEMORY=0") == 1);
  CHECK(lines_with(p.out, "PROF_OUTPUT=" + dir.path + "/prof.%e.%p") == 1);
  // CPU alone runs the agent's build without allocator hooks.
  CHECK(lines_with(p.out, "LD_PRELOAD=") == 1);
  CHECK(lines_with(p.out, "/libprof-cpu.so") == 1);
  const Proc bad = run(prof_run(
      {"-o", dir / "bad", "--cpu", "sometimes", "--", PROF_CTL_PROGRAM, "signals", dir.path}));
  CHECK(bad.exit_code == 2);
  CHECK(lines_with(bad.err, "") == 1);
  CHECK_FALSE(exists(dir / "ready"));
}

TEST_CASE("every value is checked before the command runs: a bad one is one line and exit 2") {
  TempDir dir;
  struct Bad {
    std::vector<std::string> options, env;
    std::string says;
  };
  const std::vector<Bad> bad = {
      {{"--sample-bytes", "abc"}, {},
       "prof-run: --sample-bytes: invalid PROF_SAMPLE_BYTES='abc' (expected bytes, e.g. 512k; 0 "
       "records every event)\n"},
      {{"--interval", "5us"}, {},
       "prof-run: --interval: invalid PROF_INTERVAL='5us' (expected 100us..10s, e.g. 1ms, 500us)\n"},
      {{"--depth", "0"}, {}, "prof-run: --depth: invalid PROF_DEPTH='0' (expected 1..1024)\n"},
      {{"--toggle-signal", "KILL"}, {},
       "prof-run: --toggle-signal: invalid PROF_TOGGLE_SIGNAL='9' (expected a signal a handler can "
       "catch: 1..64 but 9, 19, 32, 33)\n"},
      // The environment's own PROF_* values, named as the variable they are.
      {{}, {"PROF_MMAP=maybe"}, "prof-run: invalid PROF_MMAP='maybe' (expected 0 or 1)\n"},
  };
  for (const Bad &b : bad) {
    std::vector<std::string> args{"-o", dir / "out"};
    args.insert(args.end(), b.options.begin(), b.options.end());
    args.insert(args.end(), {"--", PROF_CTL_PROGRAM, "signals", dir.path});
    const Proc p = run(prof_run(args), b.env);
    INFO(p.err);
    CHECK(p.exit_code == 2);
    CHECK(p.err == b.says);
    CHECK_FALSE(exists(dir / "ready"));  // the command never ran
    CHECK_FALSE(exists(dir / "out"));
  }
  const Proc good = run(prof_run({"-q", "-o", dir / "good", "--depth", "4", "--", PROF_CTL_PROGRAM,
                                  "exit", "3"}),
                        {"PROF_DEPTH=0"});
  INFO(good.err);
  CHECK(good.exit_code == 3);  // an option's value stands before the environment's
  CHECK(good.err.empty());
  CHECK(memprof_files(dir / "good").size() == 1);
}

TEST_CASE("both tools have --version and --help, and pictures are not written to a terminal") {
  for (const std::string &tool : {std::string(PROF_RUN_SCRIPT), std::string(PROF_ANALYZER_PATH)}) {
    INFO(tool);
    const Proc v = run({tool, "--version"});
    CHECK(v.exit_code == 0);
    CHECK(v.err.empty());
    const std::string name = tool.substr(tool.rfind('/') + 1);
    CHECK(v.out.rfind(name + " ", 0) == 0);
    CHECK(std::count(v.out.begin(), v.out.end(), '\n') == 1);
    const Proc h = run({tool, "--help"});
    CHECK(h.exit_code == 0);
    CHECK(lines_with(h.out, "Examples:") == 1);
  }
  const Proc h = run(prof_run({"--help"}));
  for (const char *var : {"PROF_OUTPUT", "PROF_DEPTH", "PROF_SAMPLE_BYTES", "PROF_CPU",
                          "PROF_INTERVAL", "PROF_TOGGLE_SIGNAL", "PROF_COMPRESS", "PROF_FOLLOW"})
    CHECK(lines_with(h.out, var) >= 1);
  TempDir dir;
  const std::string f = profile_ctl({"leaks", "3"}, &dir);
  for (const char *command : {"flamegraph", "chart", "html", "pprof", "speedscope"}) {
    INFO(command);
    const Proc t = run_on_terminal({PROF_ANALYZER_PATH, command, f});
    CHECK(t.exit_code == 2);
    CHECK(t.out.find("not for a terminal: give -o FILE (or redirect its output)") !=
          std::string::npos);
    CHECK(t.out.find("<svg") == std::string::npos);
    CHECK(t.out.find("<html") == std::string::npos);
    CHECK(t.out.size() < 200);
    CHECK(analyze({command, f}).exit_code == 0);  // into a file or a pipe
  }
}

TEST_CASE("children are followed by default and not with --no-follow") {
  TempDir dir;
  CHECK(run(prof_run({"-q", "-o", dir / "follow", "--", PROF_CTL_PROGRAM, "fork"})).exit_code == 0);
  const auto both = memprof_files(dir / "follow");
  REQUIRE(both.size() == 2);
  Recorded parent = read_memprof(both[0]), child = read_memprof(both[1]);
  if (parent.ppid == child.pid) std::swap(parent, child);
  CHECK(child.ppid == parent.pid);
  CHECK(count(parent.allocs_by_size, 40) == 2);
  CHECK(count(child.allocs_by_size, 40) == 3);

  CHECK(run(prof_run({"-q", "--no-follow", "-o", dir / "alone", "--", PROF_CTL_PROGRAM, "fork"}))
            .exit_code == 0);
  const auto one = memprof_files(dir / "alone");
  REQUIRE(one.size() == 1);
  CHECK(count(read_memprof(one[0]).allocs_by_size, 40) == 2);

  // Inside another program's --no-follow profile (the agent wrote that
  // program's pid into PROF_FOLLOW), prof-run's command is profiled the same
  // way, not left inert as a child of that program.
  CHECK(run(prof_run({"-q", "-o", dir / "nested", "--", PROF_CTL_PROGRAM, "fork"}),
            {"PROF_FOLLOW=0:1"})
            .exit_code == 0);
  const auto nested = memprof_files(dir / "nested");
  REQUIRE(nested.size() == 1);
  CHECK(count(read_memprof(nested[0]).allocs_by_size, 40) == 2);
}

TEST_CASE("a '%' in prof-run's output directory is kept as it is") {
  TempDir dir;
  const Proc p = run(prof_run({"-q", "-o", dir / "100%p", "--", PROF_CTL_PROGRAM, "exit", "0"}));
  INFO(p.err);
  CHECK(p.exit_code == 0);
  CHECK(memprof_files(dir / "100%p").size() == 1);
}

// ------------------------------------------------------------ run-time control

TEST_CASE("the toggle signal starts recording paused and toggles it") {
  const std::vector<std::string> names{"USR2", "SIGUSR2", std::to_string(SIGUSR2)};
  for (const std::string &sig : names) {
    TempDir dir;
    const Proc p = run(prof_run({"-q", "-o", dir.path, "--toggle-signal", sig, "--",
                                 PROF_CTL_PROGRAM, "toggle", std::to_string(SIGUSR2)}));
    INFO(sig << ": " << p.err);
    REQUIRE(p.exit_code == 0);
    const auto files = memprof_files(dir.path);
    REQUIRE(files.size() == 1);
    const Recorded rec = read_memprof(files[0]);
    CHECK(count(rec.allocs_by_size, 40) == 0);  // before the first signal
    CHECK(count(rec.allocs_by_size, 56) == 9);  // between the two
    CHECK(count(rec.allocs_by_size, 72) == 0);  // after the second
  }
}

TEST_CASE("the toggle signal pauses the CPU sampler too, without a memory stream") {
  TempDir dir;
  const Proc p = run(prof_run({"-q", "-o", dir.path, "--no-memory", "--cpu", "callgraph",
                               "--interval", "1ms", "--toggle-signal", "USR2", "--",
                               PROF_CTL_PROGRAM, "cpu-toggle", std::to_string(SIGUSR2)}));
  INFO(p.err);
  REQUIRE(p.exit_code == 0);  // the agent's handler took the signal
  CHECK(memprof_files(dir.path).empty());
  const auto cpu = stream_files(dir.path, ".sysprof");
  REQUIRE(cpu.size() == 1);
  // 200 of the 600 ms of CPU time burnt were between the two signals: about
  // 200 samples at 1 kHz.
  const double samples = analyze_json({"summary", cpu[0]})["cpu"]["samples"];
  CHECK(samples > 100);
  CHECK(samples < 300);
}

TEST_CASE("without a toggle signal, a program's own use of the signal is unaffected") {
  const RunResult own = run_under_agent({PROF_CTL_PROGRAM, "own-handler", std::to_string(SIGUSR2)});
  CHECK(own.exit_code == 0);
  CHECK(own.out == "handled 2\n");
  REQUIRE(own.memprof_files.size() == 1);
  const Recorded rec = read_memprof(own.memprof_files[0]);
  CHECK(count(rec.allocs_by_size, 40) == 5);
  CHECK(count(rec.allocs_by_size, 56) == 9);
  CHECK(count(rec.allocs_by_size, 72) == 4);
  // Its default action too: the signal still ends the program, as without the agent.
  const RunResult bare = run_bare({PROF_CTL_PROGRAM, "toggle", std::to_string(SIGUSR2)});
  const RunResult dies = run_under_agent({PROF_CTL_PROGRAM, "toggle", std::to_string(SIGUSR2)});
  CHECK(bare.signal == SIGUSR2);
  CHECK(dies.signal == SIGUSR2);
}

TEST_CASE("prof_stop, prof_start and prof_marker through weak symbols") {
  const RunResult r = run_under_agent({PROF_CTL_PROGRAM, "api"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "agent\n");
  REQUIRE(r.memprof_files.size() == 1);
  const Recorded rec = read_memprof(r.memprof_files[0]);
  CHECK(count(rec.allocs_by_size, 40) == 0);
  CHECK(count(rec.allocs_by_size, 88) == 3);
  const Json s = analyze_json({"summary", r.memprof_files[0]});
  REQUIRE(s["streams"][0]["markers"].size() == 1);
  CHECK(s["streams"][0]["markers"][0]["label"] == "api");
  // Without the agent the program runs unchanged.
  const RunResult bare = run_bare({PROF_CTL_PROGRAM, "api"});
  CHECK(bare.exit_code == 0);
  CHECK(bare.out == "no agent\n");
}

TEST_CASE("dlopen's RTLD_DEEPBIND is dropped with one warning, only while the agent records") {
  TempDir dir;
  const Proc p =
      run(prof_run({"-q", "-o", dir.path, "--", PROF_DLOPEN_PROGRAM, PROF_DLOPEN_PLUGIN}));
  CHECK(p.exit_code == 0);
  CHECK(lines_with(p.err, "dropping RTLD_DEEPBIND") == 1);
  const auto files = memprof_files(dir.path);
  REQUIRE(files.size() == 1);
  // Bound deep, the plugin's malloc would bypass the hooks.
  CHECK(count(read_memprof(files[0]).allocs_by_size, 9009) == 3);
  const RunResult off =
      run_under_agent({PROF_DLOPEN_PROGRAM, PROF_DLOPEN_PLUGIN}, {"PROF_DEPTH=lots"});
  CHECK(off.exit_code == 0);
  CHECK(off.err.find("RTLD_DEEPBIND") == std::string::npos);
}

// -------------------------------------------------------------- marker windows

TEST_CASE("every command restricted to the window between two markers") {
  TempDir dir;
  const std::string f = profile_ctl({"phases"}, &dir);
  const Json s = analyze_json({"summary", "--from", "a", "--to", "b", f});
  const Json &m = s["memory"];
  CHECK(m["alloc_calls"] == 7);
  CHECK(m["realloc_calls"] == 1);  // of the 24 B block made before: a new 80 B block
  CHECK(m["free_calls"] == 0);
  CHECK(m["allocated_blocks"] == 8);
  CHECK(m["allocated_bytes"] == 7 * 48 + 80);
  CHECK(m["leaked_blocks"] == 8);  // still live when the window closed
  CHECK(m["leaked_bytes"] == 7 * 48 + 80);
  CHECK(m["peak_bytes"] == 7 * 48 + 80);
  CHECK(m["unknown_frees"] == 0);
  const Json &w = s["streams"][0]["window"];
  CHECK(w["opened"] == true);
  CHECK(w["closed"] == true);
  CHECK(w["earlier_frees"] == 11);  // 10 x 32 B freed, 24 B reallocated
  CHECK(w["earlier_freed_bytes"] == 10 * 32 + 24);

  const Json rep = analyze_json({"report", "--from", "a", "--to", "b", f});
  uint64_t events = 0, held = 0;
  for (const Json &r : rep["allocations"]) events += r["events"].get<uint64_t>();
  CHECK(events == 7);
  CHECK(rep["reallocations"].size() == 1);
  CHECK(rep["deallocations"].empty());
  for (const Json &r : rep["heap_summary"]) held += r["holds"].get<uint64_t>();
  CHECK(held == 7 * 48 + 80);
  CHECK(rep["unknown_frees"] == 0);

  const Json folded =
      analyze_json({"folded", "--metric", "alloc-count", "--from", "a", "--to", "b", f});
  double calls = 0;
  for (const Json &r : folded) calls += r["value"].get<double>();
  CHECK(calls == 8);

  // Open-ended windows: from "b" to the end, from the start to "a".
  const Json after = analyze_json({"summary", "--from", "b", f});
  CHECK(after["memory"]["alloc_calls"] == 50);
  CHECK(after["memory"]["free_calls"] == 50);
  CHECK(after["memory"]["leaked_blocks"] == 0);
  CHECK(after["streams"][0]["window"]["earlier_frees"] == 90 + 7 + 1);
  const Json before = analyze_json({"summary", "--to", "a", f});
  CHECK(before["memory"]["alloc_calls"] == 101);
  CHECK(before["memory"]["leaked_bytes"] == 100 * 32 + 24);
}

TEST_CASE("a marker a stream lacks is one warning, and an empty or open window") {
  TempDir dir;
  const std::string f = profile_ctl({"phases"}, &dir);
  const Proc none = analyze({"summary", "--json", "--from", "nowhere", f});
  CHECK(none.exit_code == 0);
  CHECK(lines_with(none.err, "no marker 'nowhere'") == 1);
  CHECK(Json::parse(none.out)["memory"]["alloc_calls"] == 0);
  const Proc open = analyze({"summary", "--json", "--from", "b", "--to", "nowhere", f});
  CHECK(open.exit_code == 0);
  CHECK(lines_with(open.err, "no marker 'nowhere' after 'b'") == 1);
  CHECK(Json::parse(open.out)["memory"]["alloc_calls"] == 50);
  const Proc text = analyze({"report", "--from", "a", "--to", "b", f});
  CHECK(text.out.rfind("WINDOW (pid ", 0) == 0);
  CHECK(lines_with(text.out, "from marker 'a' to marker 'b'; 11 frees of blocks made before it") ==
        1);
}

TEST_CASE("markers reach the CPU stream too, and a window keeps the samples between them") {
  TempDir dir;
  const Proc p = run(prof_run(
      {"-q", "-o", dir.path, "--cpu", "callgraph", "--", PROF_CTL_PROGRAM, "cpu-phases", "200"}));
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  const auto mem = memprof_files(dir.path), cpus = stream_files(dir.path, ".sysprof");
  REQUIRE(mem.size() == 1);
  REQUIRE(cpus.size() == 1);
  const std::string &cpu = cpus[0];
  for (const std::string &f : {mem[0], cpu}) {
    const Json s = analyze_json({"summary", f});
    const Json &markers = s["streams"][0]["markers"];
    REQUIRE(markers.size() == 2);
    CHECK(markers[0]["label"] == "a");
    CHECK(markers[1]["label"] == "b");
  }
  // Three equal phases of CPU time: the window holds about a third of the samples.
  const double all = analyze_json({"summary", cpu})["cpu"]["samples"];
  const double window =
      analyze_json({"summary", "--from", "a", "--to", "b", cpu})["cpu"]["samples"];
  REQUIRE(all > 100);
  CHECK(window > 0.2 * all);
  CHECK(window < 0.47 * all);
}

// ------------------------------------------------------ diff and suppressions

TEST_CASE("a window in seconds needs no marker: --from 0.2s --to 0.4s") {
  // cpu-phases 200: 200 ms of CPU, marker a, 200 ms, marker b, 200 ms.
  TempDir dir;
  const Proc p = run({PROF_CTL_PROGRAM, "cpu-phases", "200"},
                     {std::string("LD_PRELOAD=") + PROF_AGENT_PATH, "PROF_CPU=callgraph",
                      "PROF_MEMORY=0", "PROF_OUTPUT=" + dir / "prof.%p"});
  REQUIRE(p.exit_code == 0);
  const auto files = stream_files(dir.path, ".sysprof");
  REQUIRE(files.size() == 1);
  const Json all = analyze_json({"summary", files[0]});
  uint64_t a = 0, b = 0;
  for (const Json &m : all["streams"][0]["markers"]) (m["label"] == "a" ? a : b) = m["time_ns"];
  REQUIRE(a > 0);
  REQUIRE(b > a);
  const double by_markers = analyze_json({"summary", "--from", "a", "--to", "b", files[0]})["cpu"]["samples"];
  // The same window by the markers' times, a millisecond before each.
  char from[32], to[32];
  snprintf(from, sizeof from, "%.3fs", double(a) / 1e9 - 0.001);
  snprintf(to, sizeof to, "%.3fs", double(b) / 1e9 - 0.001);
  const Proc timed = analyze({"summary", "--json", "--from", from, "--to", to, files[0]});
  INFO(timed.err);
  REQUIRE(timed.exit_code == 0);
  CHECK(timed.err.empty());  // opened and closed, no warning
  const double by_time = Json::parse(timed.out)["cpu"]["samples"];
  CHECK(by_markers > 100);
  CHECK(std::abs(by_time - by_markers) <= 0.1 * by_markers);
  CHECK(by_time < 0.7 * all["cpu"]["samples"].get<double>());
  const Proc text = analyze({"summary", "--from", from, "--to", to, files[0]});
  CHECK(lines_with(text.out, std::string("WINDOW (pid ")) == 1);
  CHECK(lines_with(text.out, std::string("from ") + from + " to " + to) == 1);
}

TEST_CASE("diff shows the per-stack changes between two runs, largest first") {
  TempDir three, five;
  const std::string before = profile_ctl({"leaks", "3"}, &three);
  const std::string after = profile_ctl({"leaks", "5"}, &five);
  const Json d = analyze_json({"diff", before, after});
  CHECK(d["after"]["alloc_bytes"].get<double>() - d["before"]["alloc_bytes"].get<double>() == 200);
  REQUIRE(d["stacks"].size() == 1);  // leak_one, leak_two and the freed blocks did not change
  const Json &row = d["stacks"][0];
  CHECK(has_function(row["stack"], "leak_n"));
  CHECK(row["alloc_bytes"]["before"] == 300);
  CHECK(row["alloc_bytes"]["after"] == 500);
  CHECK(row["alloc_bytes"]["delta"] == 200);
  CHECK(row["alloc_count"]["delta"] == 2);
  CHECK(row["leaked_bytes"]["delta"] == 200);
  CHECK(row["peak_bytes"]["delta"] == 200);
  // The other way round, the changes are negative.
  const Json back = analyze_json({"diff", after, before});
  CHECK(back["stacks"][0]["alloc_bytes"]["delta"] == -200);
  const Proc text = analyze({"diff", before, after});
  CHECK(text.exit_code == 0);
  CHECK(lines_with(text.out, "+200B allocated, +2 calls, +200B leaked") == 1);
  const Proc same = analyze({"diff", "--json", before, before});
  CHECK(Json::parse(same.out)["stacks"].empty());
}

TEST_CASE("LSan suppressions leave matched leaks out and count them") {
  TempDir dir;
  const std::string f = profile_ctl({"leaks", "3"}, &dir);
  const Json all = analyze_json({"summary", f});
  const uint64_t blocks = all["memory"]["leaked_blocks"];
  const double bytes = all["memory"]["leaked_bytes"];
  CHECK(blocks >= 4 + 3 + 3);

  std::ofstream(dir / "supp") << "# known leaks\n\n  leak:leak_o*e  \n";
  const Json s = analyze_json({"summary", "--suppressions", dir / "supp", f});
  CHECK(s["memory"]["leaked_blocks"] == blocks - 4);
  CHECK(s["memory"]["leaked_bytes"] == bytes - 4 * 64);
  REQUIRE(s["memory"]["suppressed"].size() == 1);
  CHECK(s["memory"]["suppressed"][0]["pattern"] == "leak_o*e");
  CHECK(s["memory"]["suppressed"][0]["blocks"] == 4);
  CHECK(s["memory"]["suppressed"][0]["bytes"] == 4 * 64);
  for (const Json &r : s["memory"]["leaks"]) CHECK_FALSE(has_function(r["stack"], "leak_one"));
  CHECK(s["memory"]["allocated_blocks"] == all["memory"]["allocated_blocks"]);  // only leaks change

  // Anchors: "^eak_two" does not match leak_two, "^leak_tw" and "two$" do;
  // the first matching pattern is credited.
  std::ofstream(dir / "anchored") << "leak:^eak_two\nleak:^leak_tw\nleak:two$\n";
  const Json a = analyze_json({"summary", "--suppressions", dir / "anchored", f});
  REQUIRE(a["memory"]["suppressed"].size() == 1);
  CHECK(a["memory"]["suppressed"][0]["pattern"] == "^leak_tw");
  CHECK(a["memory"]["suppressed"][0]["blocks"] == 3);

  // A source file matches too: every leak made in ctl_prog.c.
  std::ofstream(dir / "file") << "leak:ctl_prog.c\n";
  const Json byfile = analyze_json({"summary", "--suppressions", dir / "file", f});
  CHECK(byfile["memory"]["suppressed"][0]["blocks"] == 4 + 3 + 3);

  const Proc folded =
      analyze({"folded", "--metric", "leaked-bytes", "--suppressions", dir / "supp", f});
  CHECK(folded.exit_code == 0);
  CHECK(lines_with(folded.out, "leak_one") == 0);
  CHECK(lines_with(folded.out, "leak_two") == 1);

  std::ofstream(dir / "bad") << "leak:x\nrace:y\n";
  const Proc bad = analyze({"summary", "--suppressions", dir / "bad", f});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find(dir / "bad:2: suppression type 'race'") != std::string::npos);
}

// ------------------------------------------------------------------ progress

TEST_CASE("the C library's and the loader's one-time allocations are not leaks by default") {
  // mem_dlopen leaks 3 x 9009 B from its plugin, and prints to a file: stdio's
  // buffer and the loader's dl_find_object table stay to the end.
  TempDir dir;
  std::vector<std::string> env{std::string("LD_PRELOAD=") + PROF_AGENT_PATH,
                               "PROF_OUTPUT=" + dir / "prof.%p"};
  const Proc p = run({PROF_DLOPEN_PROGRAM, PROF_DLOPEN_PLUGIN}, env);
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  const auto files = memprof_files(dir.path);
  REQUIRE(files.size() == 1);
  const Json m = analyze_json({"summary", files[0]})["memory"];
  CHECK(m["leaked_blocks"] == 3);
  CHECK(m["leaked_bytes"] == 3 * 9009);
  std::set<std::string> by_default;
  for (const Json &u : m["suppressed"]) {
    CHECK(u["default"] == true);
    by_default.insert(u["pattern"].get<std::string>());
  }
  CHECK(by_default.count("^_IO_file_doallocate$") == 1);
  const Proc text = analyze({"summary", files[0]});
  CHECK(lines_with(text.out, "not leaks:") == 1);
  // Switched off, they are leaks again, and nothing is suppressed.
  const Json all = analyze_json({"summary", "--no-default-suppressions", files[0]})["memory"];
  CHECK(all["leaked_blocks"].get<uint64_t>() > 3);
  CHECK(all["suppressed"].empty());
  bool stdio = false;
  for (const Json &r : all["leaks"]) stdio |= has_function(r["stack"], "_IO_file_doallocate");
  CHECK(stdio);
  // A user's file adds to the defaults.
  std::ofstream(dir / "supp") << "leak:plugin_alloc\n";
  const Json both = analyze_json({"summary", "--suppressions", dir / "supp", files[0]})["memory"];
  CHECK(both["leaked_blocks"] == 0);
}

TEST_CASE("sampled, the leaked blocks are estimated in the headline as the tables' allocations") {
  // leaks 20000: 4 x 64 B, 3 x 128 B and 20000 x 100 B leaked.
  TempDir dir;
  const std::string f = profile_ctl({"leaks", "20000"}, &dir, {"PROF_SAMPLE_BYTES=4k"});
  const Json m = analyze_json({"summary", f})["memory"];
  const double leaked = m["leaked_blocks"].get<double>();
  const uint64_t recorded = m["leaked_blocks_recorded"];
  INFO(leaked << " estimated from " << recorded);
  CHECK(recorded < 2000);  // about one block in 40 sampled
  CHECK(leaked > 0.8 * 20007);
  CHECK(leaked < 1.2 * 20007);
  // The leaks table's allocations add up to the same estimate, near enough.
  double in_table = 0;
  const Json rows = analyze_json({"summary", "--top", "100", f})["memory"]["leaks"];
  for (const Json &r : rows)
    in_table += r["alloc_count"].get<double>() - r["frees"].get<double>();
  CHECK(std::abs(in_table - leaked) < 0.2 * leaked);
  const Proc text = analyze({"summary", f});
  CHECK(lines_with(text.out, "leaked:        ~") == 1);
  CHECK(lines_with(text.out, "blocks (estimated from the " + std::to_string(recorded) +
                                 " blocks sampled)") == 1);
}

TEST_CASE("progress on stderr while reading a large file, only when stderr is a terminal") {
  TempDir dir;
  // (Plain: compressed, the file would be far below the size that shows it.)
  const std::string f = profile_ctl({"many", "500000"}, &dir, {"PROF_COMPRESS=0"});
  struct stat st;
  REQUIRE(stat(f.c_str(), &st) == 0);
  REQUIRE(st.st_size >= 8 << 20);  // ReadProgress::kMinBytes
  const Proc piped = analyze({"summary", "--top", "1", f});
  CHECK(piped.exit_code == 0);
  CHECK(piped.err.empty());
  const Proc tty = run_on_terminal({PROF_ANALYZER_PATH, "summary", "--top", "1", f});
  CHECK(tty.exit_code == 0);
  CHECK(tty.out.find("\rprof-analyze: reading " + f + ":  50%") != std::string::npos);
  CHECK(tty.out.find("\r\33[K") != std::string::npos);  // erased at the end
}
