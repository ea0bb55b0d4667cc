// ZstdInput: the decompressed bytes of a zstd-compressed stream file, as the
// agent writes it by default (one or more zstd frames holding the stream),
// for ByteReader.
//
// Invariants:
// - Memory is constant: one input buffer and zstd's context, whose window
//   is capped (kMaxWindowLog): a frame asking for more is refused, never
//   allocated for.
// - A cut anywhere (a killed writer, a frame never ended) is the end of the
//   input after every byte of the blocks before the cut: the reader then
//   reports its truncation as for a plain stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

struct ZSTD_DCtx_s;

namespace prof {

// The first bytes of a zstd frame (RFC 8878), little-endian 0xFD2FB528.
constexpr uint8_t kZstdMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};
bool has_zstd_magic(const uint8_t *data, size_t size);

class ZstdInput {
 public:
  // Decompresses fd (not owned), whose first `seen` bytes were already read
  // into `head`.
  ZstdInput(int fd, const uint8_t *head, size_t seen);
  // Reads no more of the file than its first `limit` bytes (seen included).
  void limit_to(uint64_t limit) { limit_ = limit; }
  // Compressed bytes read at a time: small, so that bytes_read() follows
  // the reading closely (progress, heap marks).
  static constexpr size_t kReadSize = 16 * 1024;
  ~ZstdInput();
  ZstdInput(const ZstdInput &) = delete;
  ZstdInput &operator=(const ZstdInput &) = delete;

  // Writes up to cap decompressed bytes at out; returns how many, 0 only at
  // the end of the input. On corrupt data or a failed read, returns 0 and
  // sets error() (naming the compressed byte offset).
  size_t read(uint8_t *out, size_t cap);
  const std::string &error() const { return error_; }
  // Bytes read from the file so far.
  uint64_t bytes_read() const { return consumed_ + in_end_; }

  static constexpr int kMaxWindowLog = 24;  // 16 MiB; the agent writes 512 KiB windows

 private:
  bool refill();  // false at the end of the file (or on error)

  int fd_;
  ZSTD_DCtx_s *dctx_;
  uint8_t *in_;
  size_t in_pos_ = 0, in_end_ = 0;
  uint64_t consumed_ = 0;  // compressed bytes before in_[in_pos_]
  bool eof_ = false;
  uint64_t limit_ = ~uint64_t(0);
  std::string error_;
};

}  // namespace prof
