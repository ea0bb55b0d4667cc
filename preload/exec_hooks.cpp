// exec*() and _exit() end the process image without running destructors:
// finish the stream first, so the events before them reach the file and end
// with an epilogue (quick_exit() too: lifecycle.cpp registers the
// finishing with at_quick_exit at start, so that it runs after the
// program's own); and exit() from several threads at once must not end the
// process before the stream. After exec the new image loads the agent
// again (LD_PRELOAD is inherited) and writes its own file; the pid is the
// same, so it gets the ".1" name. daemon()'s parent leaves through glibc's
// own _exit, which no hook sees: daemon() is done here, as glibc does it.
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "agent.h"
#include "next_symbol.h"

namespace prof {
void finish_stream();  // lifecycle.cpp
}

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// Collects execl-style arguments (NULL-terminated) into argv; false if too many.
bool collect(const char *arg0, va_list ap, char **argv, size_t cap, char ***envp) {
  size_t n = 0;
  argv[n++] = const_cast<char *>(arg0);
  while (arg0 && (argv[n] = va_arg(ap, char *)) != nullptr)
    if (++n == cap) return false;
  if (envp) *envp = va_arg(ap, char **);
  return true;
}

constexpr size_t kMaxArgs = 4096;

}  // namespace

EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
  prof::finish_stream();
  static std::atomic<int (*)(const char *, char *const[], char *const[])> real;
  return prof::next_symbol("execve", real)(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[]) {
  prof::finish_stream();
  static std::atomic<int (*)(const char *, char *const[])> real;
  return prof::next_symbol("execv", real)(path, argv);
}

EXPORT int execvp(const char *file, char *const argv[]) {
  prof::finish_stream();
  static std::atomic<int (*)(const char *, char *const[])> real;
  return prof::next_symbol("execvp", real)(file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
  prof::finish_stream();
  static std::atomic<int (*)(const char *, char *const[], char *const[])> real;
  return prof::next_symbol("execvpe", real)(file, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
  prof::finish_stream();
  static std::atomic<int (*)(int, char *const[], char *const[])> real;
  return prof::next_symbol("fexecve", real)(fd, argv, envp);
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                    int flags) {
  prof::finish_stream();
  static std::atomic<int (*)(int, const char *, char *const[], char *const[], int)> real;
  return prof::next_symbol("execveat", real)(dirfd, path, argv, envp, flags);
}

EXPORT int execl(const char *path, const char *arg, ...) {
  char *argv[kMaxArgs];
  va_list ap;
  va_start(ap, arg);
  const bool ok = collect(arg, ap, argv, kMaxArgs, nullptr);
  va_end(ap);
  if (!ok) return errno = E2BIG, -1;
  return execv(path, argv);
}

EXPORT int execlp(const char *file, const char *arg, ...) {
  char *argv[kMaxArgs];
  va_list ap;
  va_start(ap, arg);
  const bool ok = collect(arg, ap, argv, kMaxArgs, nullptr);
  va_end(ap);
  if (!ok) return errno = E2BIG, -1;
  return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...) {
  char *argv[kMaxArgs];
  char **envp = nullptr;
  va_list ap;
  va_start(ap, arg);
  const bool ok = collect(arg, ap, argv, kMaxArgs, &envp);
  va_end(ap);
  if (!ok) return errno = E2BIG, -1;
  return execve(path, argv, envp);
}

// XXX: glibc (before 2.41) lets a second thread's exit() reach exit_group
// while the first still runs the exit handlers and the agent's destructor,
// killing it in the middle of writing the streams: an exit() on another
// thread than the first finishes them before it goes on (a nested exit() in
// an exit handler, on the first's thread, does not).
EXPORT void exit(int status) {
  static std::atomic<uint64_t> first{0};  // pid << 32 | tid of the first caller
  const uint64_t pid = uint64_t(getpid());
  const uint64_t me = pid << 32 | uint32_t(syscall(SYS_gettid));
  uint64_t seen = first.load();
  while (seen >> 32 != pid && !first.compare_exchange_weak(seen, me)) {
  }
  if (seen >> 32 == pid && seen != me) prof::finish_stream();
  static std::atomic<void (*)(int)> real;
  prof::next_symbol("exit", real)(status);
  __builtin_unreachable();
}

EXPORT void _exit(int status) {
  prof::finish_stream();
  static std::atomic<void (*)(int)> real;
  prof::next_symbol("_exit", real)(status);
  __builtin_unreachable();
}

EXPORT void _Exit(int status) { _exit(status); }

// glibc's misc/daemon.c, step for step (its errors and errno included), but
// the parent leaves through the hooked _exit: its stream then ends cleanly
// instead of as a killed process's. The child's stream starts in fork().
EXPORT int daemon(int nochdir, int noclose) {
  switch (fork()) {
    case -1:
      return -1;
    case 0:
      break;
    default:
      _exit(0);
  }
  if (setsid() == -1) return -1;
  if (!nochdir) (void)chdir("/");
  if (noclose) return 0;
  const int fd = open("/dev/null", O_RDWR);
  struct stat st;
  if (fd == -1 || fstat(fd, &st) != 0) {
    const int err = errno;
    if (fd != -1) close(fd);
    errno = err;
    return -1;
  }
  // Linux's /dev/null is character device 1, 3.
  if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
    close(fd);
    errno = ENODEV;
    return -1;
  }
  (void)dup2(fd, STDIN_FILENO);
  (void)dup2(fd, STDOUT_FILENO);
  (void)dup2(fd, STDERR_FILENO);
  if (fd > 2) close(fd);
  return 0;
}
