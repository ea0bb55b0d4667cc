#include "byte_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "uleb128.h"
#include "zstd_input.h"

namespace prof {

FormatError::FormatError(uint64_t offset, bool truncated, const std::string &reason)
    : std::runtime_error((truncated ? "truncated at byte " : "corrupt at byte ") +
                         std::to_string(offset) + ": " + reason),
      offset_(offset), truncated_(truncated), reason_(reason) {}

std::string hex_byte(uint8_t b) {
  static const char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[b >> 4] + kDigits[b & 15];
}

std::string hex_bytes(const std::string &raw) {
  std::string out;
  for (unsigned char c : raw) out += hex_byte(c).substr(2);
  return out;
}

ByteReader::ByteReader(int fd) : ByteReader(fd, ~uint64_t(0), std::string()) {}

ByteReader::ByteReader(int fd, uint64_t limit, std::string after)
    : fd_(fd), buf_(new uint8_t[kBufSize]), owned_(true), source_left_(limit),
      after_(std::move(after)) {
  // The magic decides: the bytes read to see it are the stream's first.
  while (end_ < sizeof kZstdMagic && source_left_ > 0) {
    const size_t n = read_source(buf_ + end_, sizeof kZstdMagic - end_);
    if (n == 0) break;
    end_ += n;
  }
  if (!has_zstd_magic(buf_, end_)) return;
  zstd_ = std::make_unique<ZstdInput>(fd, buf_, end_);
  zstd_->limit_to(limit);
  zstd_read_ = zstd_->bytes_read();
  end_ = 0;
}

size_t ByteReader::read_after(uint8_t *out, size_t cap) {
  const size_t n = std::min(cap, after_.size() - after_pos_);
  memcpy(out, after_.data() + after_pos_, n);
  after_pos_ += n;
  return n;
}

ByteReader::ByteReader(const uint8_t *data, size_t size, uint64_t base_offset)
    : buf_(const_cast<uint8_t *>(data)), end_(size), base_(base_offset), eof_(true) {}

ByteReader::~ByteReader() {
  if (owned_) delete[] buf_;
}

size_t ByteReader::read_source(uint8_t *out, size_t cap) {
  if (zstd_) {
    const size_t n = zstd_->read(out, cap);
    zstd_read_ = zstd_->bytes_read();
    if (n == 0 && !zstd_->error().empty()) fail(base_ + end_, zstd_->error());
    return n ? n : read_after(out, cap);
  }
  const size_t want = source_left_ < cap ? size_t(source_left_) : cap;
  ssize_t n = 0;
  while (want > 0 && (n = read(fd_, out, want)) < 0) {
    if (errno != EINTR) fail(offset(), std::string("read failed: ") + strerror(errno));
  }
  source_left_ -= uint64_t(n);
  return n > 0 ? size_t(n) : read_after(out, cap);
}

bool ByteReader::fill(size_t want) {
  if (end_ - pos_ >= want) return true;
  if (eof_) return false;
  // Keep the unread tail, then top up from the descriptor.
  memmove(buf_, buf_ + pos_, end_ - pos_);
  base_ += pos_;
  end_ -= pos_;
  pos_ = 0;
  while (end_ < want) {
    const size_t n = read_source(buf_ + end_, kBufSize - end_);
    if (n == 0) {
      eof_ = true;
      return false;
    }
    end_ += n;
  }
  return true;
}

void ByteReader::fail(uint64_t at, const std::string &reason) const {
  throw FormatError(at, false, reason);
}

void ByteReader::truncated(uint64_t at, const char *what) const {
  throw FormatError(at, true, std::string("input ends inside ") + what);
}

uint8_t ByteReader::u8_refill() {
  if (!fill(1)) truncated(offset(), "a byte");
  return buf_[pos_++];
}

uint64_t ByteReader::uleb_refill() {
  fill(kUleb128Max);  // a short read is fine near the end of input
  uint64_t value = 0;
  size_t used = 0;
  switch (decode_uleb128(buf_ + pos_, buf_ + end_, &value, &used)) {
    case Uleb128Status::Ok:
      pos_ += used;
      return value;
    case Uleb128Status::NeedMore:
      truncated(offset(), "a ULEB128 value");
    case Uleb128Status::OverLong:
      fail(offset(), "over-long ULEB128 encoding");
    case Uleb128Status::Overflow:
      fail(offset(), "ULEB128 value overflows 64 bits");
  }
  fail(offset(), "unreachable ULEB128 state");
}

void ByteReader::bytes(void *out, size_t n) {
  const uint64_t start = offset();
  uint8_t *dst = static_cast<uint8_t *>(out);
  while (n > 0) {
    if (!fill(1)) truncated(start, "a byte string");
    size_t k = end_ - pos_ < n ? end_ - pos_ : n;
    memcpy(dst, buf_ + pos_, k);
    pos_ += k;
    dst += k;
    n -= k;
  }
}

void ByteReader::string(std::string &out, size_t max_len) {
  const uint64_t start = offset();
  const uint64_t len = uleb();
  if (len > max_len)
    fail(start, "string length " + std::to_string(len) + " exceeds the limit of " +
                    std::to_string(max_len));
  out.clear();
  // XXX: grow with the bytes actually read, never by the claimed length.
  uint64_t left = len;
  while (left > 0) {
    if (!fill(1)) truncated(start, "a string");
    size_t k = end_ - pos_ < left ? end_ - pos_ : static_cast<size_t>(left);
    out.append(reinterpret_cast<const char *>(buf_ + pos_), k);
    pos_ += k;
    left -= k;
  }
}

bool ByteReader::at_end() { return !fill(1); }

}  // namespace prof
