#include "read/profile_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "llvm_memprof.h"
#include "symtab.h"

namespace prof {

ProfileFile::ProfileFile(const std::string &path) : path_(path) {
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error(std::string("cannot open: ") + strerror(errno));
  struct stat st;
  if (fstat(fd_, &st) == 0) size_ = static_cast<uint64_t>(st.st_size);
  posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  reader_ = std::make_unique<ByteReader>(fd_);
  // An LLVM MemProf raw profile has no symtab: read_llvm_memprof() reads it.
  uint8_t magic[8];
  if (pread(fd_, magic, sizeof magic, 0) == ssize_t(sizeof magic) && is_llvm_memprof_magic(magic)) {
    llvm_memprof_ = true;
    prologue_ = Prologue{SectionKind::Memprof, true, 0};
    return;
  }
  SymtabReader symtab(*reader_);
  Symbol sym;
  while (symtab.next(sym)) symbols_.add(sym);
  prologue_ = read_prologue(*reader_, SectionKind::Memprof, /*either_profile=*/true);
}

ProfileFile::~ProfileFile() {
  reader_.reset();
  if (fd_ >= 0) close(fd_);
}

}  // namespace prof
