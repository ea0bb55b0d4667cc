#include "zstd_input.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <unistd.h>
#include <zstd.h>

namespace prof {

bool has_zstd_magic(const uint8_t *data, size_t size) {
  return size >= sizeof kZstdMagic && memcmp(data, kZstdMagic, sizeof kZstdMagic) == 0;
}

ZstdInput::ZstdInput(int fd, const uint8_t *head, size_t seen)
    : fd_(fd), dctx_(ZSTD_createDCtx()) {
  if (!dctx_) throw std::bad_alloc();
  ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, kMaxWindowLog);
  in_ = new uint8_t[kReadSize > seen ? kReadSize : seen];
  memcpy(in_, head, seen);
  in_end_ = seen;
}

ZstdInput::~ZstdInput() {
  ZSTD_freeDCtx(dctx_);
  delete[] in_;
}

bool ZstdInput::refill() {
  if (eof_ || !error_.empty()) return false;
  consumed_ += in_end_;
  in_pos_ = in_end_ = 0;
  for (;;) {
    const uint64_t left = limit_ > consumed_ ? limit_ - consumed_ : 0;
    const ssize_t n = ::read(fd_, in_, left < kReadSize ? size_t(left) : kReadSize);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error_ = std::string("read failed: ") + strerror(errno);
      return false;
    }
    if (n == 0) eof_ = true;
    in_end_ = size_t(n);
    return n > 0;
  }
}

size_t ZstdInput::read(uint8_t *out, size_t cap) {
  ZSTD_outBuffer o{out, cap, 0};
  while (o.pos == 0 && error_.empty()) {
    if (in_pos_ == in_end_ && !refill()) {
      // XXX: a block zstd holds back until it sees more input is flushed by
      // a call with none: one more try before calling it the end.
      ZSTD_inBuffer none{in_, 0, 0};
      const size_t rc = ZSTD_decompressStream(dctx_, &o, &none);
      if (ZSTD_isError(rc) || o.pos == 0) break;
      continue;
    }
    ZSTD_inBuffer i{in_, in_end_, in_pos_};
    const size_t rc = ZSTD_decompressStream(dctx_, &o, &i);
    if (ZSTD_isError(rc)) {
      error_ = std::string("zstd: ") + ZSTD_getErrorName(rc) + " (compressed byte " +
               std::to_string(consumed_ + in_pos_) + ")";
      return 0;
    }
    in_pos_ = i.pos;
  }
  return o.pos;
}

}  // namespace prof
