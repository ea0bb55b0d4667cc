#include "config.h"

#include <csignal>
#include <cstring>

namespace prof {
namespace {

// The value of name, or nullptr when unset or empty (a shell's `PROF_CPU=
// cmd` means no setting, not a bad one).
const char *find_env(char **envp, const char *name) {
  const size_t n = strlen(name);
  for (char **e = envp; e && *e; e++)
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return (*e)[n + 1] ? *e + n + 1 : nullptr;
  return nullptr;
}

// Appends src to dst (capacity cap) without stdio.
void append(char *dst, size_t cap, const char *src) {
  size_t len = strlen(dst);
  while (*src && len + 1 < cap) dst[len++] = *src++;
  dst[len] = 0;
}

bool invalid(Config *cfg, const char *name, const char *value, const char *expected) {
  cfg->error[0] = 0;
  append(cfg->error, sizeof cfg->error, "invalid ");
  append(cfg->error, sizeof cfg->error, name);
  append(cfg->error, sizeof cfg->error, "='");
  append(cfg->error, sizeof cfg->error, value);
  append(cfg->error, sizeof cfg->error, "' (expected ");
  append(cfg->error, sizeof cfg->error, expected);
  append(cfg->error, sizeof cfg->error, ")");
  return false;
}

// Parses digits then an optional unit suffix from `units` (name, multiplier).
struct Unit {
  const char *suffix;
  uint64_t scale;
};
bool parse_number(const char *s, const Unit *units, size_t nunits, uint64_t *out) {
  if (!*s) return false;
  uint64_t v = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + uint64_t(*p - '0');
  }
  if (p == s) return false;
  if (!*p) {
    *out = v;
    return true;
  }
  for (size_t i = 0; i < nunits; i++) {
    if (strcmp(p, units[i].suffix) == 0) {
      if (units[i].scale && v > UINT64_MAX / units[i].scale) return false;
      *out = v * units[i].scale;
      return true;
    }
  }
  return false;
}

bool parse_bool(const char *s, bool *out) {
  if (!strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "on")) return *out = true, true;
  if (!strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "off")) return *out = false, true;
  return false;
}

// 0|1, or 0:<pid> as the agent rewrites 0 (inheritance.h).
bool parse_follow(const char *s, Config *cfg) {
  uint64_t pid;
  if (s[0] == '0' && s[1] == ':') {
    if (!parse_number(s + 2, nullptr, 0, &pid) || pid < 1 || pid > INT32_MAX) return false;
    cfg->follow_children = false;
    cfg->root_pid = int32_t(pid);
    return true;
  }
  return parse_bool(s, &cfg->follow_children);
}

// A signal a handler can catch: not SIGKILL or SIGSTOP, nor the two below
// SIGRTMIN that glibc keeps for itself (its sigaction refuses them).
bool parse_catchable_signal(const char *s, int *out) {
  uint64_t v;
  if (!parse_number(s, nullptr, 0, &v) || v < 1 || v >= uint64_t(NSIG)) return false;
  if (v == SIGKILL || v == SIGSTOP || (v >= 32 && v < uint64_t(SIGRTMIN))) return false;
  *out = int(v);
  return true;
}
constexpr const char *kCatchableSignal = "a signal a handler can catch: 1..64 but 9, 19, 32, 33";

// Sets *out to the enum value whose name (by position in `names`) is s.
template <class Enum>
bool parse_choice(const char *s, const char *const *names, size_t n, Enum *out) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(s, names[i])) return *out = static_cast<Enum>(i), true;
  return false;
}

}  // namespace

bool parse_config(char **envp, Config *cfg) {
  static const Unit kBytes[] = {{"k", 1024}, {"K", 1024}, {"m", 1 << 20}, {"M", 1 << 20}};
  const char *v;

  if ((v = find_env(envp, "PROF_MEMORY")) && !parse_bool(v, &cfg->memory))
    return invalid(cfg, "PROF_MEMORY", v, "0 or 1");
  if ((v = find_env(envp, "PROF_MMAP")) && !parse_bool(v, &cfg->mmap))
    return invalid(cfg, "PROF_MMAP", v, "0 or 1");
  if ((v = find_env(envp, "PROF_FREE_STACKS")) && !parse_bool(v, &cfg->free_stacks))
    return invalid(cfg, "PROF_FREE_STACKS", v, "0 or 1");
  if ((v = find_env(envp, "PROF_COMPRESS")) && !parse_bool(v, &cfg->compress))
    return invalid(cfg, "PROF_COMPRESS", v, "0 or 1");
  if ((v = find_env(envp, "PROF_LUA")) && !parse_bool(v, &cfg->lua))
    return invalid(cfg, "PROF_LUA", v, "0 or 1");
  if ((v = find_env(envp, "PROF_FOLLOW")) && !parse_follow(v, cfg))
    return invalid(cfg, "PROF_FOLLOW", v, "0 or 1");
  if ((v = find_env(envp, "PROF_UNWIND"))) {
    if (strcmp(v, "fast") && strcmp(v, "libunwind"))
      return invalid(cfg, "PROF_UNWIND", v, "fast or libunwind");
    cfg->rule_walk = !strcmp(v, "fast");
  }
  if ((v = find_env(envp, "PROF_CPU"))) {
    static const char *const kModes[] = {"off", "default", "leaf", "callgraph"};
    // As the other switches: 0 is off, and 1 the whole stacks users mean.
    bool on;
    if (parse_bool(v, &on))
      cfg->cpu = on ? CpuMode::Callgraph : CpuMode::Off;
    else if (!parse_choice(v, kModes, 4, &cfg->cpu))
      return invalid(cfg, "PROF_CPU", v, "off, default, leaf or callgraph, or 0 or 1");
  }
  if ((v = find_env(envp, "PROF_CPU_BACKEND"))) {
    static const char *const kBackends[] = {"auto", "perf", "timer", "itimer"};
    if (!parse_choice(v, kBackends, 4, &cfg->cpu_backend))
      return invalid(cfg, "PROF_CPU_BACKEND", v, "auto, perf, timer or itimer");
  }
  if ((v = find_env(envp, "PROF_INTERVAL"))) {
    static const Unit kTime[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
    uint64_t ns;
    // XXX: no shorter than 100us: on a VM a sample's signal can take nearly
    // as long, and shorter periods left the program almost none of its CPU.
    if (!parse_number(v, kTime, 4, &ns) || ns < 100000 || ns > 10000000000ull)
      return invalid(cfg, "PROF_INTERVAL", v, "100us..10s, e.g. 1ms, 500us");
    cfg->interval_ns = ns;
  }
  if ((v = find_env(envp, "PROF_CPU_SIGNAL")) && !parse_catchable_signal(v, &cfg->cpu_signal))
    return invalid(cfg, "PROF_CPU_SIGNAL", v, kCatchableSignal);
  if (v && cfg->cpu_backend == CpuBackend::Itimer && cfg->cpu_signal != SIGPROF)
    return invalid(cfg, "PROF_CPU_SIGNAL", v, "SIGPROF with PROF_CPU_BACKEND=itimer, which sends no other");
  if ((v = find_env(envp, "PROF_DEPTH"))) {
    uint64_t d;
    if (!parse_number(v, nullptr, 0, &d) || d < 1 || d > 1024)
      return invalid(cfg, "PROF_DEPTH", v, "1..1024");
    cfg->max_depth = unsigned(d);
  }
  if ((v = find_env(envp, "PROF_SAMPLE_BYTES")) &&
      !parse_number(v, kBytes, 4, &cfg->sample_bytes))
    return invalid(cfg, "PROF_SAMPLE_BYTES", v, "bytes, e.g. 512k; 0 records every event");
  if ((v = find_env(envp, "PROF_TOGGLE_SIGNAL")) &&
      !parse_catchable_signal(v, &cfg->toggle_signal))
    return invalid(cfg, "PROF_TOGGLE_SIGNAL", v, kCatchableSignal);
  if ((v = find_env(envp, "PROF_OUTPUT"))) {
    if (strlen(v) + 1 > sizeof cfg->output)
      return invalid(cfg, "PROF_OUTPUT", v, "a path template shorter than 512 bytes");
    cfg->output[0] = 0;
    append(cfg->output, sizeof cfg->output, v);
  }
  return true;
}

}  // namespace prof
