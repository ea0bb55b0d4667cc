#include "read/elf_file.h"

#include <sys/stat.h>

#include <map>
#include <tuple>

#include "model/frame.h"

namespace prof {
namespace {

const Dwfl_Callbacks kOfflineCallbacks = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
                                          dwfl_offline_section_address, nullptr};

using Identity = std::tuple<dev_t, ino_t, off_t, long, long>;  // device, inode, size, mtime

}  // namespace

std::shared_ptr<ElfFile> ElfFile::open(const std::string &path) {
  static std::map<Identity, std::weak_ptr<ElfFile>> open_files;
  // XXX: paths come from the stream; opening a FIFO or a device named there
  // could block or never end.
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return nullptr;
  const Identity id{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
  std::weak_ptr<ElfFile> &known = open_files[id];
  if (std::shared_ptr<ElfFile> file = known.lock()) return file;

  std::shared_ptr<ElfFile> file(new ElfFile);
  if (!(file->dwfl_ = dwfl_begin(&kOfflineCallbacks))) return nullptr;
  dwfl_report_begin(file->dwfl_);
  file->module_ =
      dwfl_report_elf(file->dwfl_, basename_of(path).c_str(), path.c_str(), -1, 0, true);
  dwfl_report_end(file->dwfl_, nullptr, nullptr);
  if (!file->module_) return nullptr;
  const unsigned char *bits = nullptr;
  GElf_Addr vaddr;
  const int n = dwfl_module_build_id(file->module_, &bits, &vaddr);
  if (n > 0) file->build_id_.assign(reinterpret_cast<const char *>(bits), size_t(n));
  known = file;
  return file;
}

ElfFile::~ElfFile() {
  if (dwfl_) dwfl_end(dwfl_);
}

}  // namespace prof
