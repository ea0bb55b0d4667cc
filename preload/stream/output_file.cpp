#include "stream/output_file.h"

#include <cerrno>
#include <errno.h>  // program_invocation_short_name
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/owned_file.h"

namespace prof {
namespace {

// Writes the decimal digits of v at out (which has room); returns their count.
size_t put_decimal(uint64_t v, char *out) {
  char tmp[24];
  size_t n = 0;
  do tmp[n++] = char('0' + v % 10); while ((v /= 10) != 0);
  for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
  return n;
}

}  // namespace

bool expand_output_path(const char *tmpl, pid_t pid, const char *suffix, char *out,
                        size_t cap) {
  size_t n = 0;
  auto room = [&](size_t k) { return n + k < cap; };
  for (const char *p = tmpl; *p; p++) {
    if (p[0] == '%' && p[1] == 'e') {
      // The program's name as it was started (argv[0]'s last part), kept to
      // characters that need no quoting in a shell.
      const char *name = program_invocation_short_name;
      for (size_t i = 0; name && name[i] && i < 64; i++) {
        if (!room(1)) return false;
        const char c = name[i];
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' || c == '+';
        out[n++] = plain ? c : '_';
      }
      p++;
    } else if (p[0] == '%' && p[1] == 'p') {
      if (!room(24)) return false;
      n += put_decimal(uint64_t(pid), out + n);
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      if (!room(1)) return false;
      out[n++] = '%';
      p++;
    } else {
      if (!room(1)) return false;
      out[n++] = *p;
    }
  }
  const size_t slen = strlen(suffix);
  if (!room(slen + 1)) return false;
  out[n++] = '.';
  memcpy(out + n, suffix, slen);
  out[n + slen] = 0;
  return true;
}

int create_output_file(const char *tmpl, pid_t pid, const char *suffix, char *path_out,
                       size_t cap) {
  struct stat st;
  if (stat(tmpl, &st) == 0 && S_ISCHR(st.st_mode) && strlen(tmpl) < cap) {
    // XXX: /dev/null or /dev/full: measure overhead, or test a full disk.
    memcpy(path_out, tmpl, strlen(tmpl) + 1);
    return open(tmpl, O_WRONLY | O_CLOEXEC);
  }
  if (!expand_output_path(tmpl, pid, suffix, path_out, cap)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  const size_t base = strlen(path_out);
  for (unsigned attempt = 0; attempt < 1000; attempt++) {
    if (attempt > 0) {
      if (base + 12 >= cap) {
        errno = ENAMETOOLONG;
        return -1;
      }
      path_out[base] = '.';
      path_out[base + 1 + put_decimal(attempt, path_out + base + 1)] = 0;
    }
    int fd = open(path_out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

int create_ring_file(const char *stream_path, char *path_out, size_t cap) {
  const size_t n = strlen(stream_path);
  if (n + sizeof ".ring" > cap) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(path_out, stream_path, n);
  memcpy(path_out + n, ".ring", sizeof ".ring");
  // XXX: the stream's name was free, so a ring file of that name is a
  // leftover of a stream removed since, never ours to read: replaced.
  unlink(path_out);
  const int fd = open(path_out, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  return fd < 0 ? fd : move_fd_high(fd);
}

}  // namespace prof
