// StreamWriter: a fixed buffer in front of a byte sink, through which the agent
// writes what opens its memory stream and the whole CPU stream (the memory
// stream's events go through its event ring, which writes its own bytes out);
// and SpanWriter, the encoders' other Out.
//
// Invariants (callers rely on them, the agent's hot path above all):
// - No allocation: the buffer belongs to the caller.
// - The first failed flush latches the writer: the saved errno is kept, every
//   later put_*() and flush() is a no-op, and the buffer is never touched again
//   (the reference LuaJIT writer keeps writing through a dangling position).
// - A value is never split by a flush in the middle of its encoding, so a cut
//   file always ends on a byte boundary the reader can diagnose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "uleb128.h"

namespace prof {

// Writes all of [data, data+len) or returns false with errno set.
using SinkFn = bool (*)(void *ctx, const uint8_t *data, size_t len);

class StreamWriter {
 public:
  StreamWriter(uint8_t *buf, size_t size, SinkFn sink, void *ctx)
      : buf_(buf), size_(size), sink_(sink), ctx_(ctx) {}

  void put_u8(uint8_t v) {
    if (!reserve(1)) return;
    buf_[pos_++] = v;
  }
  void put_uleb(uint64_t v) {
    if (!reserve(kUleb128Max)) return;
    pos_ += encode_uleb128(v, buf_ + pos_);
  }
  void put_bytes(const void *data, size_t len);
  void put_string(const char *s, size_t len) {
    put_uleb(len);
    put_bytes(s, len);
  }

  bool flush();
  bool failed() const { return failed_; }
  int saved_errno() const { return saved_errno_; }
  uint64_t bytes_flushed() const { return flushed_; }

 private:
  bool reserve(size_t n) {
    if (failed_) return false;
    if (size_ - pos_ >= n) return true;
    return flush() && size_ - pos_ >= n;
  }

  uint8_t *buf_;
  size_t size_;
  size_t pos_ = 0;
  SinkFn sink_;
  void *ctx_;
  uint64_t flushed_ = 0;
  bool failed_ = false;
  int saved_errno_ = 0;
};

// An Out for the encoders that fills a caller-owned array with no checks:
// callers size it for the largest record they encode (kMaxEventBytes,
// kMaxSymbolRecordBytes, the records' kMaxBytes, max_sample_bytes()).
class SpanWriter {
 public:
  explicit SpanWriter(uint8_t *buf) : begin_(buf), pos_(buf) {}
  void put_u8(uint8_t v) { *pos_++ = v; }
  void put_uleb(uint64_t v) { pos_ += encode_uleb128(v, pos_); }
  void put_bytes(const void *data, size_t len) {
    memcpy(pos_, data, len);
    pos_ += len;
  }
  void put_string(const char *s, size_t len) {
    put_uleb(len);
    put_bytes(s, len);
  }
  size_t size() const { return static_cast<size_t>(pos_ - begin_); }
  const uint8_t *data() const { return begin_; }

 protected:
  uint8_t *begin_;
  uint8_t *pos_;
};

// Sink for a file descriptor: retries short writes and EINTR.
bool fd_sink(void *fd_as_ptr, const uint8_t *data, size_t len);

}  // namespace prof
