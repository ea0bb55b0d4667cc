#include "read/symbolizer.h"

#include <cstring>
#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <sys/stat.h>
#include <tuple>

#include "read/own_vdso.h"

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

namespace {

void warn(const std::string &what) { std::cerr << "prof-analyze: warning: " << what << "\n"; }

std::string hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Objects the kernel maps without a file: nothing to read, nothing to warn.
bool is_virtual_object(const std::string &path) {
  return path.empty() || path[0] == '[' || path.rfind("linux-vdso", 0) == 0 ||
         path.rfind("linux-gate", 0) == 0;
}

// XXX: paths come from the stream; opening a FIFO or a device named there
// could block or never end.
bool is_regular_file(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// "malloc@@GLIBC_2.2.5" -> "malloc": versions of .symtab names are noise.
std::string unversioned(const char *name) {
  const char *at = strchr(name, '@');
  return at ? std::string(name, size_t(at - name)) : std::string(name);
}

// A function's name from its DIE: the demangled linkage name, else DW_AT_name
// (both looked up through abstract origins and specifications).
std::string die_function_name(Dwarf_Die *die) {
  Dwarf_Attribute attr;
  const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
  if (!linkage)
    linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
  if (linkage) return demangle(linkage);
  const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
  return name ? name : "";
}

// The call site of an inlined subroutine, in its caller.
void call_site(Dwarf_Die *inlined, Dwarf_Die *cu, std::string &file, uint32_t &line) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  line = dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &value) == 0
             ? uint32_t(value)
             : 0;
  file.clear();
  Dwarf_Files *files = nullptr;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &value) == 0 &&
      dwarf_getsrcfiles(cu, &files, nullptr) == 0)
    if (const char *f = dwarf_filesrc(files, value, nullptr, nullptr)) file = f;
}

}  // namespace

const char *const kAgentFrame = "[libprof]";

struct Symbolizer::Module {
  uint64_t base = 0, size = 0;
  std::string path, build_id;
  bool agent = false;  // libprof's own object
  uint32_t loaded = 0, unloaded = UINT32_MAX;  // alive in epochs [loaded, unloaded)
  std::shared_ptr<ElfFile> elf;                // once opened, if readable
  bool opened = false;
};

Symbolizer::Symbolizer() = default;
Symbolizer::~Symbolizer() = default;

void Symbolizer::module_load(const ext::ModuleLoad &r) {
  auto m = std::make_unique<Module>();
  m->base = r.base;
  m->size = r.size;
  m->path = r.path;
  m->build_id = r.build_id;
  const std::string name = basename_of(r.path);
  // (The guest adapters' code, their allocator wrappers too, is the
  // profiler's as well.)
  m->agent = name == "libprof.so" || name == "libprof-cpu.so" || name == "prof_lua.so" ||
             name == "prof_luajit.so";
  m->loaded = ++epoch_;
  by_base_.emplace(m->base, m.get());
  if (m->size > max_size_) max_size_ = m->size;
  modules_.push_back(std::move(m));
}

void Symbolizer::module_unload(uint64_t base) {
  ++epoch_;
  for (auto &m : modules_)
    if (m->base == base && m->unloaded == UINT32_MAX) m->unloaded = epoch_;
}

void Symbolizer::load_perf_map(uint64_t pid) {
  const std::string path = "/tmp/perf-" + std::to_string(pid) + ".map";
  if (!is_regular_file(path)) return;
  std::ifstream in(path);
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
  // The covering module with the highest base wins (ext.h), the first
  // loaded of those at one base: down from ip, as far as a module reaches.
  auto live_over = [&](const Module *m) {
    return m->loaded <= epoch && m->unloaded > epoch && ip - m->base < m->size;
  };
  for (auto it = by_base_.upper_bound(ip); it != by_base_.begin();) {
    --it;
    if (ip - it->first >= max_size_) break;
    if (!live_over(it->second)) continue;
    for (auto first = by_base_.lower_bound(it->first);; ++first)
      if (live_over(first->second)) return first->second;
  }
  return nullptr;
}


namespace {

// The reader of the file at `path` (nullptr: unreadable, said once), shared
// by every stream read in this process (and what it resolved: see
// Symbolizer::resolve_shared): a run's streams (a shell's hundreds
// of children) name the same few files, and each reader maps its file,
// whose pages would count again in each stream's copy of the mapping.
std::shared_ptr<ElfFile> shared_reader(const std::string &path) {
  static std::mutex lock;
  static std::map<std::string, std::shared_ptr<ElfFile>> files;
  std::lock_guard<std::mutex> hold(lock);
  auto known = files.find(path);
  if (known == files.end()) {
    known = files.emplace(path, ElfFile::open(path)).first;
    if (!known->second) warn("cannot read " + printable(path) + ": its frames show as offsets");
  }
  return known->second;
}

}  // namespace

void Symbolizer::open(Module &m) {
  m.opened = true;
  if (m.path.rfind("linux-vdso", 0) == 0 && !m.build_id.empty() && !own_vdso_path().empty()) {
    std::shared_ptr<ElfFile> vdso = ElfFile::open(own_vdso_path());
    if (vdso && vdso->build_id() == m.build_id) m.elf = vdso;
    return;
  }
  if (is_virtual_object(m.path)) return;
  m.elf = shared_reader(m.path);
  if (!m.elf || m.build_id.empty() || m.elf->build_id() == m.build_id) return;
  if (build_id_warned_.emplace(m.path, m.build_id).second)
    warn(printable(m.path) +
         " on disk has another build-id than the profiled one: its names may be wrong");
}

std::vector<Frame> Symbolizer::resolve(const Module &m, uint64_t ip, uint64_t pc) const {
  Frame outer;
  outer.kind = Frame::Kind::Native;
  outer.module = m.path;
  outer.addr = pc;
  // XXX: unnamed code shows the return address as recorded, not ip-1.
  const std::string offset_name = printable(basename_of(m.path)) + "+" + hex(ip - m.base);
  if (!m.elf) {
    outer.function = offset_name;
    return {outer};
  }
  // The file is read at its link-time addresses.
  Dwfl_Module *mod = m.elf->module();
  const uint64_t at = pc - m.base;
  GElf_Off offset = 0;
  GElf_Sym sym;
  const char *sym_name = dwfl_module_addrinfo(mod, at, &offset, &sym, nullptr, nullptr, nullptr);
  if (sym_name) outer.function = demangle(unversioned(sym_name).c_str());
  if (Dwfl_Line *l = dwfl_module_getsrc(mod, at)) {
    int lineno = 0;
    if (const char *file = dwfl_lineinfo(l, nullptr, &lineno, nullptr, nullptr, nullptr)) {
      outer.file = file;
      outer.line = uint32_t(lineno);
    }
  }

  // DWARF: the concrete scopes around pc, innermost first. Each inlined
  // subroutine is a frame at the current location; its call site becomes the
  // location in the function around it.
  std::vector<Frame> inlined;  // innermost first
  Dwarf_Addr bias = 0;
  if (Dwarf_Die *cu = dwfl_module_addrdie(mod, at, &bias)) {
    std::vector<Dwarf_Die> chain;  // innermost first
    m.elf->inline_scopes(cu).chain(at - bias, chain);
    for (Dwarf_Die &die : chain) {
      if (dwarf_tag(&die) == DW_TAG_subprogram) {
        if (outer.function.empty()) outer.function = die_function_name(&die);
        break;
      }
      Frame f;
      f.kind = Frame::Kind::Inlined;
      f.module = m.path;
      f.addr = pc;
      f.function = die_function_name(&die);
      if (f.function.empty()) f.function = "?";
      f.file = outer.file;
      f.line = outer.line;
      inlined.push_back(f);
      call_site(&die, cu, outer.file, outer.line);
    }
  }
  // XXX: a return address at a named function's first byte (makecontext's
  // __start_context) follows no call: ip-1 lies before the function.
  if (outer.function.empty() && pc != ip &&
      dwfl_module_addrinfo(mod, ip - m.base, &offset, &sym, nullptr, nullptr, nullptr) && offset == 0)
    return resolve(m, ip, ip);
  // XXX: stripped code is named by its function's first address, so that
  // all of one function is one frame, as symbols would make it.
  if (outer.function.empty())
    if (const uint64_t start = m.elf->function_start(at))
      outer.function = printable(basename_of(m.path)) + "+" + hex(start);
  if (outer.function.empty()) outer.function = offset_name;
  std::vector<Frame> frames{outer};
  frames.insert(frames.end(), inlined.rbegin(), inlined.rend());
  return frames;
}

std::vector<Frame> Symbolizer::resolve_unmapped(uint64_t ip, uint64_t pc) const {
  Frame f;
  f.addr = pc;
  auto p = perf_map_.upper_bound(pc);
  if (p != perf_map_.begin() && pc < (--p)->second.first) {
    f.function = p->second.second;
    f.kind = Frame::Kind::Jit;
  } else {
    f.function = hex(ip);
  }
  return {f};
}

std::vector<Symbolizer::ModuleInfo> Symbolizer::modules() const {
  std::vector<ModuleInfo> out;
  for (const auto &m : modules_) out.push_back({m->base, m->size, m->path, m->build_id});
  return out;
}

const std::vector<Frame> &Symbolizer::frames(uint64_t ip, uint32_t epoch, bool exact) {
  const uint64_t pc = ip > 0 && !exact ? ip - 1 : ip;
  Module *m = find(pc, epoch);
  if (m && m->agent) {
    agent_frame_.assign(1, Frame{});
    agent_frame_[0].function = kAgentFrame;
    agent_frame_[0].module = m->path;
    agent_frame_[0].addr = pc;
    agent_frame_[0].kind = Frame::Kind::Native;
    return agent_frame_;
  }
  if (m && !m->opened) open(*m);
  if (!m || !m->elf) return uncached_ = m ? resolve(*m, ip, pc) : resolve_unmapped(ip, pc);
  const Key key{m, pc};
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  return cache_.emplace(key, resolve_shared(*m, ip, pc)).first->second;
}

std::vector<Frame> Symbolizer::resolve_shared(const Module &m, uint64_t ip, uint64_t pc) const {
  // (The same code of the same file, named by the same path, resolves to
  // the same frames in every stream: only where it was mapped differs.)
  using Place = std::tuple<const ElfFile *, std::string, uint64_t, bool>;
  static std::mutex lock;
  static std::map<Place, std::vector<Frame>> resolved;
  std::lock_guard<std::mutex> hold(lock);
  const Place place{m.elf.get(), m.path, pc - m.base, ip == pc};
  auto known = resolved.find(place);
  if (known == resolved.end()) known = resolved.emplace(place, resolve(m, ip, pc)).first;
  std::vector<Frame> frames = known->second;
  for (Frame &f : frames) f.addr = pc;
  return frames;
}

}  // namespace prof
