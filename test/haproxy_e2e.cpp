// HAProxy end to end (issue 35 item 4): Debian's haproxy, which links the
// shared liblua5.3.so.0, runs a `core.register_service` HTTP service loaded
// with `lua-load` (e2e/haproxy_service.lua, no `require "prof_lua"`) under
// libprof.so with memory and CPU recorded, driven by ab. The agent attaches
// the Lua 5.3 adapter by itself when HAProxy makes its Lua state, and
// reports HAProxy's own lua_resume of each request's coroutine. Checks: at
// least 90% of the service's string bytes on its own lines, at least 80% of
// the CPU samples taken inside it (under liblua's lua_resume) with its Lua
// frames, no failed request, and a clean stop leaves complete streams.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent_run.h"
#include "lua_streams.h"
#include "free_port.h"
#include "temp_files.h"

extern char **environ;

namespace {

const std::string kService = PROF_LUA_TEST_DIR "/haproxy_service.lua";
constexpr int kRequests = 2000;

bool accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

// The lines of `text` matching `re`'s first group, as a number.
double field(const std::string &text, const std::string &re) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(re)) ? std::stod(m[1]) : -1;
}

}  // namespace

TEST_CASE("haproxy e2e: a Lua service under ab, its Lua lines and frames with no edit",
          "[haproxy]") {
  TempDir dir("haproxy");
  const int port = free_port();
  std::ofstream(dir / "haproxy.cfg") << "global\n"
                                        "  nbthread 1\n"
                                        "  lua-load " << kService << "\n"
                                        "defaults\n"
                                        "  mode http\n"
                                        "  timeout connect 5s\n"
                                        "  timeout client 30s\n"
                                        "  timeout server 30s\n"
                                        "frontend web\n"
                                        "  bind 127.0.0.1:" << port << "\n"
                                        "  http-request use-service lua.strings\n";
  std::vector<std::string> env_strings = {"LD_PRELOAD=" PROF_AGENT_PATH,
                                          "PROF_OUTPUT=" + dir.path + "/prof.%p",
                                          "PROF_CPU=callgraph"};
  for (char **e = environ; *e; e++) env_strings.push_back(*e);
  std::vector<char *> envp;
  for (std::string &s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  const std::string cfg = dir / "haproxy.cfg", log = dir / "haproxy.log";
  std::vector<std::string> args = {"haproxy", "-db", "-f", cfg};
  std::vector<char *> argv;
  for (std::string &a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  REQUIRE(posix_spawnp(&pid, "haproxy", &fa, nullptr, argv.data(), envp.data()) == 0);
  posix_spawn_file_actions_destroy(&fa);
  for (int i = 0; i < 200 && !accepts(port); i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(accepts(port));

  // XXX: popen, not run_bare, which waits for every child (HAProxy too).
  const std::string ab_cmd = "ab -q -n " + std::to_string(kRequests) + " -c 4 http://127.0.0.1:" +
                             std::to_string(port) + "/ 2>&1";
  FILE *ab = popen(ab_cmd.c_str(), "r");
  REQUIRE(ab);
  std::string ab_out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, ab)) > 0;) ab_out.append(buf, n);
  const int ab_status = pclose(ab);
  INFO(ab_out);
  CHECK(ab_status == 0);
  CHECK(field(ab_out, R"(Complete requests:\s+(\d+))") == kRequests);
  CHECK(field(ab_out, R"(Failed requests:\s+(\d+))") == 0);
  CHECK(field(ab_out, R"(Non-2xx responses:\s+(\d+))") == -1);  // the line appears only when some are

  // A clean stop: SIGUSR1, HAProxy's soft stop, then its exit.
  REQUIRE(kill(pid, SIGUSR1) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  std::ifstream in(log);
  const std::string log_text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO(log_text);
  CHECK(WIFEXITED(status));

  std::vector<std::string> memprof, sysprof;
  const RunResult ls = run_bare({"find", dir.path, "-name", "prof.*"});
  std::istringstream files(ls.out);
  for (std::string line; std::getline(files, line);) {
    if (line.size() > 8 && line.compare(line.size() - 8, 8, ".memprof") == 0) memprof.push_back(line);
    if (line.size() > 8 && line.compare(line.size() - 8, 8, ".sysprof") == 0) sysprof.push_back(line);
  }
  REQUIRE(memprof.size() == 1);
  REQUIRE(sysprof.size() == 1);

  // Memory: each request's 20 strings, 24 + 1000 + i + 1 bytes, in `build`
  // (line 6, defined at 5) called by the service (line 11, defined at 10).
  const GuestProfile mem = read_guest_memprof(memprof[0]);
  CHECK_FALSE(mem.truncated);
  double expected = 0, on_lines = 0;
  for (int i = 1; i <= 20; i++) expected += double(kRequests) * (1025 + i);
  for (const GuestAlloc &a : mem.allocs) {
    const GuestNames &s = *a.stack;
    if (s.size() >= 3 && s[0] == "string.rep" && s[1] == "haproxy_service.lua:5:6" &&
        s[2] == "haproxy_service.lua:10:11" && a.nsize >= 1026 && a.nsize <= 1045)
      on_lines += double(a.nsize);
  }
  CHECK(on_lines >= 0.9 * expected);
  CHECK(on_lines <= expected);

  // CPU: samples taken inside the service, under the lua_resume that runs
  // its coroutine (not HAProxy's own calls into the Lua API around it),
  // carry the service's Lua frames.
  const GuestProfile cpu = read_guest_sysprof(sysprof[0]);
  CHECK_FALSE(cpu.truncated);
  uint64_t resume_begin = 0, resume_end = 0;
  for (const prof::ext::ModuleLoad &m : cpu.modules) {
    if (m.path.find("liblua5.3.so") == std::string::npos) continue;
    const RunResult nm = run_bare({"nm", "-D", "-S", "--defined-only", m.path});
    std::smatch f;
    if (std::regex_search(nm.out, f, std::regex(R"(([0-9a-f]+) ([0-9a-f]+) T lua_resume[@\n])")))
      resume_begin = m.base + std::stoull(f[1], nullptr, 16),
      resume_end = resume_begin + std::stoull(f[2], nullptr, 16);
  }
  REQUIRE(resume_end > resume_begin);
  double in_lua = 0, with_service = 0;
  for (const GuestSample &s : cpu.samples) {
    bool lua = false;
    for (uint64_t ip : s.host) lua |= ip >= resume_begin && ip < resume_end;
    if (!lua) continue;
    in_lua += double(s.weight);
    for (const std::string &f : s.stack)
      if (f.rfind("haproxy_service.lua:", 0) == 0) {
        with_service += double(s.weight);
        break;
      }
  }
  REQUIRE(in_lua > 0);
  CHECK(with_service >= 0.8 * in_lua);
}
