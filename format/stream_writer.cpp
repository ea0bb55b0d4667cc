#include "stream_writer.h"

#include <cerrno>
#include <cstdint>
#include <unistd.h>

namespace prof {

void StreamWriter::put_bytes(const void *data, size_t len) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  while (len > 0 && !failed_) {
    if (pos_ == size_ && !flush()) return;
    size_t n = size_ - pos_ < len ? size_ - pos_ : len;
    memcpy(buf_ + pos_, p, n);
    pos_ += n;
    p += n;
    len -= n;
  }
}

bool StreamWriter::flush() {
  if (failed_) return false;
  if (pos_ == 0) return true;
  if (!sink_(ctx_, buf_, pos_)) {
    saved_errno_ = errno;
    failed_ = true;
    return false;
  }
  flushed_ += pos_;
  pos_ = 0;
  return true;
}

bool fd_sink(void *fd_as_ptr, const uint8_t *data, size_t len) {
  const int fd = static_cast<int>(reinterpret_cast<intptr_t>(fd_as_ptr));
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace prof
