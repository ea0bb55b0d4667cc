// exec_openresty_nginx(): in a forked child, execs Debian's nginx-light with
// OpenResty's LuaJIT (LD_LIBRARY_PATH) on the configuration dir/nginx.conf,
// prefix dir, its stdout and stderr into dir/stderr (nginx_e2e, attach_e2e).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

[[noreturn]] inline void exec_openresty_nginx(const std::string &openresty, const std::string &dir) {
  setenv("LD_LIBRARY_PATH", (openresty + "/usr/lib/x86_64-linux-gnu").c_str(), 1);
  const int err = open((dir + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(err, 2);
  dup2(err, 1);
  execlp("nginx", "nginx", "-p", dir.c_str(), "-e", (dir + "/error.log").c_str(), "-c",
         (dir + "/nginx.conf").c_str(), static_cast<char *>(nullptr));
  _exit(127);
}
