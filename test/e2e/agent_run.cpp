#include "agent_run.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include "memprof.h"
#include "ring_file.h"

std::string read_text(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TempDir agent_dir_for_other_users(const std::string &kind) {
  if (geteuid() != 0) {
    std::fprintf(stderr, "SKIPPED: running as another user needs root\n");
    std::exit(4);
  }
  TempDir dir(kind);
  if (chmod(dir.path.c_str(), 0777) != 0) throw std::runtime_error("chmod " + dir.path);
  copy_file(PROF_AGENT_PATH, dir / "libprof.so", 0755);
  return dir;
}

bool is_stream_name(const char *name, const char *kind) {
  const size_t n = strlen(name);
  return strstr(name, kind) && !(n >= 5 && strcmp(name + n - 5, ".ring") == 0);
}

std::vector<std::string> memprof_files_in(const std::string &dir) {
  std::vector<std::string> files;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (is_stream_name(e->d_name, ".memprof")) files.push_back(dir + "/" + e->d_name);
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

RunResult run(const std::vector<std::string> &argv, const std::vector<std::string> &env,
              const char *agent) {
  RunResult r;
  const std::string out = r.dir / "stdout", err = r.dir / "stderr";
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<std::string> envs;
    for (char **e = environ; *e; e++)
      if (strncmp(*e, "LD_PRELOAD=", 11) && strncmp(*e, "PROF_", 5)) envs.push_back(*e);
    if (agent) {
      envs.push_back(std::string("LD_PRELOAD=") + agent);
      const bool own_output = std::any_of(env.begin(), env.end(), [](const std::string &e) {
        return e.rfind("PROF_OUTPUT=", 0) == 0;
      });
      if (!own_output) envs.push_back("PROF_OUTPUT=" + r.dir / "prof.%p");
      envs.insert(envs.end(), env.begin(), env.end());
    }
    std::vector<char *> cargv, cenv;
    for (const auto &a : argv) cargv.push_back(const_cast<char *>(a.c_str()));
    for (const auto &e : envs) cenv.push_back(const_cast<char *>(e.c_str()));
    cargv.push_back(nullptr);
    cenv.push_back(nullptr);
    // The program starts with 0, 1 and 2 alone, as from a shell.
    for (const auto &to : {std::make_pair(out, 1), std::make_pair(err, 2)}) {
      const int fd = open(to.first.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, to.second);
      close(fd);
    }
    execvpe(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  while (waitpid(-1, nullptr, __WALL) > 0) {
  }
  r.out = read_text(out);
  r.err = read_text(err);
  if (DIR *d = opendir(r.dir.path.c_str())) {
    while (dirent *e = readdir(d)) {
      if (is_stream_name(e->d_name, ".memprof")) r.memprof_files.push_back(r.dir / e->d_name);
      if (is_stream_name(e->d_name, ".sysprof")) r.sysprof_files.push_back(r.dir / e->d_name);
      if (strstr(e->d_name, ".ring")) r.ring_files.push_back(r.dir / e->d_name);
    }
    closedir(d);
  }
  std::sort(r.memprof_files.begin(), r.memprof_files.end());
  std::sort(r.sysprof_files.begin(), r.sysprof_files.end());
  return r;
}

}  // namespace

RunResult run_under_agent(const std::vector<std::string> &argv,
                          const std::vector<std::string> &env) {
  return run(argv, env, PROF_AGENT_PATH);
}

RunResult run_under(const std::string &agent, const std::vector<std::string> &argv,
                    const std::vector<std::string> &env) {
  return run(argv, env, agent.c_str());
}

RunResult run_bare(const std::vector<std::string> &argv) { return run(argv, {}, nullptr); }

std::vector<uint64_t> Recorded::frames(uint64_t id) const {
  std::vector<uint64_t> out;
  while (id && out.size() < 4096) {
    auto it = nodes.find(id);
    if (it == nodes.end()) break;
    out.push_back(it->second.second);
    id = it->second.first;
  }
  return out;
}

Recorded read_memprof(const std::string &path) {
  Recorded rec;
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  prof::RingTail tail;
  const bool ring = prof::ring_tail(path, &tail);
  prof::ByteReader in(fd, ring ? tail.file_bytes : ~uint64_t(0), std::move(tail.records));
  struct Block {
    uint64_t size;
  };
  std::map<uint64_t, std::vector<Block>> live;  // oldest first
  auto take = [&](uint64_t addr, Block *b) {
    auto it = live.find(addr);
    if (it == live.end()) return false;
    *b = it->second.front();
    it->second.erase(it->second.begin());
    if (it->second.empty()) live.erase(it);
    return true;
  };
  try {
    prof::SymtabReader symtab(in);
    prof::Symbol sym;
    while (symtab.next(sym)) {
    }
    prof::MemprofReader reader(in);
    prof::MemprofEvent ev;
    while (reader.next(ev)) {
      if (ev.record == prof::MemprofRecord::Ext) {
        const prof::ExtRecord &x = ev.ext;
        if (const auto *p = std::get_if<prof::ext::Process>(&x))
          rec.pid = p->pid, rec.ppid = p->ppid;
        if (const auto *m = std::get_if<prof::ext::ModuleLoad>(&x)) rec.modules.push_back(*m);
        if (const auto *h = std::get_if<prof::ext::HeapTotal>(&x)) rec.heap_totals.push_back(*h);
        if (const auto *u = std::get_if<prof::ext::ModuleUnload>(&x)) rec.unloads.push_back(*u);
        if (const auto *s = std::get_if<prof::ext::Stats>(&x)) rec.stats.push_back(*s);
        if (const auto *e = std::get_if<prof::ext::UncleanEnd>(&x))
          rec.unclean_end = true, rec.lost_bytes = e->lost_bytes;
        if (const auto *n = std::get_if<prof::ext::StackHost>(&x))
          rec.nodes[n->id] = {n->parent, n->ip};
        if (const auto *g = std::get_if<prof::ext::StackGuest>(&x)) rec.guest_nodes[g->id] = *g;
        continue;
      }
      if (ev.record == prof::MemprofRecord::Symbol) {
        rec.symbols[ev.symbol.addr] = ev.symbol.name;
        continue;
      }
      rec.events++;
      Block b{};
      if (ev.record != prof::MemprofRecord::Alloc) {
        if (take(ev.oaddr, &b))
          rec.frees_by_size[b.size]++;
        else
          rec.unknown_frees++;
      }
      if (ev.record != prof::MemprofRecord::Free) {
        rec.allocs_by_size[ev.nsize]++;
        rec.stacks_by_size[ev.nsize].push_back(ev.host_stack);
        rec.guest_stacks_by_size[ev.nsize].push_back(ev.guest_stack);
        rec.locs_by_size[ev.nsize].push_back(ev.loc);
        live[ev.naddr].push_back(Block{ev.nsize});
      }
    }
  } catch (const prof::FormatError &e) {
    close(fd);
    if (!e.truncated()) throw;
    rec.truncated = true;
  }
  close(fd);
  for (const auto &kv : live)
    for (const Block &b : kv.second) rec.leaks_by_size[b.size]++;
  return rec;
}

ForkedRun read_forked(const RunResult &r) {
  if (r.memprof_files.size() != 2)
    throw std::runtime_error(std::to_string(r.memprof_files.size()) + " memprof files, not 2");
  Recorded a = read_memprof(r.memprof_files[0]), b = read_memprof(r.memprof_files[1]);
  if (a.ppid == b.pid) return ForkedRun{std::move(b), std::move(a)};
  return ForkedRun{std::move(a), std::move(b)};
}

uint64_t count_at(const std::map<uint64_t, uint64_t> &by_size, uint64_t key) {
  auto it = by_size.find(key);
  return it == by_size.end() ? 0 : it->second;
}

Recorded read_only_memprof(const RunResult &r) {
  if (r.memprof_files.size() != 1)
    throw std::runtime_error(std::to_string(r.memprof_files.size()) + " memprof files, not 1");
  return read_memprof(r.memprof_files[0]);
}

int64_t stat_counter(const Recorded &rec, const std::string &name) {
  for (const auto &x : rec.stats)
    for (const auto &c : x.counters)
      if (c.name == name) return int64_t(c.value);
  return -1;
}
