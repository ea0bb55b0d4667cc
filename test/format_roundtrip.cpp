// Round trip of every record kind through the encoders and the readers, and
// the readers' refusal of what a section's version does not allow.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "memprof.h"
#include "record_extent.h"
#include "vec_out.h"
#include "prologue.h"
#include "sysprof.h"

using namespace prof;

namespace {
std::vector<Symbol> sample_symbols() {
  Symbol lua{kSymLfunc, 0x1000, 7, 0, "@script.lua"};
  Symbol c{kSymCfunc, 0x7f0000001234, 0, 0, "malloc"};
  Symbol trace{kSymTrace, 0x1000, 9, 3, ""};
  return {lua, c, trace};
}

std::vector<ExtRecord> sample_ext() {
  return {ext::Process{42, 1, 1700000000000000000ull, "/usr/bin/app"},
          ext::ModuleLoad{0x555500000000, 0x20000, "/lib/x.so", std::string("\x01\x02\x00\xff", 4)},
          ext::ModuleUnload{0x555500000000},
          ext::StackHost{1, 0, 0x401000},
          ext::StackGuest{2, 1, kFrameLfunc, 0x1000, 12},
          ext::TimeMark{5000, 1 << 20, 4096},
          ext::Sampling{512 * 1024},
          ext::Marker{77, "phase 2"},
          ext::Stats{{{"dropped", 0}, {"unwind_failures", 3}}},
          ext::Map{0x7f0000000000, 1 << 21, 1, 2},
          ext::Unmap{0x7f0000001000, 4096},
          ext::Sampler{1, 2, 1000000},
          ext::Thread{1234},
          ext::Weight{4},
          ext::UncleanEnd{2500000000, 96},
          ext::Skip{5},
          ext::VmFunction{0x55d0c0de1000, 0x2f40, "luaV_execute"},
          ext::VmState{4},
          ext::TraceSample{23, 0x55d0c0de2000, 12},
          ext::HeapTotal{7000, 1700000},
          ext::ObjectType{2},
          ext::WorkingDir{"/home/user/project"},
          ext::ThreadName{4427, "alpha-worker"},
          ext::EventThread{4194304}, ext::Attached{2}};
}

// The sample records a section of `kind` may hold (ext_kind_section()).
std::vector<ExtRecord> sample_ext_in(SectionKind kind) {
  std::vector<ExtRecord> in;
  for (const auto &r : sample_ext()) {
    const SectionKind only = ext_kind_section(ext_kind(r));
    if (only == SectionKind::Symtab || only == kind) in.push_back(r);
  }
  return in;
}

// Each record's fields, to compare a decoded record with the one encoded.
auto fields(const ext::StackHost &r) { return std::make_tuple(r.id, r.parent, r.ip); }
auto fields(const ext::StackGuest &r) {
  return std::make_tuple(r.id, r.parent, r.frame_type, r.frame_addr, r.line);
}
auto fields(const ext::ModuleLoad &r) {
  return std::make_tuple(r.base, r.size, r.path, r.build_id);
}
auto fields(const ext::ModuleUnload &r) { return std::make_tuple(r.base); }
auto fields(const ext::TimeMark &r) {
  return std::make_tuple(r.time_ns, r.rss_bytes, r.heap_bytes);
}
auto fields(const ext::Sampling &r) { return std::make_tuple(r.mean_bytes); }
auto fields(const ext::Marker &r) { return std::make_tuple(r.time_ns, r.label); }
auto fields(const ext::Stats &r) {
  std::vector<std::pair<std::string, uint64_t>> counters;
  for (const ext::Stat &c : r.counters) counters.emplace_back(c.name, c.value);
  return counters;
}
auto fields(const ext::Map &r) {
  return std::make_tuple(r.addr, r.length, r.host_stack, r.guest_stack);
}
auto fields(const ext::Unmap &r) { return std::make_tuple(r.addr, r.length); }
auto fields(const ext::Process &r) {
  return std::make_tuple(r.pid, r.ppid, r.time_unix_ns, r.exe_path);
}
auto fields(const ext::Sampler &r) { return std::make_tuple(r.backend, r.mode, r.interval_ns); }
auto fields(const ext::Thread &r) { return std::make_tuple(r.tid); }
auto fields(const ext::Weight &r) { return std::make_tuple(r.sample_weight); }
auto fields(const ext::UncleanEnd &r) { return std::make_tuple(r.time_ns, r.lost_bytes); }
auto fields(const ext::Skip &r) { return std::make_tuple(r.length); }
auto fields(const ext::VmFunction &r) { return std::make_tuple(r.start, r.size, r.name); }
auto fields(const ext::VmState &r) { return std::make_tuple(r.vmstate); }
auto fields(const ext::TraceSample &r) { return std::make_tuple(r.traceno, r.addr, r.line); }
auto fields(const ext::HeapTotal &r) { return std::make_tuple(r.time_ns, r.live_bytes); }
auto fields(const ext::ObjectType &r) { return std::make_tuple(r.type); }
auto fields(const ext::WorkingDir &r) { return std::make_tuple(r.path); }
auto fields(const ext::ThreadName &r) { return std::make_tuple(r.tid, r.name); }
auto fields(const ext::EventThread &r) { return std::make_tuple(r.tid); }
auto fields(const ext::Attached &r) { return std::make_tuple(r.attach_number); }
auto fields(const ext::Site &r) {
  return std::make_tuple(r.id, r.loc.source, r.loc.addr, r.loc.line, r.loc.traceno, r.has_stacks,
                         r.host_stack, r.guest_stack, r.size, r.type);
}
auto fields(const ext::AllocAt &r) { return std::make_tuple(r.site); }
auto fields(const ext::FreeOf &r) { return std::make_tuple(r.site, r.age_step); }
auto fields(const ext::FreeAt &r) { return std::make_tuple(r.free_site, r.site, r.age_step); }
auto fields(const ext::ReallocOf &r) { return std::make_tuple(r.site, r.age_step, r.new_site); }

// The compact records (memprof readers turn them into events, so they are
// round-tripped through read_ext itself).
std::vector<ExtRecord> sample_compact() {
  return {ext::Site{1, {kAsourceNone, 0, 0, 0}, true, 5, 0, 24, 0},
          ext::Site{2, {kAsourceLfunc, 0x1000, 12, 0}, true, 5, 6, 48, 2},
          ext::Site{3, {kAsourceTrace, 0, 0, 3}, false, 0, 0, 1 << 20, 9},
          ext::Site{4, {kAsourceCfunc, 0x7f0000001234, 0, 0}, false, 0, 0, 0, 0},
          ext::Site{5, {kAsourceInternal, 0, 0, 0}, false, 0, 0, 7, 1},
          ext::AllocAt{3},
          ext::FreeOf{2, zigzag(-3)},
          ext::FreeAt{4, 1, zigzag(1)},
          ext::ReallocOf{1, 0, 2}};
}

void check_same(const ExtRecord &got, const ExtRecord &want) {
  REQUIRE(ext_kind(got) == ext_kind(want));
  std::visit(
      [&got](const auto &w) {
        CHECK(fields(std::get<std::decay_t<decltype(w)>>(got)) == fields(w));
      },
      want);
}

void check_same(const Symbol &a, const Symbol &b) {
  CHECK(a.type == b.type);
  CHECK(a.addr == b.addr);
  CHECK(a.line == b.line);
  CHECK(a.traceno == b.traceno);
  CHECK(a.name == b.name);
}

VecOut symtab_with(const std::vector<Symbol> &syms) {
  VecOut out;
  put_prologue(out, SectionKind::Symtab, false);
  for (const auto &s : syms) put_symtab_entry(out, s);
  put_symtab_final(out);
  return out;
}
}  // namespace

TEST_CASE("symtab entries round-trip") {
  const auto syms = sample_symbols();
  VecOut out = symtab_with(syms);
  ByteReader in(out.b.data(), out.b.size());
  SymtabReader reader(in);
  Symbol s;
  for (const auto &want : syms) {
    REQUIRE(reader.next(s));
    check_same(s, want);
  }
  CHECK_FALSE(reader.next(s));
  CHECK(in.at_end());
}

TEST_CASE("extended memprof events, symbols and ext records round-trip") {
  VecOut out = symtab_with({});
  put_prologue(out, SectionKind::Memprof, true);
  const GuestLoc locs[] = {{kAsourceNone, 0, 0, 0},
                           {kAsourceInternal, 0, 0, 0},
                           {kAsourceLfunc, 0x1000, 12, 0},
                           {kAsourceCfunc, 0x7f0000001234, 0, 0},
                           {kAsourceTrace, 0, 0, 3}};
  const uint8_t kinds[] = {kAeventAlloc, kAeventRealloc, kAeventFree};
  for (const auto &loc : locs)
    for (uint8_t k : kinds)
      for (bool stacks : {false, true})
        put_memprof_event(out, AllocEvent{k, loc, stacks, 5, 6, 0x1000, 24, 0x2000, 48});
  for (const auto &s : sample_symbols()) put_memprof_symbol(out, s);
  for (const auto &r : sample_ext_in(SectionKind::Memprof)) put_ext(out, r);
  put_memprof_epilogue(out);

  ByteReader in(out.b.data(), out.b.size());
  SymtabReader symtab(in);
  Symbol sym;
  REQUIRE_FALSE(symtab.next(sym));
  MemprofReader reader(in);
  CHECK(reader.extended());
  MemprofEvent ev;
  for (const auto &loc : locs)
    for (uint8_t k : kinds)
      for (bool stacks : {false, true}) {
        REQUIRE(reader.next(ev));
        CHECK(ev.record == (k == kAeventAlloc    ? MemprofRecord::Alloc
                            : k == kAeventFree ? MemprofRecord::Free
                                               : MemprofRecord::Realloc));
        CHECK(ev.aevent == k);
        CHECK(ev.loc.source == loc.source);
        CHECK(ev.loc.addr == loc.addr);
        CHECK(ev.loc.line == loc.line);
        CHECK(ev.loc.traceno == loc.traceno);
        CHECK(ev.has_stacks == stacks);
        CHECK(ev.host_stack == (stacks ? 5u : 0u));
        CHECK(ev.guest_stack == (stacks ? 6u : 0u));
        CHECK(ev.oaddr == (k & kAeventFree ? 0x1000u : 0u));
        CHECK(ev.osize == (k & kAeventFree ? 24u : 0u));
        CHECK(ev.naddr == (k & kAeventAlloc ? 0x2000u : 0u));
        CHECK(ev.nsize == (k & kAeventAlloc ? 48u : 0u));
      }
  for (const auto &want : sample_symbols()) {
    REQUIRE(reader.next(ev));
    CHECK(ev.record == MemprofRecord::Symbol);
    check_same(ev.symbol, want);
  }
  for (const auto &want : sample_ext_in(SectionKind::Memprof)) {
    REQUIRE(reader.next(ev));
    CHECK(ev.record == MemprofRecord::Ext);
    check_same(ev.ext, want);
  }
  CHECK_FALSE(reader.next(ev));
  CHECK(in.at_end());
}

TEST_CASE("compact records round-trip through read_ext") {
  VecOut out;
  for (const auto &r : sample_compact()) put_ext(out, r);
  ByteReader in(out.b.data(), out.b.size());
  for (const auto &want : sample_compact()) {
    const uint64_t at = in.offset();
    ExtRecord got;
    read_ext(in, in.u8(), at, SectionKind::Memprof, got);
    check_same(got, want);
  }
  CHECK(in.at_end());
  for (int64_t v : {int64_t(0), int64_t(-1), int64_t(1), INT64_MIN, INT64_MAX})
    CHECK(unzigzag(zigzag(v)) == v);
  CHECK(zigzag(-1) == 1u);
  CHECK(zigzag(1) == 2u);
}

TEST_CASE("record_extent.h finds where every kind of ext record ends, and when it is cut") {
  std::vector<ExtRecord> all = sample_ext();
  for (const auto &r : sample_compact()) all.push_back(r);
  std::set<ExtKind> kinds;
  for (const auto &r : all) {
    kinds.insert(ext_kind(r));
    VecOut out;
    put_ext(out, r);
    INFO(ext_kind_name(ext_kind(r)));
    const size_t skipped = ext_kind(r) == ExtKind::Skip ? std::get<ext::Skip>(r).length : 0;
    ExtentCursor c(out.b.data() + 1, out.b.data() + out.b.size());
    skip_ext_body(c, out.b[0] & kExtKindMask);
    CHECK(c.ok());
    CHECK(1 + c.used() + skipped == out.b.size());
    for (size_t cut = 1; cut + skipped < out.b.size(); cut++) {
      ExtentCursor short_c(out.b.data() + 1, out.b.data() + cut);
      skip_ext_body(short_c, out.b[0] & kExtKindMask);
      CHECK(short_c.status() == ExtentCursor::kNeedMore);
    }
  }
  CHECK(kinds.size() == kExtKindMax);  // every kind tried
  ExtentCursor none(nullptr, nullptr);
  skip_ext_body(none, kExtKindMax + 1);
  CHECK(none.status() == ExtentCursor::kBad);
}

TEST_CASE("sysprof samples of every vmstate, symbols and ext records round-trip") {
  VecOut out = symtab_with({});
  put_prologue(out, SectionKind::Sysprof, true);
  std::vector<SysprofSample> samples;
  for (uint8_t vm : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13}) {
    SysprofSample s;
    s.vmstate = vm;
    if (vm == kVmstTrace) {
      s.traceno = 4, s.trace_addr = 0x1000, s.trace_line = 3;
    } else {
      if (vmstate_has_guest(vm))
        s.guest = {{kFrameFfunc, 21, 0}, {kFrameLfunc, 0x1000, 8}, {kFrameCfunc, 0x7f00, 0}};
      s.host = {0x401000, 0x401100, 0x7f0000002000};
    }
    samples.push_back(s);
    put_sysprof_sample(out, s);
  }
  for (const auto &s : sample_symbols()) put_sysprof_symbol(out, s);
  for (const auto &r : sample_ext_in(SectionKind::Sysprof)) put_ext(out, r);
  put_sysprof_epilogue(out);

  ByteReader in(out.b.data(), out.b.size());
  SymtabReader symtab(in);
  Symbol sym;
  REQUIRE_FALSE(symtab.next(sym));
  SysprofReader reader(in);
  SysprofSample got;
  for (const auto &want : samples) {
    REQUIRE(reader.next(got));
    CHECK(got.record == SysprofRecord::Sample);
    CHECK(got.vmstate == want.vmstate);
    CHECK(got.traceno == want.traceno);
    CHECK(got.trace_addr == want.trace_addr);
    CHECK(got.trace_line == want.trace_line);
    CHECK(got.host == want.host);
    REQUIRE(got.guest.size() == want.guest.size());
    for (size_t i = 0; i < want.guest.size(); i++) {
      CHECK(got.guest[i].type == want.guest[i].type);
      CHECK(got.guest[i].addr == want.guest[i].addr);
      CHECK(got.guest[i].line == want.guest[i].line);
    }
  }
  for (const auto &want : sample_symbols()) {
    REQUIRE(reader.next(got));
    CHECK(got.record == SysprofRecord::Symbol);
    check_same(got.symbol, want);
  }
  for (const auto &want : sample_ext_in(SectionKind::Sysprof)) {
    REQUIRE(reader.next(got));
    CHECK(got.record == SysprofRecord::Ext);
    check_same(got.ext, want);
  }
  CHECK_FALSE(reader.next(got));
}

namespace {
std::string first_error(const VecOut &out) {
  ByteReader in(out.b.data(), out.b.size());
  try {
    SymtabReader symtab(in);
    Symbol s;
    while (symtab.next(s)) {
    }
    const Prologue p = read_prologue(in, SectionKind::Memprof, true);
    if (p.kind == SectionKind::Memprof) {
      MemprofReader r(in, p);
      MemprofEvent ev;
      while (r.next(ev)) {
      }
    } else {
      SysprofReader r(in, p);
      SysprofSample s;
      while (r.next(s)) {
      }
    }
  } catch (const FormatError &e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("a section refuses the records the grammar gives only to the other") {
  int refused = 0;
  for (const SectionKind kind : {SectionKind::Memprof, SectionKind::Sysprof}) {
    for (const auto &r : sample_ext()) {
      const SectionKind only = ext_kind_section(ext_kind(r));
      if (only == SectionKind::Symtab || only == kind) continue;
      VecOut out = symtab_with({});
      put_prologue(out, kind, true);
      const size_t at = out.b.size();
      put_ext(out, r);
      const std::string section = kind == SectionKind::Memprof ? "memprof" : "sysprof";
      CHECK(first_error(out) == "corrupt at byte " + std::to_string(at) + ": " +
                                    ext_kind_name(ext_kind(r)) + " record in a " + section +
                                    " stream");
      refused++;
    }
  }
  CHECK(refused == 7);  // sampler, thread, weight, vm-state, trace-sample; object-type, event-thread
}

TEST_CASE("genuine sections refuse libprof-only records") {
  VecOut out = symtab_with({});
  put_prologue(out, SectionKind::Memprof, false);
  const size_t at = out.b.size();
  put_ext(out, sample_ext()[0]);
  CHECK(first_error(out) == "corrupt at byte " + std::to_string(at) + ": bad event header 0x4b");

  VecOut stacks = symtab_with({});
  put_prologue(stacks, SectionKind::Memprof, false);
  put_memprof_event(stacks, AllocEvent{kAeventAlloc, GuestLoc{kAsourceInternal, 0, 0, 0}, true, 1,
                                       0, 0, 0, 16, 16});
  CHECK(first_error(stacks).find("bad event header 0x25") != std::string::npos);

  VecOut native = symtab_with({});
  put_prologue(native, SectionKind::Sysprof, false);
  SysprofSample s;
  s.vmstate = kVmstNative;
  put_sysprof_sample(native, s);
  CHECK(first_error(native).find("bad sample header 0x0d") != std::string::npos);
}

TEST_CASE("prologues with unknown versions or revisions are rejected by name") {
  VecOut out = symtab_with({});
  put_prologue(out, SectionKind::Memprof, true);
  out.b[out.b.size() - 4] = 0x84;  // ljm v4, extended
  CHECK(first_error(out).find("memprof 'ljm' version 4 is not supported") != std::string::npos);
  out.b[out.b.size() - 4] = 0x83;
  out.b[out.b.size() - 3] = 9;  // extension revision 9
  CHECK(first_error(out).find("libprof extension revision 9 is not supported") !=
        std::string::npos);
  VecOut wrong = symtab_with({});
  wrong.b[2] = 'x';
  CHECK(first_error(wrong) == "corrupt at byte 0: unknown section magic 'ljx'");
}

TEST_CASE("skip records cover exactly the gap they fill, whatever its size") {
  // Around every size at which the length's ULEB128 grows a byte.
  for (uint64_t total : {2, 3, 128, 129, 130, 131, 132, 16385, 16386, 16387, 16388, 65538}) {
    INFO("gap of " << total << " bytes");
    VecOut out = symtab_with({});
    put_prologue(out, SectionKind::Memprof, true);
    uint8_t header[16];
    const size_t n = put_skip_header(header, total);
    REQUIRE(n <= total);
    out.b.insert(out.b.end(), header, header + n);
    out.b.insert(out.b.end(), total - n, 0xab);  // whatever the gap held
    const size_t marker_at = out.b.size();
    put_ext(out, ext::MarkerView{7, "after"});
    put_memprof_epilogue(out);

    ByteReader in(out.b.data(), out.b.size());
    SymtabReader symtab(in);
    Symbol sym;
    REQUIRE_FALSE(symtab.next(sym));
    MemprofReader reader(in);
    MemprofEvent ev;
    int skips = 0;
    while (reader.next(ev) && ev.record == MemprofRecord::Ext && ext_kind(ev.ext) == ExtKind::Skip) skips++;
    CHECK((skips == 1 || skips == 2));  // two only where one cannot come out exact
    CHECK(ev.offset == marker_at);
    REQUIRE(ext_kind(ev.ext) == ExtKind::Marker);
    CHECK(std::get<ext::Marker>(ev.ext).label == "after");
  }
}

TEST_CASE("hostile lengths fail without allocating what they claim") {
  VecOut out = symtab_with({});
  out.b.pop_back();  // drop sym-final
  out.b.push_back(kSymCfunc);
  out.put_uleb(0x1000);
  out.put_uleb(uint64_t(1) << 60);  // a name claiming an exabyte
  out.b.insert(out.b.end(), {'a', 'b'});
  const std::string err = first_error(out);
  CHECK(err.find("exceeds the limit") != std::string::npos);

  VecOut deep = symtab_with({});
  put_prologue(deep, SectionKind::Sysprof, false);
  deep.put_u8(kVmstInterp);
  for (size_t i = 0; i < kMaxSampleFrames + 1; i++) deep.put_uleb(0x401000);
  deep.put_uleb(0);
  CHECK(first_error(deep).find("host stack deeper than 4096") != std::string::npos);

  VecOut skip = symtab_with({});
  put_prologue(skip, SectionKind::Memprof, true);
  skip.put_u8(ext_header(ExtKind::Skip));
  skip.put_uleb(uint64_t(1) << 40);
  CHECK(first_error(skip).find("skip record claims 1099511627776 bytes") != std::string::npos);

  for (uint64_t type : {uint64_t(0), uint64_t(kMaxObjectType + 1)}) {
    VecOut typed = symtab_with({});
    put_prologue(typed, SectionKind::Memprof, true);
    put_ext(typed, ext::ObjectType{type});
    CHECK(first_error(typed).find("object-type record with unknown type " + std::to_string(type)) !=
          std::string::npos);
  }
}
