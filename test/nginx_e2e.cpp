// nginx with OpenResty's Lua module (unpacked by setup.sh beside Debian's
// nginx-light) under the agent, driven by ab: a master and two workers, a
// content_by_lua handler that makes a known number of tables per request
// and spins at a known line. No edit to nginx or its configuration names
// the profiler: the agent attaches the LuaJIT adapter to the state the
// master makes, which the workers inherit.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <netinet/in.h>
#include <regex>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "agent_run.h"
#include "luajit_streams.h"
#include "free_port.h"
#include "openresty_nginx.h"
#include "temp_files.h"

namespace {

const std::string kOpenResty = PROF_OPENRESTY_DIR;
constexpr int kTablesPerRequest = 10;
constexpr uint64_t kTableBytes = 64;  // sizeof(GCtab), GC64

// The configuration; the handler's chunk is named after the line its block
// opens at (kHandlerLine).
constexpr int kHandlerLine = 13;
std::string config(const std::string &dir, int port) {
  const std::string modules = kOpenResty + "/usr/lib/nginx/modules/";
  return "load_module " + modules + "ndk_http_module.so;\n"          // 1
         "load_module " + modules + "ngx_http_lua_module.so;\n"      // 2
         "worker_processes 2;\n"                                     // 3
         "daemon off;\n"                                             // 4
         "error_log " + dir + "/error.log;\n"                        // 5
         "pid " + dir + "/nginx.pid;\n"                              // 6
         "events { worker_connections 64; }\n"                       // 7
         "http {\n"                                                  // 8
         "  access_log off;\n"                                       // 9
         "  lua_package_path '" + kOpenResty + "/usr/share/lua/5.1/?.lua;;';\n"  // 10
         "  init_by_lua_block { jit.off() }\n"                       // 11
         "  server { listen 127.0.0.1:" + std::to_string(port) + ";\n"  // 12
         "    location /t { content_by_lua_block {\n"                // 13: the chunk's line 1
         "      local keep = {}\n"                                   // 2
         "      for i = 1, 10 do keep[i] = {} end\n"                 // 3: the tables
         "      local s = 0\n"                                       // 4
         "      for i = 1, 20000 do s = s + i % 7 end\n"             // 5: the spin
         "      ngx.say(#keep, ' ', s)\n"                            // 6
         "    } }\n"
         "  }\n"
         "}\n";
}
const std::string kChunk = "content_by_lua(nginx.conf:" + std::to_string(kHandlerLine) + ")";

struct Nginx {
  TempDir dir{"nginx"};
  int port = free_port();
  pid_t master = -1;

  // Starts the master under the agent (the nginx-light executable, OpenResty's
  // LuaJIT by LD_LIBRARY_PATH); waits until it answers.
  void start() {
    std::ofstream(dir / "nginx.conf") << config(dir.path, port);
    mkdir((dir / "logs").c_str(), 0755);
    // Workers (nobody) write their streams, opened before they drop root,
    // and nginx's temporary folders under the prefix.
    chmod(dir.path.c_str(), 0755);
    master = fork();
    if (master == 0) {
      setenv("LD_PRELOAD", PROF_AGENT_PATH, 1);
      setenv("PROF_OUTPUT", (dir / "prof.%p").c_str(), 1);
      setenv("PROF_CPU", "callgraph", 1);
      // Plain streams: their addresses tell the VM's blocks (luajit_streams.h).
      setenv("PROF_COMPRESS", "0", 1);
      unsetenv("LUA_CPATH");
      exec_openresty_nginx(kOpenResty, dir.path);
    }
    bool up = false;  // (one request answered: the handler ran once)
    for (int i = 0; i < 200 && !(up = answers()); i++) usleep(25000);
    REQUIRE(up);
  }

  bool answers() const {
    const std::string cmd = "ab -q -n 1 http://127.0.0.1:" + std::to_string(port) +
                            "/t 2>/dev/null | grep -q '^Complete requests: *1$'";
    return system(cmd.c_str()) == 0;
  }

  // Ends the master as `nginx -s quit` does; its exit status.
  int quit() {
    kill(master, SIGQUIT);
    int status = 0;
    waitpid(master, &status, 0);
    return status;
  }

  std::vector<std::string> streams(const char *kind) const {
    std::vector<std::string> out;
    const std::string cmd = "ls " + dir.path + "/prof.*." + kind + " 2>/dev/null";
    FILE *p = popen(cmd.c_str(), "r");
    char line[512];
    while (fgets(line, sizeof line, p)) out.emplace_back(line, strcspn(line, "\n"));
    pclose(p);
    return out;
  }
};

struct AbResult {
  long complete = -1, failed = -1, non2xx = 0;
};

AbResult read_ab(const std::string &out) {
  AbResult r;
  std::smatch m;
  if (std::regex_search(out, m, std::regex("Complete requests: *([0-9]+)"))) r.complete = std::stol(m[1]);
  if (std::regex_search(out, m, std::regex("Failed requests: *([0-9]+)"))) r.failed = std::stol(m[1]);
  if (std::regex_search(out, m, std::regex("Non-2xx responses: *([0-9]+)"))) r.non2xx = std::stol(m[1]);
  return r;
}

// `ab -n n -c 8` against the handler; with reload_after_ms >= 0, nginx is
// told to reload (SIGHUP, as `nginx -s reload`) while it runs.
AbResult drive(const Nginx &ngx, int n, int reload_after_ms = -1) {
  const std::string out = ngx.dir / "ab.out";
  const std::string cmd = "ab -q -n " + std::to_string(n) + " -c 8 http://127.0.0.1:" +
                          std::to_string(ngx.port) + "/t > " + out + " 2>&1";
  const pid_t ab = fork();
  if (ab == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char *>(nullptr));
    _exit(127);
  }
  if (reload_after_ms >= 0) {
    usleep(useconds_t(reload_after_ms) * 1000);
    kill(ngx.master, SIGHUP);
  }
  waitpid(ab, nullptr, 0);
  return read_ab(read_text(out));
}

// The samples of a CPU stream taken inside the handler's C entry, and those of
// them that carry the handler's Lua frames (from the analyzer's folded stacks).
std::pair<long, long> handler_samples(const std::string &sysprof) {
  const std::string cmd = std::string(PROF_ANALYZER_PATH) + " folded " + sysprof;
  FILE *p = popen(cmd.c_str(), "r");
  long in_handler = 0, with_lua = 0;
  std::string line;
  char buf[65536];
  while (fgets(buf, sizeof buf, p)) {
    line = buf;
    const long count = std::stol(line.substr(line.rfind(' ') + 1));
    if (line.find("ngx_http_lua_content_by_chunk") == std::string::npos) continue;
    in_handler += count;
    if (line.find(kChunk) != std::string::npos) with_lua += count;
  }
  pclose(p);
  return {in_handler, with_lua};
}

}  // namespace

TEST_CASE("nginx e2e: OpenResty's Lua handler in every worker, memory and CPU, with no edit",
          "[nginx]") {
  Nginx ngx;
  ngx.start();
  const AbResult first = drive(ngx, 3000);
  // Reloading under load: new workers, old ones finish what they serve.
  const AbResult reloaded = drive(ngx, 3000, 300);
  const int status = ngx.quit();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(first.complete == 3000);
  CHECK(first.failed == 0);
  CHECK(first.non2xx == 0);
  CHECK(reloaded.complete == 3000);
  CHECK(reloaded.failed == 0);
  CHECK(reloaded.non2xx == 0);

  // Nothing from the agent or the adapter, in nginx's log or on its stderr.
  const std::string log = read_text(ngx.dir / "error.log"), err = read_text(ngx.dir / "stderr");
  INFO("error.log:\n" << log << "stderr:\n" << err);
  CHECK(log.find("libprof") == std::string::npos);
  CHECK(log.find("prof_luajit") == std::string::npos);
  CHECK(err.find("libprof") == std::string::npos);
  CHECK(err.find("prof_luajit") == std::string::npos);

  // Streams: the master's, two workers before the reload, two after, each
  // complete; the master's child processes are the workers.
  const std::vector<std::string> mem = ngx.streams("memprof");
  std::string master_stream;
  std::vector<std::string> workers;
  for (const std::string &f : mem) {
    const Recorded rec = read_memprof(f);
    INFO(f);
    CHECK_FALSE(rec.truncated);
    CHECK_FALSE(rec.unclean_end);
    if (rec.pid == uint64_t(ngx.master)) master_stream = f;
    else if (rec.ppid == uint64_t(ngx.master)) workers.push_back(f);
  }
  REQUIRE_FALSE(master_stream.empty());
  CHECK(workers.size() == 4);

  // Every request's tables, at the handler's line, in the workers' streams:
  // exactly 10 per request (the JIT is off: one allocation each).
  const std::string site = kChunk + ":3";
  uint64_t tables = 0, handler_bytes = 0, all_handler_bytes = 0;
  for (const std::string &w : workers) {
    const VmStream s = read_vm_stream(w, master_stream);
    INFO(w);
    CHECK(s.count(prof::MemprofRecord::Alloc, site, kTableBytes) > 0);
    tables += s.count(prof::MemprofRecord::Alloc, site, kTableBytes);
    for (const VmEvent &e : s.events) {
      if (e.record == prof::MemprofRecord::Free) continue;
      // The handler's bytes: events whose guest stack passes through it.
      bool in_handler = false;
      for (const std::string &f : e.stack) in_handler |= f.rfind(kChunk + ":", 0) == 0;
      if (!in_handler) continue;
      all_handler_bytes += e.nsize;
      if (e.site.rfind(kChunk + ":", 0) == 0) handler_bytes += e.nsize;
    }
  }
  // (The request that told start() nginx was up ran the handler too.)
  const uint64_t requests = uint64_t(first.complete + reloaded.complete) + 1;
  CHECK(tables == requests * kTablesPerRequest);
  CHECK(handler_bytes * 10 >= all_handler_bytes * 9);

  // CPU: the samples taken in the handler carry its Lua frames.
  long in_handler = 0, with_lua = 0;
  for (const std::string &f : ngx.streams("sysprof")) {
    const auto [h, l] = handler_samples(f);
    in_handler += h;
    with_lua += l;
  }
  INFO(with_lua << " of " << in_handler << " samples in the handler carry its frames");
  CHECK(in_handler > 100);
  CHECK(with_lua * 10 >= in_handler * 8);
}
