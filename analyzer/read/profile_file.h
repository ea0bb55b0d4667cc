// ProfileFile: one profile stream opened for reading: its leading symbol
// table, and which profile section follows it.
//
// Invariants: opening reads the symtab and the section prologue and nothing
// more (an LLVM MemProf raw profile: its magic only); events are then pulled by the caller through a MemprofReader or
// SysprofReader on reader(), so memory stays constant in the number of events.
// Errors are FormatError (with the byte offset) or std::runtime_error (I/O,
// or a file of another tool's format, named by foreign_file_kind()).
#pragma once

#include <memory>
#include <string>

#include "byte_reader.h"
#include "read/guest_symbols.h"
#include "prologue.h"

namespace prof {

class ProfileFile {
 public:
  explicit ProfileFile(const std::string &path);
  ~ProfileFile();
  ProfileFile(const ProfileFile &) = delete;
  ProfileFile &operator=(const ProfileFile &) = delete;

  const std::string &path() const { return path_; }
  const Prologue &prologue() const { return prologue_; }
  SectionKind kind() const { return prologue_.kind; }
  ByteReader &reader() { return *reader_; }
  // Every record has been read: the reader, its buffers (a compressed
  // file's decompression context and window: some 0.7 MB) and the
  // descriptor go, so that a profile of many files keeps none of them.
  // reader() is not to be called after.
  void done_reading();
  GuestSymbols &symbols() { return symbols_; }
  uint64_t size() const { return size_; }
  // The file holds its stream zstd-compressed.
  bool compressed() const { return compressed_; }
  // An LLVM MemProf raw profile (format/llvm_memprof.h), recognised by its
  // magic: no symtab, no prologue; its kind() is Memprof.
  bool llvm_memprof() const { return llvm_memprof_; }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  bool llvm_memprof_ = false;
  bool compressed_ = false;
  std::unique_ptr<ByteReader> reader_;
  GuestSymbols symbols_;
  Prologue prologue_{};
};

// What a file that is not a profile stream most likely is, from its first
// bytes and name: "" when it is no format we know (then the reader's error
// stands). Named: an empty file, a heaptrack file, a pprof profile, a
// perf.data, gzip and zstd files. A zstd file is only named once reading it
// failed (the stream reader decompresses libprof's own zstd streams).
std::string foreign_file_kind(const std::string &path);

// How a read ended: cleanly at the epilogue, or cut short (a killed writer).
struct ReadEnd {
  bool truncated = false;
  uint64_t offset = 0;
  std::string reason;
};

// Pulls every record of a section through `fn`, turning a truncation into a
// ReadEnd (the records before it were delivered) and rethrowing corruption.
template <class Fn>
ReadEnd read_records(Fn &&fn) {
  try {
    fn();
  } catch (const FormatError &e) {
    if (!e.truncated()) throw;
    return ReadEnd{true, e.offset(), e.reason()};
  }
  return ReadEnd{};
}

}  // namespace prof
