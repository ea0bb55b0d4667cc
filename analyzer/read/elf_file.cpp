#include "read/elf_file.h"

#include <gelf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "model/frame.h"

namespace prof {
namespace {

const Dwfl_Callbacks kOfflineCallbacks = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
                                          dwfl_offline_section_address, nullptr};

using Identity = std::tuple<dev_t, ino_t, off_t, long, long>;  // device, inode, size, mtime

// The functions' first addresses listed by the .eh_frame_hdr section:
//   u8 version (1), u8 eh_frame_ptr encoding, u8 fde_count encoding,
//   u8 table encoding, eh_frame_ptr, fde_count, then fde_count pairs
//   (initial location, FDE address), sorted by location.
// Read in the one layout linkers write: eh_frame_ptr 4 bytes, fde_count
// udata4, the pairs datarel sdata4 (relative to the section's address).
std::vector<uint64_t> eh_frame_hdr_starts(Elf *elf) {
  std::vector<uint64_t> starts;
  size_t names = 0;
  if (!elf || elf_getshdrstrndx(elf, &names) != 0) return starts;
  for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS) continue;
    const char *name = elf_strptr(elf, names, shdr.sh_name);
    if (!name || strcmp(name, ".eh_frame_hdr") != 0) continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data || !data->d_buf || data->d_size < 12) return starts;
    const auto *p = static_cast<const uint8_t *>(data->d_buf);
    constexpr uint8_t kUdata4 = 0x03, kDatarelSdata4 = 0x3b;
    if (p[0] != 1 || (p[1] & 0x0f) != 0x0b || p[2] != kUdata4 || p[3] != kDatarelSdata4) return starts;
    uint32_t count;
    memcpy(&count, p + 8, 4);
    if (count > (data->d_size - 12) / 8) return starts;
    starts.reserve(count);
    for (uint32_t i = 0; i < count; i++) {
      int32_t rel;
      memcpy(&rel, p + 12 + 8 * size_t(i), 4);
      starts.push_back(shdr.sh_addr + uint64_t(int64_t(rel)));
    }
    // (A hostile file's table need not be sorted.)
    if (!std::is_sorted(starts.begin(), starts.end())) starts.clear();
    return starts;
  }
  return starts;
}

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
  GElf_Addr bias = 0;
  file->function_starts_ = eh_frame_hdr_starts(dwfl_module_getelf(file->module_, &bias));
  known = file;
  return file;
}

uint64_t ElfFile::function_start(uint64_t at) const {
  auto after = std::upper_bound(function_starts_.begin(), function_starts_.end(), at);
  return after == function_starts_.begin() ? 0 : *--after;
}

const InlineScopes &ElfFile::inline_scopes(Dwarf_Die *cu) {
  std::unique_ptr<InlineScopes> &unit = units_[cu->addr];
  if (!unit) unit = std::make_unique<InlineScopes>(cu);
  return *unit;
}

ElfFile::~ElfFile() {
  if (dwfl_) dwfl_end(dwfl_);
}

}  // namespace prof
