#include "stream/owned_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "stream/raw_thread.h"
#include "stream/stream_compactor.h"
#include "stream/stream_compressor.h"

namespace prof {
namespace {

// XXX: far enough from the numbers a program opens next that it would need
// hundreds of files open at once to be given it, yet a small table.
constexpr long kHighFd = 512;

long raw_fstat(int fd, struct stat *st) { return raw_syscall3(SYS_fstat, fd, long(st), 0); }
void raw_close(int fd) { raw_syscall3(SYS_close, fd, 0, 0); }

// Whether a regular file `size` bytes long passes RLIMIT_FSIZE.
bool past_size_limit(uint64_t size) {
  rlimit limit{};
  return raw_syscall4(SYS_prlimit64, 0, RLIMIT_FSIZE, 0, long(&limit)) == 0 &&
         limit.rlim_cur != RLIM_INFINITY && size > uint64_t(limit.rlim_cur);
}

}  // namespace

int move_fd_high(int fd) {
  // Under a low limit, near its top: the program's next numbers stay its
  // own, as without the agent (room for the agent's few above).
  constexpr long kRoom = 32;
  long floor = kHighFd;
  rlimit limit{};
  if (raw_syscall4(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, long(&limit)) == 0 &&
      limit.rlim_cur < rlim_t(kHighFd + kRoom))
    floor = limit.rlim_cur > rlim_t(2 * kRoom) ? long(limit.rlim_cur) - kRoom
                                               : long(limit.rlim_cur / 2);
  const long high = raw_syscall3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor);
  if (high < 0) return fd;
  raw_close(fd);
  return int(high);
}

void OwnedFile::adopt(int fd, const char *path) {
  fd_ = move_fd_high(fd);
  written_ = 0;
  lost_ = false;
  by_name_ = false;
  struct stat st {};
  raw_fstat(fd_, &st);
  dev_ = st.st_dev, ino_ = st.st_ino;
  seekable_ = S_ISREG(st.st_mode);
  if (compressor_) compressor_->start();
  if (compactor_) compactor_->start();
  // Absolute, should the program change directory before a reopen.
  size_t n = 0;
  if (path[0] != '/') {
    const long len = raw_syscall3(SYS_getcwd, long(path_), sizeof path_, 0);
    if (len > 1) n = strlen(path_);
    if (n + 1 < sizeof path_) path_[n++] = '/';
  }
  const size_t room = sizeof path_ - n - 1;
  strncpy(path_ + n, path, room);
  path_[sizeof path_ - 1] = 0;
}

// XXX: where stat is refused (a seccomp filter: EPERM, ENOSYS) nothing can
// be told: the file is taken to be as it was.
bool OwnedFile::names_file(int fd) const {
  struct stat st {};
  if (fd < 0) return false;
  const long rc = raw_fstat(fd, &st);
  if (rc == -EPERM || rc == -ENOSYS) return true;
  return rc == 0 && uint64_t(st.st_dev) == dev_ && uint64_t(st.st_ino) == ino_;
}

bool OwnedFile::removed() const {
  struct stat st {};
  if (fd_ < 0 || !seekable_ || raw_fstat(fd_, &st) != 0) return false;
  return uint64_t(st.st_dev) == dev_ && uint64_t(st.st_ino) == ino_ && st.st_nlink == 0;
}

bool OwnedFile::name_names_file() const {
  struct stat st {};
  const long rc =
      raw_syscall4(SYS_newfstatat, AT_FDCWD, long(path_), long(&st), AT_SYMLINK_NOFOLLOW);
  if (rc == -EPERM || rc == -ENOSYS) return true;
  return rc == 0 && uint64_t(st.st_dev) == dev_ && uint64_t(st.st_ino) == ino_;
}

long OwnedFile::reopen() {
  const long fd = raw_syscall3(SYS_openat, AT_FDCWD, long(path_), O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return fd;
  if (!names_file(int(fd))) {  // another file now has the name
    raw_close(int(fd));
    return -ESTALE;
  }
  if (seekable_) {
    const long at = raw_syscall3(SYS_lseek, fd, long(written_), SEEK_SET);
    if (at < 0) {
      raw_close(int(fd));
      return at;
    }
  }
  return move_fd_high(int(fd));
}

void OwnedFile::keep_compactor_table_in(TableFile *file) {
  if (compactor_) compactor_->keep_table_in(file);
}

void OwnedFile::events_follow() {
  if (compactor_) compactor_->arm();
}

long OwnedFile::write_all(const uint8_t *data, size_t len) {
  if (compactor_) return compactor_->put(data, len, next_sink(), this);
  return next_sink()(this, data, len);
}

OwnedFile::Sink OwnedFile::next_sink() const {
  return compressor_ ? compress_to : write_bytes_to;
}

long OwnedFile::compress_to(void *file, const uint8_t *data, size_t len) {
  OwnedFile *f = static_cast<OwnedFile *>(file);
  return f->compressor_->put(data, len, StreamCompressor::Mode::Continue, write_bytes_to, f);
}

long OwnedFile::drain_compactor() { return compactor_ ? compactor_->flush(next_sink(), this) : 0; }

long OwnedFile::sync() {
  if (const long rc = drain_compactor(); rc < 0 || !compressor_) return rc;
  return compressor_->put(nullptr, 0, StreamCompressor::Mode::Sync, write_bytes_to, this);
}

long OwnedFile::end() {
  if (const long rc = drain_compactor(); rc < 0 || !compressor_) return rc;
  return compressor_->put(nullptr, 0, StreamCompressor::Mode::End, write_bytes_to, this);
}

long OwnedFile::write_bytes_to(void *file, const uint8_t *data, size_t len) {
  return static_cast<OwnedFile *>(file)->write_bytes(data, len);
}

long OwnedFile::write_bytes(const uint8_t *data, size_t len) {
  if (lost_ || fd_ < 0) return -EBADF;
  const bool held = names_file(fd_);
  if (!held || (by_name_ && !name_names_file())) {
    // The program closed it (its number may be one of the program's files
    // now, which stays as it is), or, since then, removed or replaced the
    // name: the file again, by its path.
    const long fd = reopen();
    if (fd < 0) {
      lost_ = true;
      if (!held) fd_ = -1;  // (else close() closes it)
      return fd;
    }
    if (held) raw_close(fd_);
    fd_ = int(fd);
    by_name_ = true;
  }
  // XXX: a write past RLIMIT_FSIZE raises SIGXFSZ, whose default kills
  // the program, and a sampling signal's handler cannot block it: the
  // same error, without the signal.
  if (seekable_ && past_size_limit(written_ + len)) return -EFBIG;
  const long rc = raw_write_all(fd_, data, len);
  if (rc == 0) __atomic_store_n(&written_, written_ + len, __ATOMIC_RELAXED);
  return rc;
}

bool owned_file_sink(void *file, const uint8_t *data, size_t len) {
  const long rc = static_cast<OwnedFile *>(file)->write_all(data, len);
  if (rc < 0) errno = int(-rc);
  return rc == 0;
}

void OwnedFile::close() {
  if (names_file(fd_)) raw_close(fd_);
  fd_ = -1;
}

}  // namespace prof
