#include "inheritance.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "agent.h"

namespace prof {
namespace {

bool fail(const char *what, const char *value) {
  say(what, value, ": ", errno_text(errno), "; profiling disabled");
  return false;
}

// PROF_FOLLOW=0:<pid> names this process the one to record.
bool pin_root_pid(Config *cfg) {
  cfg->root_pid = int32_t(getpid());
  char digits[12], value[16] = "0:";
  size_t n = 0;
  for (uint32_t v = uint32_t(cfg->root_pid); v; v /= 10) digits[n++] = char('0' + v % 10);
  for (size_t i = 0; i < n; i++) value[2 + i] = digits[n - 1 - i];
  value[2 + n] = 0;
  return setenv("PROF_FOLLOW", value, 1) == 0 || fail("cannot set PROF_FOLLOW=", value);
}

// The working directory, a '/' and the relative template.
bool pin_absolute_output(Config *cfg) {
  char cwd[sizeof cfg->output], path[sizeof cfg->output];
  if (!getcwd(cwd, sizeof cwd)) {
    if (errno == ERANGE) errno = ENAMETOOLONG;
    return fail("cannot make absolute PROF_OUTPUT=", cfg->output);
  }
  // XXX: a '%' in the directory's name is doubled, lest it read as %p.
  size_t len = 0;
  const char *c = cwd;
  for (; *c && len + 2 < sizeof path; c++) {
    if (*c == '%') path[len++] = '%';
    path[len++] = *c;
  }
  if (path[len - 1] != '/') path[len++] = '/';
  const size_t tail = strlen(cfg->output);
  if (*c || len + tail + 1 > sizeof path) {
    errno = ENAMETOOLONG;
    return fail("cannot make absolute PROF_OUTPUT=", cfg->output);
  }
  memcpy(path + len, cfg->output, tail + 1);
  if (setenv("PROF_OUTPUT", path, 1) != 0) return fail("cannot set PROF_OUTPUT=", path);
  memcpy(cfg->output, path, len + tail + 1);
  return true;
}

}  // namespace

bool records_here(const Config &cfg) {
  return cfg.follow_children || cfg.root_pid == 0 || cfg.root_pid == int32_t(getpid());
}

bool pin_inherited_settings(Config *cfg) {
  if (!cfg->follow_children && cfg->root_pid == 0 && !pin_root_pid(cfg)) return false;
  return cfg->output[0] == '/' || pin_absolute_output(cfg);
}

}  // namespace prof
