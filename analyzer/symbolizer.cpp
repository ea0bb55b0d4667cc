#include "symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace prof {

std::string demangle(const char *name) {
  if (!name) return "";
  int status = 0;
  char *d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string out(d);
  free(d);
  return out;
}

struct Symbolizer::Module {
  uint64_t base = 0, size = 0;
  std::string path, build_id;
  uint32_t loaded = 0, unloaded = UINT32_MAX;  // epochs [loaded, unloaded)
  Dwfl *dwfl = nullptr;
  Dwfl_Module *mod = nullptr;
  bool opened = false;
  ~Module() {
    if (dwfl) dwfl_end(dwfl);
  }
};

Symbolizer::Symbolizer() = default;
Symbolizer::~Symbolizer() = default;

void Symbolizer::module_load(const ExtRecord &r) {
  auto m = std::make_unique<Module>();
  m->base = r.addr;
  m->size = r.size;
  m->path = r.text;
  m->build_id = r.build_id;
  m->loaded = ++epoch_;
  modules_.push_back(std::move(m));
}

void Symbolizer::module_unload(uint64_t base) {
  ++epoch_;
  for (auto &m : modules_)
    if (m->base == base && m->unloaded == UINT32_MAX) m->unloaded = epoch_;
}

void Symbolizer::load_perf_map(uint64_t pid) {
  std::ifstream in("/tmp/perf-" + std::to_string(pid) + ".map");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    uint64_t start = 0, size = 0;
    std::string name;
    if (!(ls >> std::hex >> start >> size)) continue;
    std::getline(ls >> std::ws, name);
    perf_map_[start] = {start + size, name};
  }
}

Symbolizer::Module *Symbolizer::find(uint64_t ip, uint32_t epoch) {
  Module *best = nullptr;
  for (auto &m : modules_) {
    if (m->loaded > epoch || m->unloaded <= epoch) continue;
    if (ip < m->base || ip - m->base >= m->size) continue;
    if (!best || m->base > best->base) best = m.get();
  }
  return best;
}

static const Dwfl_Callbacks kOfflineCallbacks = {
    dwfl_build_id_find_elf, dwfl_standard_find_debuginfo, dwfl_offline_section_address,
    nullptr};

static void warn(const std::string &what) {
  std::cerr << "prof-analyze: warning: " << what << "\n";
}

static std::string hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

static std::string basename_of(const std::string &path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::vector<std::string> Symbolizer::resolve(Module *m, uint64_t ip, bool return_address) {
  const uint64_t pc = return_address ? ip - 1 : ip;
  if (!m->opened) {
    m->opened = true;
    m->dwfl = dwfl_begin(&kOfflineCallbacks);
    if (m->dwfl) {
      dwfl_report_begin(m->dwfl);
      m->mod = dwfl_report_elf(m->dwfl, basename_of(m->path).c_str(), m->path.c_str(), -1,
                               m->base, false);
      dwfl_report_end(m->dwfl, nullptr, nullptr);
    }
    if (!m->mod) {
      warn("cannot read " + m->path + ": frames in it show as offsets");
    } else if (!m->build_id.empty()) {
      const unsigned char *bits = nullptr;
      GElf_Addr vaddr;
      const int n = dwfl_module_build_id(m->mod, &bits, &vaddr);
      if (n <= 0 || std::string(reinterpret_cast<const char *>(bits), size_t(n)) != m->build_id)
        warn(m->path + " on disk has another build-id than the profiled one: its names may be "
                       "wrong");
    }
  }
  std::vector<std::string> names;
  if (!m->mod) return {basename_of(m->path) + "+" + hex(ip - m->base)};

  // The symbol table gives the (mangled) outer function name.
  GElf_Off offset = 0;
  GElf_Sym sym;
  const char *sym_name = dwfl_module_addrinfo(m->mod, pc, &offset, &sym, nullptr, nullptr,
                                              nullptr);
  std::string outer = sym_name ? demangle(sym_name) : basename_of(m->path) + "+" + hex(ip - m->base);

  // DWARF: the scopes at pc, innermost first; inlined subroutines name the
  // functions inlined into `outer`, each with the call site in its parent.
  Dwarf_Addr bias = 0;
  Dwarf_Die *cu = dwfl_module_addrdie(m->mod, pc, &bias);
  std::vector<std::string> inlined;  // innermost first
  std::string file_line;
  if (Dwfl_Line *line = dwfl_module_getsrc(m->mod, pc)) {
    int lineno = 0;
    const char *file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
    if (file) file_line = basename_of(file) + ":" + std::to_string(lineno);
  }
  if (cu) {
    Dwarf_Die *scopes = nullptr;
    const int n = dwarf_getscopes(cu, pc - bias, &scopes);
    std::string loc = file_line;
    for (int i = 0; i < n; i++) {
      if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) continue;
      Dwarf_Attribute attr;
      Dwarf_Die origin;
      const char *name = nullptr;
      if (dwarf_attr_integrate(&scopes[i], DW_AT_abstract_origin, &attr) &&
          dwarf_formref_die(&attr, &origin)) {
        Dwarf_Attribute link;
        const char *linkage = dwarf_formstring(dwarf_attr_integrate(&origin, DW_AT_linkage_name, &link));
        name = linkage ? nullptr : dwarf_diename(&origin);
        inlined.push_back((linkage ? demangle(linkage) : std::string(name ? name : "?")) +
                          (loc.empty() ? "" : " (" + loc + ")"));
      }
      // The call site of this inlined body is the location in its parent.
      Dwarf_Word call_line = 0;
      Dwarf_Attribute cl;
      if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &cl), &call_line) == 0) {
        Dwarf_Word call_file = 0;
        Dwarf_Attribute cf;
        Dwarf_Files *files = nullptr;
        const char *fname = nullptr;
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &cf), &call_file) == 0 &&
            dwarf_getsrcfiles(cu, &files, nullptr) == 0)
          fname = dwarf_filesrc(files, call_file, nullptr, nullptr);
        loc = (fname ? basename_of(fname) : std::string("?")) + ":" + std::to_string(call_line);
      }
    }
    free(scopes);
    file_line = loc;
  }
  names.push_back(outer + (file_line.empty() ? "" : " (" + file_line + ")"));
  names.insert(names.end(), inlined.rbegin(), inlined.rend());
  return names;
}

const std::vector<std::string> &Symbolizer::frame(uint64_t ip, uint32_t epoch,
                                                  bool return_address) {
  Module *m = find(ip, epoch);
  // XXX: modules are few; the cache key mixes the module's index into the
  // high bits that x86-64 user addresses never use.
  uint64_t index = 0;
  for (; m && index < modules_.size() && modules_[index].get() != m; index++) {
  }
  const uint64_t key = (ip << 1 | (return_address ? 1 : 0)) ^ ((m ? index + 1 : 0) << 52);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  std::vector<std::string> names;
  if (m) {
    names = resolve(m, ip, return_address);
  } else {
    auto p = perf_map_.upper_bound(ip);
    if (p != perf_map_.begin() && ip < (--p)->second.first)
      names.push_back(p->second.second);
    else
      names.push_back(hex(ip));
  }
  return cache_.emplace(key, std::move(names)).first->second;
}

}  // namespace prof
