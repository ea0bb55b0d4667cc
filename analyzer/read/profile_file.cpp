#include "read/profile_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "llvm_memprof.h"
#include "ring_file.h"
#include "model/frame.h"
#include "symtab.h"

namespace prof {

ProfileFile::ProfileFile(const std::string &path) : path_(path) {
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error(std::string("cannot open: ") + strerror(errno));
  struct stat st;
  if (fstat(fd_, &st) == 0) size_ = static_cast<uint64_t>(st.st_size);
  posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  // A process that ended without finishing its stream left the ring file:
  // the stream up to its durable point, then the ring's records.
  RingTail tail;
  if (ring_tail(path, &tail))
    reader_ = std::make_unique<ByteReader>(fd_, tail.file_bytes, std::move(tail.records));
  else
    reader_ = std::make_unique<ByteReader>(fd_);
  compressed_ = reader_->compressed();
  // An LLVM MemProf raw profile has no symtab: read_llvm_memprof() reads it.
  uint8_t magic[8];
  if (pread(fd_, magic, sizeof magic, 0) == ssize_t(sizeof magic) && is_llvm_memprof_magic(magic)) {
    llvm_memprof_ = true;
    prologue_ = Prologue{SectionKind::Memprof, true, 0};
    return;
  }
  try {
    SymtabReader symtab(*reader_);
    Symbol sym;
    while (symtab.next(sym)) symbols_.add(sym);
    prologue_ = read_prologue(*reader_, SectionKind::Memprof, /*either_profile=*/true);
  } catch (const FormatError &e) {
    // XXX: a compressed file cut short, even inside its first block, is a
    // truncated stream, not a foreign file (a foreign one decompresses
    // whole, then fails the magic), unless heaptrack's name says whose.
    if (e.truncated() && reader_->compressed() && basename_of(path).rfind("heaptrack.", 0) != 0)
      throw;
    const std::string kind = foreign_file_kind(path);
    if (!kind.empty()) throw std::runtime_error(kind);
    throw;
  }
}

namespace {

// The first bytes of a file, up to `max`, decompressed when it is zstd;
// fewer when it ends (or its compression is cut) before.
std::string head_of(const std::string &path, size_t max) {
  std::string head;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return head;
  try {
    ByteReader reader(fd);
    while (head.size() < max) head.push_back(char(reader.u8()));
  } catch (const std::exception &) {
    // the end of the file, or of what decompresses: the bytes before it
  }
  close(fd);
  return head;
}

// Text a person could read: no control bytes but tabs and line ends.
bool is_text(const std::string &bytes) {
  for (const char c : bytes) {
    const unsigned char b = static_cast<unsigned char>(c);
    if (b < 0x20 && b != '\t' && b != '\n' && b != '\r') return false;
  }
  return !bytes.empty();
}

bool starts_with(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

// What plain (or decompressed) content is: "" when none we name.
std::string content_kind(const std::string &head) {
  // A profile stream, or the start of one: its reader's error stands.
  if (starts_with(head, "lj") || std::string("lj").rfind(head, 0) == 0) return "";
  const size_t start = head.find_first_not_of(" \t\r\n");
  const std::string json = start == std::string::npos ? "" : head.substr(start);
  if (starts_with(head, "v ") && head.find('\n') != std::string::npos &&
      head.find_first_not_of("0123456789abcdef ", 2) == head.find('\n'))
    return "a heaptrack file, not a profile stream; read it with heaptrack_print or heaptrack_gui";
  if (starts_with(json, "{\"snapshot\"") || starts_with(json, "{\"snapshot\" "))
    return "a Chrome heap snapshot (.heapsnapshot), not a profile stream; open it in Chrome "
           "DevTools' Memory tab";
  if (is_text(head))
    return "a text file, not a profile stream (profiles are binary files named "
           "prof.<pid>.memprof or .sysprof)";
  return "";
}

}  // namespace

std::string foreign_file_kind(const std::string &path) {
  unsigned char head[8] = {};
  ssize_t n = -1;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    n = pread(fd, head, sizeof head, 0);
    close(fd);
  }
  if (n < 0) return "";
  auto ends_with = [&](const char *tail) {
    const std::string t = tail;
    return path.size() >= t.size() && path.compare(path.size() - t.size(), t.size(), t) == 0;
  };
  const bool heaptrack = basename_of(path).rfind("heaptrack.", 0) == 0;
  if (n == 0) return "an empty file, not a profile stream (did the program run under libprof?)";
  if (n >= 8 && memcmp(head, "PERFILE2", 8) == 0)
    return "a perf.data file (perf record), not a profile stream; read it with perf report";
  if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
    if (ends_with(".pb.gz") || ends_with(".pprof") || basename_of(path).find("pprof") == 0)
      return "a pprof profile (gzip), not a profile stream; read it with go tool pprof";
    return "a gzip-compressed file, not a profile stream (if it holds one, gunzip it first)";
  }
  const bool zstd = n >= 4 && head[0] == 0x28 && head[1] == 0xb5 && head[2] == 0x2f && head[3] == 0xfd;
  const std::string kind = content_kind(head_of(path, 256));
  if (!kind.empty()) return zstd && !starts_with(kind, "a heaptrack") ? "a zstd-compressed " + kind.substr(2) : kind;
  if (heaptrack)  // cut before its first line, or a format it moved to
    return "a heaptrack file, not a profile stream; read it with heaptrack_print or heaptrack_gui";
  if (zstd) return "a zstd-compressed file that is not a libprof stream";
  return "";
}

void ProfileFile::done_reading() {
  reader_.reset();
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

ProfileFile::~ProfileFile() { done_reading(); }

}  // namespace prof
