// The analyzer's pieces in-process: guest/host stack splicing (table-driven),
// the live-block table against a plain model, the heap model's figures, and
// offline symbolization of real code (DWARF with inlined calls, ELF symbols,
// build-id checks, unreadable modules, perf maps, module epochs).
#include <catch2/catch.hpp>

#include <cstring>
#include <deque>
#include <dlfcn.h>
#include <elf.h>
#include <fstream>
#include <iostream>
#include <link.h>
#include <map>
#include <random>
#include <sstream>
#include <unistd.h>

#include "model/frame_names.h"
#include "model/heap_model.h"
#include "model/live_heap.h"
#include "model/stack_merge.h"
#include "read/symbolizer.h"
#include "render/heap_bands.h"
#include "report/summary.h"

using namespace prof;

namespace {

Frame host(const std::string &fn) {
  Frame f;
  f.function = fn;
  f.kind = Frame::Kind::Native;
  return f;
}
GuestPart lua(const std::string &fn) {
  Frame f;
  f.function = fn;
  f.kind = Frame::Kind::Guest;
  return {f, false};
}
GuestPart cfn(const std::string &fn) {
  GuestPart g = lua(fn);
  g.cfunc = true;
  return g;
}
std::string joined(const std::vector<Frame> &frames) {
  std::string s;
  for (const Frame &f : frames) s += (s.empty() ? "" : ";") + f.function;
  return s;
}

}  // namespace

TEST_CASE("guest stacks are spliced at the VM's entry points") {
  struct Case {
    const char *what;
    std::vector<std::string> host;  // root first
    std::vector<GuestPart> guest;   // root first
    const char *merged;
    bool cut = false;  // guest[0] is the cut frame
  };
  const Case cases[] = {
      {"Lua 5.4: a C function (pmain) enters the VM, which calls a C function (string.rep, "
       "str_rep in C): its Lua name above the host frames that run it",
       {"main", "lua_pcallk", "luaD_call", "pmain", "docall", "lua_pcallk", "luaV_execute",
        "luaD_precall", "str_rep", "malloc"},
       {cfn("pmain"), lua("@main.lua:3"), lua("@main.lua:9"), cfn("string.rep")},
       "main;lua_pcallk;luaD_call;pmain;docall;lua_pcallk;luaV_execute;@main.lua:3;@main.lua:9;"
       "string.rep;luaD_precall;str_rep;malloc"},
      {"Lua 5.4: Lua -> C -> Lua, one interpreter loop per run of Lua frames",
       {"main", "luaV_execute", "luaD_precall", "sort", "lua_callk", "luaV_execute", "malloc"},
       {lua("@a.lua:1"), lua("@a.lua:2"), cfn("sort"), lua("@a.lua:7")},
       "main;luaV_execute;@a.lua:1;@a.lua:2;luaD_precall;sort;lua_callk;luaV_execute;@a.lua:7;"
       "malloc"},
      {"LuaJIT: lua_cpcall runs a C function, lua_pcall calling lj_vm_pcall counts once",
       {"main", "lua_cpcall", "lj_vm_cpcall", "pmain", "docall", "lua_pcall", "lj_vm_pcall",
        "lj_gc_step"},
       {cfn("pmain"), lua("@x.lua:0"), lua("@x.lua:5")},
       "main;lua_cpcall;lj_vm_cpcall;pmain;docall;lua_pcall;lj_vm_pcall;@x.lua:0;@x.lua:5;"
       "lj_gc_step"},
      {"LuaJIT's VM as its adapter names it (lj_vm): lua_cpcall's VM frame runs pmain alone, "
       "an FFI callback's VM frame the comparator, after the adapter's re-entry mark",
       {"main", "lua_cpcall", "lj_vm", "pmain", "docall", "lua_pcall", "lj_vm", "ffi_call",
        "qsort_r", "msort_with_tmp", "lj_vm", "lj_str_new"},
       {cfn("pmain"), lua("@f.lua:18"), lua("ffi.meta.__call"), cfn("lj_vm"), lua("@f.lua:10")},
       "main;lua_cpcall;lj_vm;pmain;docall;lua_pcall;lj_vm;@f.lua:18;ffi.meta.__call;ffi_call;"
       "qsort_r;msort_with_tmp;lj_vm;@f.lua:10;lj_str_new"},
      {"a truncated host stack: Lua runs left over go above the innermost entry",
       {"main", "lua_cpcall", "lj_BC_FUNCC"},
       {cfn("pmain"), lua("@x.lua:0"), lua("@x.lua:8")},
       "main;lua_cpcall;@x.lua:0;@x.lua:8;lj_BC_FUNCC"},
      {"no entry on the host stack: the whole guest stack goes on top",
       {"_start", "__libc_start_main"},
       {cfn("pmain"), lua("@x.lua:0"), lua("@x.lua:4")},
       "_start;__libc_start_main;pmain;@x.lua:0;@x.lua:4"},
      {"no guest frames at all", {"main", "luaV_execute", "malloc"}, {}, "main;luaV_execute;malloc"},
      {"LuaJIT, a guest stack cut at its limit: its frames go above the innermost VM frame, the "
       "outer ones (pmain's run) are the frames cut",
       {"main", "lua_cpcall", "lj_vm", "pmain", "docall", "lua_pcall", "lj_vm"},
       {lua("[more]"), lua("@d.lua:5"), lua("@d.lua:5"), lua("@d.lua:5")},
       "main;lua_cpcall;lj_vm;pmain;docall;lua_pcall;lj_vm;[more];@d.lua:5;@d.lua:5;@d.lua:5",
       true},
      {"Lua 5.4, a cut guest stack: each run above its own interpreter loop, from the inside",
       {"main", "luaV_execute", "luaD_precall", "sort", "lua_callk", "luaV_execute", "malloc"},
       {lua("[more]"), lua("@a.lua:2"), cfn("sort"), lua("@a.lua:7"), cfn("string.rep")},
       "main;luaV_execute;[more];@a.lua:2;luaD_precall;sort;lua_callk;luaV_execute;@a.lua:7;"
       "string.rep;malloc",
       true},
      {"a cut guest stack with more runs than the host has loops: the rest at the root",
       {"main", "luaV_execute", "malloc"},
       {lua("[more]"), lua("@a.lua:2"), cfn("sort"), lua("@a.lua:7")},
       "[more];@a.lua:2;sort;main;luaV_execute;@a.lua:7;malloc", true},
  };
  for (const Case &c : cases) {
    SECTION(c.what) {
      std::vector<Frame> h;
      for (const std::string &fn : c.host) h.push_back(host(fn));
      CHECK(joined(merge_stacks(h, c.guest, c.cut)) == c.merged);
    }
  }
}

TEST_CASE("the live-block table pairs like a plain map of queues, oldest first") {
  struct B {
    uint64_t serial;
  };
  LiveHeap<B> heap;
  std::map<uint64_t, std::deque<uint64_t>> model;
  std::mt19937_64 rng(7);
  uint64_t serial = 0;
  for (int i = 0; i < 400000; i++) {
    // Few distinct addresses, so reuse while live (the cross-thread race) is
    // common; some all share one home slot (multiples of 16 MiB), more than
    // a probe run holds; ~0 is the one address the flat table keeps aside.
    const uint64_t pick = rng() % 100;
    const uint64_t addr = pick == 0   ? ~uint64_t(0)
                          : pick < 20 ? (rng() % 300) << 24
                                      : 0x10000 + (rng() % 5000) * 16;
    if (rng() % 2) {
      heap.insert(addr, B{++serial});
      model[addr].push_back(serial);
    } else {
      B got{};
      const bool found = heap.take(addr, &got);
      auto it = model.find(addr);
      REQUIRE(found == (it != model.end()));
      if (!found) continue;
      REQUIRE(got.serial == it->second.front());
      it->second.pop_front();
      if (it->second.empty()) model.erase(it);
    }
  }
  uint64_t left = 0;
  for (const auto &kv : model) left += kv.second.size();
  CHECK(heap.size() == left);
}

TEST_CASE("temporary allocations follow heaptrack's rule: a realloc frees, then allocates") {
  // heaptrack (accumulatedtracedata.cpp): a release is temporary when the
  // event just before it allocated a block of its size at its stack; a
  // realloc is a release then an allocation; an unknown free is no event.
  HeapModel heap;
  const uint32_t a = 0, b = 1;
  heap.begin_stream(0, 0);
  heap.alloc(a, 0x1000, 16);
  heap.realloc(b, 0x1000, 0x2000, 32);  // releases (a, 16) right after it: temporary
  heap.free(0x9999);                    // unknown: no event
  heap.free(0x2000);                    // (b, 32) right after it: temporary
  heap.alloc(a, 0x3000, 16);
  heap.alloc(a, 0x4000, 16);
  heap.free(0x3000);                    // another block, but of (a, 16): temporary
  heap.free(0x4000);                    // after a free: not temporary
  heap.realloc(b, 0, 0x5000, 8);        // realloc(NULL) allocates only
  heap.free(0x5000);                    // temporary
  heap.end_stream();
  CHECK(heap.temporary() == 4);
  CHECK(heap.stacks()[a].temporary == 2);
  CHECK(heap.stacks()[b].temporary == 2);
  CHECK(heap.unknown_frees() == 1);
}

TEST_CASE("an attached stream's frees of blocks it never saw made are from before recording, for that stream alone") {
  HeapModel heap;
  const uint32_t a = 0;
  heap.begin_stream(0, 0);
  heap.set_attached();
  heap.alloc(a, 0x1000, 16);
  heap.free(0x9000);                    // allocated before the attach
  heap.realloc(a, 0x9100, 0x2000, 32);  // grown from before the attach
  heap.free(0x1000);
  heap.end_stream();
  heap.begin_stream(1, 1);  // a stream of a process started under the agent
  heap.free(0x9200);
  heap.end_stream();
  CHECK(heap.frees_before_recording() == 2);
  CHECK(heap.unknown_frees() == 1);
  CHECK(heap.live_blocks() == 1);
}

TEST_CASE("the heap model's figures on a hand-made history") {
  HeapModel heap;
  const uint32_t a = 0, b = 1;
  heap.begin_stream(0, 0);
  heap.alloc(a, 0x1000, 100);  // event 1
  heap.alloc(b, 0x2000, 300);  // 2
  heap.free(0x1000);           // 3: not temporary (b came in between)
  heap.alloc(a, 0x3000, 50);   // 4
  heap.free(0x3000);           // 5: temporary
  heap.alloc(b, 0x4000, 700);  // 6: peak 1000, all b
  heap.realloc(b, 0x2000, 0x5000, 10);  // 7
  heap.free(0x9999);           // 8: unknown
  heap.map(a, 0x100000, 0x4000);
  heap.unmap(0x101000, 0x1000);  // splits the mapping
  heap.end_stream();

  CHECK(heap.alloc_calls() == 4);
  CHECK(heap.realloc_calls() == 1);
  CHECK(heap.free_calls() == 3);
  CHECK(heap.peak_bytes() == 1000);
  CHECK(heap.live_bytes() == 710);
  CHECK(heap.live_blocks() == 2);
  CHECK(heap.temporary() == 1);
  CHECK(heap.unknown_frees() == 1);
  REQUIRE(heap.stacks().size() == 2);
  const StackStats &sa = heap.stacks()[a], &sb = heap.stacks()[b];
  CHECK(sa.peak_bytes == 0);
  CHECK(sb.peak_bytes == 1000);
  CHECK(sa.frees == 2);
  CHECK(sa.min_life == 1);  // allocated at 4, freed at 5
  CHECK(sa.max_life == 2);  // allocated at 1, freed at 3
  CHECK(sa.temporary == 1);
  CHECK(sb.allocs == 3);
  CHECK(sb.min_size == 10);
  CHECK(sb.max_size == 700);
  CHECK(sb.live_bytes == 710);
  CHECK(heap.mapped_bytes() == 0x3000);
  CHECK(heap.mapped_peak() == 0x4000);
}

TEST_CASE("sampled streams are scaled up per sample, and live bytes return to zero") {
  HeapModel heap;
  const uint32_t a = 0;
  heap.begin_stream(0, 0);
  heap.set_sampling(1000);
  heap.alloc(a, 0x1000, 10);
  heap.alloc(a, 0x2000, 100000);
  // s / (1 - exp(-s / mean)): 10 B stands for ~1005 B, 100 kB for itself.
  const double small = 10 / -std::expm1(-10.0 / 1000), large = 100000 / -std::expm1(-100.0);
  CHECK(heap.allocated_bytes() == Approx(small + large));
  CHECK(heap.allocated_blocks() == Approx(small / 10 + large / 100000));
  heap.free(0x1000);
  heap.free(0x2000);
  heap.end_stream();
  CHECK(heap.live_bytes() == 0);
  CHECK(heap.peak_bytes() == Approx(small + large));
}

TEST_CASE("heap over time stays bounded however many marks come") {
  HeapModel heap;
  heap.begin_stream(0, 0);
  for (uint64_t i = 0; i < 100000; i++) {
    heap.alloc(0, 0x1000 + i * 16, 1);
    heap.time_mark(i * 1000, 4096);
  }
  heap.end_stream();
  const auto &points = heap.over_time();
  CHECK(points.size() <= HeapModel::kMaxPoints);
  CHECK(points.size() >= HeapModel::kMaxPoints / 2);
  CHECK(points.front().time_ns == 0);
  for (size_t i = 1; i < points.size(); i++) CHECK(points[i].heap_bytes > points[i - 1].heap_bytes);
}

// ---- offline symbolization of real code -------------------------------------

namespace {

struct LoadedModule {
  uint64_t base = 0, size = 0;
  std::string build_id;
};

// What the agent records for a loaded object: bias, extent, GNU build-id.
LoadedModule module_of(const std::string &path) {
  struct Query {
    const std::string *path;
    LoadedModule found;
  } q{&path, {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *q = static_cast<Query *>(data);
        if (!info->dlpi_name || *q->path != info->dlpi_name) return 0;
        q->found.base = info->dlpi_addr;
        for (int i = 0; i < info->dlpi_phnum; i++) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_LOAD) q->found.size = std::max<uint64_t>(q->found.size, ph.p_vaddr + ph.p_memsz);
          if (ph.p_type != PT_NOTE) continue;
          const char *p = reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr);
          const char *end = p + ph.p_memsz;
          while (p + sizeof(ElfW(Nhdr)) <= end) {
            const auto *n = reinterpret_cast<const ElfW(Nhdr) *>(p);
            const char *desc = p + sizeof(*n) + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID) q->found.build_id.assign(desc, n->n_descsz);
            p = desc + ((n->n_descsz + 3) & ~3u);
          }
        }
        return 1;
      },
      &q);
  return q.found;
}

ext::ModuleLoad load_record(const std::string &path, uint64_t base, uint64_t size,
                            const std::string &build_id) {
  return ext::ModuleLoad{base, size, path, build_id};
}

// Captures std::cerr while alive.
struct CerrCapture {
  std::ostringstream text;
  std::streambuf *saved = std::cerr.rdbuf(text.rdbuf());
  ~CerrCapture() { std::cerr.rdbuf(saved); }
};

}  // namespace

TEST_CASE("DWARF names the function, its file and line, and the call inlined into it") {
  void *lib = dlopen(PROF_INLINE_LIB, RTLD_NOW);
  REQUIRE(lib);
  auto outer = reinterpret_cast<void *(*)(int *, int *)>(dlsym(lib, "analyzer_inline_outer"));
  int outer_line = 0, leaf_line = 0;
  const uint64_t ra = uint64_t(outer(&outer_line, &leaf_line));
  const LoadedModule m = module_of(PROF_INLINE_LIB);
  REQUIRE(m.size > 0);
  REQUIRE(!m.build_id.empty());

  Symbolizer sym;
  sym.module_load(load_record(PROF_INLINE_LIB, m.base, m.size, m.build_id));
  CerrCapture err;
  const std::vector<Frame> &f = sym.frames(ra, sym.epoch());
  REQUIRE(f.size() == 2);
  CHECK(f[0].function == "analyzer_inline_outer");
  CHECK(f[0].kind == Frame::Kind::Native);
  CHECK(basename_of(f[0].file) == "analyzer_inline.c");
  CHECK(f[0].line == uint32_t(outer_line));
  CHECK(f[0].module == PROF_INLINE_LIB);
  CHECK(f[1].function == "inlined_leaf");
  CHECK(f[1].kind == Frame::Kind::Inlined);
  CHECK(f[1].line == uint32_t(leaf_line));
  CHECK(err.text.str().empty());  // same build-id: no warning

  SECTION("a module unloaded later still names the code of its epoch") {
    const uint32_t loaded = sym.epoch();
    sym.module_unload(m.base);
    sym.module_load(load_record("/nonexistent/libother.so", m.base, m.size, ""));
    CHECK(sym.frames(ra, loaded)[0].function == "analyzer_inline_outer");
    CHECK(sym.frames(ra, sym.epoch())[0].function ==
          "libother.so+0x" + [&] {
            std::ostringstream s;
            s << std::hex << ra - m.base;
            return s.str();
          }());
    CHECK(err.text.str() == "prof-analyze: warning: cannot read /nonexistent/libother.so: its "
                            "frames show as offsets\n");
  }
  SECTION("a module whose build-id changed on disk is named, with one warning") {
    Symbolizer other;
    other.module_load(load_record(PROF_INLINE_LIB, m.base, m.size, "\x01\x02\x03\x04"));
    CHECK(other.frames(ra, other.epoch())[0].function == "analyzer_inline_outer");
    CHECK(other.frames(ra + 1, other.epoch())[0].function == "analyzer_inline_outer");
    CHECK(err.text.str() == std::string("prof-analyze: warning: ") + PROF_INLINE_LIB +
                                " on disk has another build-id than the profiled one: its "
                                "names may be wrong\n");
  }
}

TEST_CASE("without debug information the ELF symbol table names code, demangled") {
  void *lib = dlopen(PROF_MANGLED_LIB, RTLD_NOW);
  REQUIRE(lib);
  auto call = reinterpret_cast<void *(*)()>(dlsym(lib, "analyzer_mangled_call"));
  const uint64_t ra = uint64_t(call());
  const LoadedModule m = module_of(PROF_MANGLED_LIB);
  Symbolizer sym;
  sym.module_load(load_record(PROF_MANGLED_LIB, m.base, m.size, m.build_id));
  const std::vector<Frame> &f = sym.frames(ra, sym.epoch());
  REQUIRE(f.size() == 1);
  CHECK(f[0].function == "analyzer_test::caller(int)");
  CHECK(f[0].file.empty());
  CHECK(f[0].line == 0);
}

TEST_CASE("code outside every module is named by /tmp/perf-<pid>.map, else by address") {
  const uint64_t pid = uint64_t(getpid());
  const std::string map = "/tmp/perf-" + std::to_string(pid) + ".map";
  std::ofstream(map) << "7f0000001000 100 LuaJIT trace 3\nzz bad line\n7f0000002000 10 other\n";
  Symbolizer sym;
  sym.load_perf_map(pid);
  unlink(map.c_str());
  CHECK(sym.frames(0x7f0000001051, 0)[0].function == "LuaJIT trace 3");
  CHECK(sym.frames(0x7f0000001051, 0)[0].kind == Frame::Kind::Jit);
  // A return address is looked up at ip - 1: 0x...1100 is the entry's last byte.
  CHECK(sym.frames(0x7f0000001100, 0)[0].function == "LuaJIT trace 3");
  CHECK(sym.frames(0x7f0000001101, 0)[0].function == "0x7f0000001101");
  CHECK(sym.frames(0x7f0000001101, 0)[0].kind == Frame::Kind::Unknown);
}

TEST_CASE("C++ names lose their template arguments, never their operators") {
  CHECK(short_name("std::vector<int, std::allocator<int> >::push_back(int const&)") ==
        "std::vector<…>::push_back(int const&)");
  CHECK(short_name("void std::vector<std::pair<int, int>, std::allocator<std::pair<int, int> > >"
                   "::_M_realloc_insert<int&, int&>(__gnu_cxx::__normal_iterator<std::pair<int, "
                   "int>*, std::vector<std::pair<int, int> > >, int&, int&)") ==
        "void std::vector<…>::_M_realloc_insert<…>(__gnu_cxx::__normal_iterator<…>, int&, int&)");
  CHECK(short_name("std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, char "
                   "const*)") == "std::ostream& std::operator<< <…>(std::ostream&, char const*)");
  CHECK(short_name("bool operator< <int>(Box<int> const&, Box<int> const&)") ==
        "bool operator< <…>(Box<…> const&, Box<…> const&)");
  CHECK(short_name("Foo::operator->() const") == "Foo::operator->() const");
  CHECK(short_name("plain_c_function") == "plain_c_function");
  CHECK(short_name("broken<int") == "broken<int");  // unbalanced: unchanged

  for (const char *f : {"operator new(unsigned long)", "operator new[](unsigned long)",
                        "std::__new_allocator<int>::allocate(unsigned long, void const*)",
                        "__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)",
                        "std::allocator_traits<std::allocator<int> >::allocate(std::allocator<int>&, "
                        "unsigned long)",
                        "std::_Vector_base<int, std::allocator<int> >::_M_allocate(unsigned long)",
                        "std::_Vector_base<…>::_M_allocate(unsigned long)", "malloc", "realloc",
                        "publishing_alloc", "typing_alloc", "profiling_alloc"})
    CHECK(is_allocator_function(f));
  for (const char *f : {"make_nodes()", "std::vector<int, std::allocator<int> >::push_back(int const&)",
                        "my_malloc", "operator<<(std::ostream&, Widget const&)", "newton()"})
    CHECK_FALSE(is_allocator_function(f));
}

TEST_CASE("tables by function name a Lua frame by where its function starts, after its name") {
  auto guest = [](const std::string &function, uint32_t first_line) {
    Frame f;
    f.kind = Frame::Kind::Guest;
    f.function = function;
    f.file = "@bt.lua";
    f.first_line = first_line;
    return f;
  };
  CHECK(function_name(guest("build (@bt.lua:9)", 6)) == "build (@bt.lua:6)");
  CHECK(function_name(guest("(main chunk) (@bt.lua:20)", 0)) == "(main chunk) (@bt.lua)");
  CHECK(function_name(guest("@bt.lua:9", 6)) == "@bt.lua:6");  // no source: its location
  CHECK(function_name(guest("@bt.lua:20", 0)) == "@bt.lua:0");
  CHECK(function_name(host("malloc")) == "malloc");
}

TEST_CASE("the heap chart's legend tells apart stacks that part in stripped code only") {
  auto stack = [](std::initializer_list<const char *> outermost_first) {
    std::vector<Frame> frames;
    for (const char *name : outermost_first) frames.push_back(host(name));
    return frames;
  };
  const std::vector<std::string> labels = prof::band_labels(
      {stack({"main", "step", "app+0x10", "alloc"}), stack({"main", "step", "app+0x20", "alloc"}),
       stack({"main", "other", "alloc"}),
       // Alike in every frame (two return addresses in one function): no
       // frame tells them apart, and the labels end.
       stack({"main", "app+0x30", "leaf"}), stack({"main", "app+0x30", "leaf"})});
  CHECK(labels == std::vector<std::string>{"alloc < step < main, via app+0x10",
                                           "alloc < step < main, via app+0x20", "alloc < other",
                                           "leaf < main", "leaf < main"});
}

TEST_CASE("rows of a table that read alike without their stripped code are told apart") {
  auto frame = [](const std::string &function) {
    return nlohmann::json{{"function", function}, {"file", ""}, {"line", 0}, {"module", "/opt/app"},
                          {"kind", "native"}};
  };
  auto row = [](std::initializer_list<nlohmann::json> frames) {
    return nlohmann::json{{"stack", nlohmann::json(frames)}};
  };
  const nlohmann::json rows = nlohmann::json::array(
      {row({frame("alloc"), frame("app+0x10"), frame("insert"), frame("main")}),
       row({frame("alloc"), frame("app+0x20"), frame("insert"), frame("main")}),
       row({frame("alloc"), frame("app+0x20"), frame("update"), frame("main")}),
       // Alike only beyond the depth shown.
       row({frame("other"), frame("a"), frame("app+0x30"), frame("x")}),
       row({frame("other"), frame("a"), frame("app+0x40"), frame("y")})});
  CHECK(prof::rows_alike_without_stripped_code(rows, 0) ==
        std::vector<bool>{true, true, false, false, false});
  CHECK(prof::rows_alike_without_stripped_code(rows, 2) ==
        std::vector<bool>{true, true, false, true, true});
}

TEST_CASE("a text stack puts stripped code in a row on one line, recursion as ×N") {
  auto frame = [](const std::string &function, const std::string &module) {
    return nlohmann::json{{"function", function}, {"file", ""}, {"line", 0}, {"module", module},
                          {"kind", "native"}};
  };
  const nlohmann::json stack = nlohmann::json::array(
      {frame("app+0x10", "/opt/app"), frame("app+0x20", "/opt/app"), frame("lib.so+0x5", "/lib/lib.so"),
       frame("named", "/opt/app"), frame("app+0x30", "/opt/app"), frame("rec", "/opt/app"),
       frame("rec", "/opt/app")});
  std::ostringstream out;
  prof::render_stack(stack, 0, out);
  CHECK(out.str() ==
        "      app: 2 functions without symbols (0x10 0x20)\n"
        "      lib.so+0x5\n"
        "      named\n"
        "      app+0x30\n"
        "      rec ×2\n");
  // The depth counts lines.
  std::ostringstream cut;
  prof::render_stack(stack, 2, cut);
  CHECK(cut.str() ==
        "      app: 2 functions without symbols (0x10 0x20)\n"
        "      lib.so+0x5\n"
        "      ... 4 more\n");
}
