// ByteReader: bounded, buffered reading of an untrusted stream, with the byte
// offset of every failure.
//
// Invariants:
// - Memory is constant: one fixed buffer whatever the input size; strings are
//   read piecewise, so an allocation never exceeds the bytes actually present
//   (and never the caller's cap), whatever a length field claims.
// - Every failure throws FormatError carrying the absolute offset at which the
//   offending value starts. `truncated` tells "the input ended inside a value"
//   (a killed writer) apart from "the bytes are wrong" (corruption).
// - A descriptor is read as a plain stream or, starting with zstd's magic,
//   decompressed on the fly (zstd_input.h): offsets then count the
//   decompressed stream's bytes, and a cut compressed file reads as a cut
//   stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "uleb128.h"

namespace prof {

class FormatError : public std::runtime_error {
 public:
  FormatError(uint64_t offset, bool truncated, const std::string &reason);
  uint64_t offset() const { return offset_; }
  bool truncated() const { return truncated_; }
  const std::string &reason() const { return reason_; }

 private:
  uint64_t offset_;
  bool truncated_;
  std::string reason_;
};

// "0x1f": how errors name a bad header byte.
std::string hex_byte(uint8_t b);
// Lowercase hex digits of raw bytes, two a byte (build-ids).
std::string hex_bytes(const std::string &raw);

class ZstdInput;

class ByteReader {
 public:
  // Reads a file descriptor it does not own, plain or zstd-compressed.
  explicit ByteReader(int fd);
  // Reads the first `limit` bytes of fd (as above), then the plain bytes
  // `after`: a stream and its ring file's records (ring_file.h).
  ByteReader(int fd, uint64_t limit, std::string after);
  // Reads caller-owned memory (tests, fuzzing); offsets count from base_offset.
  ByteReader(const uint8_t *data, size_t size, uint64_t base_offset = 0);
  ByteReader(const ByteReader &) = delete;
  ByteReader &operator=(const ByteReader &) = delete;
  ~ByteReader();

  uint8_t u8() { return pos_ < end_ ? buf_[pos_++] : u8_refill(); }
  // The next byte if it is buffered (then skip_u8() consumes it); false
  // when reading it needs a refill (u8() does one).
  bool buffered_u8(uint8_t *b) const {
    if (pos_ == end_) return false;
    *b = buf_[pos_];
    return true;
  }
  void skip_u8() { pos_++; }
  // XXX: the common case (a whole value buffered, a minimal encoding of at
  // most 8 bytes) decodes inline; everything else, errors included, takes
  // the full path. Readers spend most of their time here.
  uint64_t uleb() {
    // Most values: one byte, then two (site ids, small steps).
    if (pos_ < end_ && buf_[pos_] < 0x80) return buf_[pos_++];
    if (end_ - pos_ >= 2 && buf_[pos_ + 1] - 1u < 0x7f) {
      const uint64_t v = (buf_[pos_] & 0x7fu) | uint64_t(buf_[pos_ + 1]) << 7;
      pos_ += 2;
      return v;
    }
    if (end_ - pos_ >= 8) {
      uint64_t v;
      const size_t n = decode_uleb128_word(buf_ + pos_, &v);
      if (n > 1 && buf_[pos_ + n - 1] != 0) {  // (over-long: the full path reports it)
        pos_ += n;
        return v;
      }
    }
    return uleb_refill();
  }
  // A string := string-len string-payload, rejected above max_len.
  void string(std::string &out, size_t max_len);
  void bytes(void *out, size_t n);
  // True when no byte is left (reads ahead if needed).
  bool at_end();
  uint64_t offset() const { return base_ + pos_; }
  // Total bytes consumed from the source so far (for progress reports).
  uint64_t bytes_buffered() const { return base_ + end_; }
  // The descriptor holds a zstd-compressed stream.
  bool compressed() const { return zstd_ != nullptr; }
  // Bytes of the file read so far (compressed ones, when it is).
  uint64_t source_bytes() const { return zstd_ ? zstd_read_ : base_ + end_; }

  [[noreturn]] void fail(uint64_t at, const std::string &reason) const;

 private:
  bool fill(size_t want);  // ensures `want` bytes are buffered if the input has them
  // Reads (or decompresses) up to cap bytes from the descriptor: their
  // count, 0 at its end.
  size_t read_source(uint8_t *out, size_t cap);
  uint8_t u8_refill();
  uint64_t uleb_refill();
  [[noreturn]] void truncated(uint64_t at, const char *what) const;

  static constexpr size_t kBufSize = 1 << 16;
  int fd_ = -1;
  uint8_t *buf_ = nullptr;  // owned in fd mode; caller's memory otherwise
  bool owned_ = false;
  size_t pos_ = 0, end_ = 0;
  uint64_t base_ = 0;  // absolute offset of buf_[0]
  bool eof_ = false;
  // The descriptor's bytes left to read (limit), then after_'s from after_pos_.
  uint64_t source_left_ = ~uint64_t(0);
  std::string after_;
  size_t after_pos_ = 0;
  size_t read_after(uint8_t *out, size_t cap);
  std::unique_ptr<ZstdInput> zstd_;
  uint64_t zstd_read_ = 0;  // zstd_'s bytes_read() after its last read
};

}  // namespace prof
