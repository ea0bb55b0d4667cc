#include "read/own_vdso.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace prof {
namespace {

std::string write_own_vdso() {
  const auto *ehdr = reinterpret_cast<const ElfW(Ehdr) *>(getauxval(AT_SYSINFO_EHDR));
  if (!ehdr || memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0) return "";
  // The image ends with its section headers or its last segment's bytes.
  size_t size = ehdr->e_shoff + size_t(ehdr->e_shnum) * ehdr->e_shentsize;
  const auto *ph = reinterpret_cast<const ElfW(Phdr) *>(reinterpret_cast<const char *>(ehdr) + ehdr->e_phoff);
  for (int i = 0; i < ehdr->e_phnum; i++) size = std::max<size_t>(size, ph[i].p_offset + ph[i].p_filesz);
  const int fd = memfd_create("vdso", MFD_CLOEXEC);
  if (fd < 0) return "";
  if (write(fd, ehdr, size) != ssize_t(size)) {
    close(fd);
    return "";
  }
  // (The descriptor stays open for the process's life: the path is it.)
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace

const std::string &own_vdso_path() {
  static const std::string path = write_own_vdso();
  return path;
}

}  // namespace prof
