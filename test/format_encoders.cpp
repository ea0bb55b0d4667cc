// What the agent's encoders write, byte for byte, against the grammars in
// format/'s headers. Every expected byte is derived by hand from the grammar
// (the derivation is in the comments), never copied from the program's own
// output. ULEB128s used below:
//   0 -> 00, 7 -> 07, 12 -> 0c, 42 -> 2a, 77 -> 4d, 127 -> 7f, 128 -> 80 01,
//   256 -> 80 02, 300 -> ac 02 (300 = 2 * 128 + 44, 44 = 0x2c),
//   400 -> 90 03 (3 * 128 + 16), 1000 -> e8 07 (7 * 128 + 104, 104 = 0x68),
//   1234 -> d2 09 (9 * 128 + 82, 82 = 0x52), 0x1000 = 4096 -> 80 20 (32 * 128),
//   0x2000 -> 80 40, 0x80000 -> 80 80 20 (32 * 128 * 128),
//   1000000 -> c0 84 3d (61 * 16384 + 4 * 128 + 64),
//   0x401000 -> 80 a0 80 02 (2 * 2^21 + 32 * 2^7),
//   UINT64_MAX -> ff x 9, 01 (ten bytes, the longest).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "ext.h"
#include "libprof.h"
#include "memprof.h"
#include "prologue.h"
#include "ring_event.h"
#include "stream_writer.h"
#include "symtab.h"
#include "sysprof.h"

using namespace prof;
using Bytes = std::vector<uint8_t>;

namespace {

// The bytes encode(out) writes through a SpanWriter (the hooks and the signal
// handler), checked equal to what a StreamWriter (the CPU stream) delivers.
template <class Encode>
Bytes written(Encode &&encode) {
  static uint8_t span_buf[1 << 16];
  SpanWriter span(span_buf);
  encode(span);
  const Bytes bytes(span.data(), span.data() + span.size());

  std::string delivered;
  uint8_t small[16];  // flushes mid-record
  StreamWriter stream(
      small, sizeof small,
      [](void *ctx, const uint8_t *p, size_t n) {
        static_cast<std::string *>(ctx)->append(reinterpret_cast<const char *>(p), n);
        return true;
      },
      &delivered);
  encode(stream);
  REQUIRE(stream.flush());
  CHECK(Bytes(delivered.begin(), delivered.end()) == bytes);
  return bytes;
}

template <class Record>
Bytes ext_bytes(const Record &r) {
  return written([&r](auto &out) { put_ext(out, r); });
}

Bytes event_bytes(const AllocEvent &e) {
  return written([&e](auto &out) { put_memprof_event(out, e); });
}

Bytes with_text(Bytes head, const std::string &text, Bytes tail = {}) {
  head.insert(head.end(), text.begin(), text.end());
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

constexpr uint64_t kMax = UINT64_MAX;

}  // namespace

TEST_CASE("prologues, symtab-final and epilogues are the grammar's bytes") {
  // magic, version [XVVVVVVV], extension revision, 0, 0
  CHECK(written([](auto &o) { put_prologue(o, SectionKind::Symtab, false); }) ==
        Bytes{'l', 'j', 's', 0x03, 0x00, 0x00, 0x00});
  CHECK(written([](auto &o) { put_prologue(o, SectionKind::Memprof, true); }) ==
        Bytes{'l', 'j', 'm', 0x83, 0x07, 0x00, 0x00});
  CHECK(written([](auto &o) { put_prologue(o, SectionKind::Sysprof, true); }) ==
        Bytes{'l', 'j', 'p', 0x82, 0x07, 0x00, 0x00});
  CHECK(written([](auto &o) { put_symtab_final(o); }) == Bytes{0x80});
  CHECK(written([](auto &o) { put_memprof_epilogue(o); }) == Bytes{0x80});
  CHECK(written([](auto &o) { put_sysprof_epilogue(o); }) == Bytes{0x80});
}

TEST_CASE("memprof events: header [FXHSSSEE], location, stacks, then their sizes only") {
  // alloc (EE 01), source NONE (SSS 000), H: 0010 0001 = 0x21; host 3, guest
  // 0; naddr, nsize. The oaddr of an alloc is not written.
  CHECK(event_bytes(AllocEvent{kAeventAlloc, {}, true, 3, 0, 7, 7, 0x1000, 300}) ==
        Bytes{0x21, 0x03, 0x00, 0x80, 0x20, 0xac, 0x02});
  // free (10), INTERNAL (001), no H: 0000 0110; oaddr, osize 0 (unknown).
  CHECK(event_bytes(
            AllocEvent{kAeventFree, {kAsourceInternal, 9, 9, 9}, false, 0, 0, 0x1000, 0, 7, 7}) ==
        Bytes{0x06, 0x80, 0x20, 0x00});
  // realloc (11), Lua (010), H: 0010 1011; prototype 256, line 12; host 5,
  // guest 6; oaddr, osize; naddr, nsize.
  CHECK(event_bytes(AllocEvent{
            kAeventRealloc, {kAsourceLfunc, 256, 12, 0}, true, 5, 6, 0x1000, 0, 0x2000, 48}) ==
        Bytes{0x2b, 0x80, 0x02, 0x0c, 0x05, 0x06, 0x80, 0x20, 0x00, 0x80, 0x40, 0x30});
  // alloc, C function (011): 0000 1101; its address, no line.
  CHECK(
      event_bytes(AllocEvent{kAeventAlloc, {kAsourceCfunc, 127, 9, 9}, false, 0, 0, 0, 0, 1, 2}) ==
      Bytes{0x0d, 0x7f, 0x01, 0x02});
  // free, JIT trace (100): 0001 0010; trace-no.
  CHECK(event_bytes(AllocEvent{kAeventFree, {kAsourceTrace, 9, 9, 3}, false, 0, 0, 9, 0, 0, 0}) ==
        Bytes{0x12, 0x03, 0x09, 0x00});
  // The longest: a realloc with every field of the most bytes.
  const GuestLoc widest_loc{kAsourceLfunc, kMax, kMax, 0};
  const AllocEvent widest{kAeventRealloc, widest_loc, true, kMax, kMax, kMax, kMax, kMax, kMax};
  CHECK(event_bytes(widest).size() == kMaxEventBytes);
}

TEST_CASE("ring events: tag, header, object type and the thread's tid in the head word") {
  // A typed alloc with stacks by thread 0x01020304: the head word's bytes
  // (little-endian) tag, header 0x21, type 2, the tid, one pad byte; then
  // host, guest, naddr, nsize as words.
  const AllocEvent e{kAeventAlloc, {}, true, 3, 4, 0, 0, 0x1000, 300};
  uint8_t buf[kMaxRingEventBytes];
  REQUIRE(put_ring_event(buf, e, 2, 0x01020304) == kRingEventHead + 4 * 8);
  CHECK(Bytes(buf, buf + kRingEventHead) ==
        Bytes{kRingEventTag, 0x21, 0x02, 0x04, 0x03, 0x02, 0x01, 0x00});
  AllocEvent back;
  uint8_t type = 0;
  uint32_t tid = 0;
  read_ring_event(buf, &back, &type, &tid);
  CHECK(type == 2);
  CHECK(tid == 0x01020304);
  CHECK(back.host_stack == 3);
  CHECK(back.guest_stack == 4);
  CHECK(back.naddr == 0x1000);
  CHECK(back.nsize == 300);
}

TEST_CASE("guest symbols in each stream: its header, then the symtab body") {
  const SymbolView lua{kSymLfunc, 256, 7, 0, "@a.lua"};
  const SymbolView c{kSymCfunc, 0x10, 9, 0, "f"};
  // memprof event-symtab: [FXHSSSEE] with EE 00, SSS the symbol kind
  // (2 sym-lua: 0x08, 3 sym-cfunc: 0x0c); sym-addr, string, sym-line (Lua).
  CHECK(written([&](auto &o) { put_memprof_symbol(o, lua); }) ==
        with_text({0x08, 0x80, 0x02, 0x06}, "@a.lua", {0x07}));
  CHECK(written([&](auto &o) { put_memprof_symbol(o, c); }) == Bytes{0x0c, 0x10, 0x01, 'f'});
  // sysprof sample-symtab: header 10 (lfunc), 11 (cfunc); the same body.
  CHECK(written([&](auto &o) { put_sysprof_symbol(o, lua); }) ==
        with_text({0x0a, 0x80, 0x02, 0x06}, "@a.lua", {0x07}));
  CHECK(written([&](auto &o) { put_sysprof_symbol(o, c); }) == Bytes{0x0b, 0x10, 0x01, 'f'});
}

TEST_CASE("a long symbol name is cut to the same 400 bytes in both streams") {
  const std::string chunk(1000, 'x');
  const SymbolView lua{kSymLfunc, 256, 7, 0, chunk};
  const Bytes body = with_text({0x80, 0x02, 0x90, 0x03}, std::string(400, 'x'), {0x07});
  Bytes memprof{0x08}, sysprof{0x0a};
  memprof.insert(memprof.end(), body.begin(), body.end());
  sysprof.insert(sysprof.end(), body.begin(), body.end());
  CHECK(written([&](auto &o) { put_memprof_symbol(o, lua); }) == memprof);
  CHECK(written([&](auto &o) { put_sysprof_symbol(o, lua); }) == sysprof);
  const SymbolView widest{kSymLfunc, kMax, kMax, 0, chunk};
  CHECK(written([&](auto &o) { put_memprof_symbol(o, widest); }).size() <= kMaxSymbolRecordBytes);
}

TEST_CASE("sysprof samples from the handler's own frames") {
  const uint64_t host[] = {0x401000, 0x10};
  const prof_guest_frame guest[] = {
      {PROF_FRAME_LFUNC, 256, 7},
      {PROF_FRAME_FFUNC, 21, 99},  // an ffid; no line written
      {7, 1, 1},                   // no such frame type: left out
      {PROF_FRAME_CFUNC, 0x10, 5},
  };
  auto sample = [&](uint8_t vmstate, Span<uint64_t> h) {
    return written(
        [&](auto &o) { put_sysprof_stacks(o, vmstate, Span<prof_guest_frame>(guest), h); });
  };
  // NATIVE (13): stack-host only, ended by 0; the guest frames are not written.
  CHECK(sample(kVmstNative, host) == Bytes{0x0d, 0x80, 0xa0, 0x80, 0x02, 0x10, 0x00});
  CHECK(sample(kVmstGc, host) == Bytes{0x04, 0x80, 0xa0, 0x80, 0x02, 0x10, 0x00});
  // LFUNC (1): stack-lua (frame-header, fields; 0x80 ends it), then stack-host.
  CHECK(sample(kVmstLfunc, Span<uint64_t>(host + 1, 1)) ==
        Bytes{0x01, 0x01, 0x80, 0x02, 0x07, 0x03, 0x15, 0x02, 0x10, 0x80, 0x10, 0x00});
  // A host frame 0 would end stack-host early: it is left out.
  const uint64_t with_zero[] = {0x10, 0, 0x20};
  CHECK(sample(kVmstInterp, with_zero) == Bytes{0x00, 0x10, 0x20, 0x00});
  // TRACE (9): trace-no, prototype, line.
  CHECK(written([](auto &o) { put_sysprof_trace(o, 3, 256, 12); }) ==
        Bytes{0x09, 0x03, 0x80, 0x02, 0x0c});
  // The longest, as the handler's buffer is sized.
  const prof_guest_frame widest_guest[] = {{PROF_FRAME_LFUNC, kMax, kMax},
                                           {PROF_FRAME_LFUNC, kMax, kMax}};
  const uint64_t widest_host[] = {kMax, kMax, kMax};
  CHECK(written([&](auto &o) {
          put_sysprof_stacks(o, kVmstCfunc, Span<prof_guest_frame>(widest_guest),
                             Span<uint64_t>(widest_host));
        }).size() == max_sample_bytes(2, 3));
}

TEST_CASE("extension records: header 01KKKKKK, then their body") {
  CHECK(ext_bytes(ext::StackHost{1, 0, 0x401000}) ==
        Bytes{0x41, 0x01, 0x00, 0x80, 0xa0, 0x80, 0x02});
  CHECK(ext_bytes(ext::StackGuest{2, 1, kFrameLfunc, 256, 12}) ==
        Bytes{0x42, 0x02, 0x01, 0x01, 0x80, 0x02, 0x0c});
  CHECK(ext_bytes(ext::ModuleLoadView{0x1000, 300, "/l", std::string_view("\x01\xff", 2)}) ==
        Bytes{0x43, 0x80, 0x20, 0xac, 0x02, 0x02, '/', 'l', 0x02, 0x01, 0xff});
  CHECK(ext_bytes(ext::ModuleUnload{0x1000}) == Bytes{0x44, 0x80, 0x20});
  CHECK(ext_bytes(ext::TimeMark{1000, 2, 0}) == Bytes{0x45, 0xe8, 0x07, 0x02, 0x00});
  CHECK(ext_bytes(ext::HeapTotal{1000, 300}) == Bytes{0x53, 0xe8, 0x07, 0xac, 0x02});
  CHECK(ext_bytes(ext::TraceSample{23, 0x1000, 12}) == Bytes{0x5b, 0x17, 0x80, 0x20, 0x0c});
  // thread-name (28): tid, then the name, cut to the kernel's 15 bytes.
  CHECK(ext_bytes(ext::ThreadNameView{300, "w1"}) == Bytes{0x5c, 0xac, 0x02, 0x02, 'w', '1'});
  CHECK(ext_bytes(ext::ThreadNameView{1, "a-name-of-twenty-bytes"}).size() == 1 + 1 + 1 + 15);
  // event-thread (29): the tid alone.
  CHECK(ext_bytes(ext::EventThread{300}) == Bytes{0x5d, 0xac, 0x02});
  // attached (kind 30: 0x5e), attach-number 2.
  CHECK(ext_bytes(ext::Attached{2}) == Bytes{0x5e, 0x02});
  CHECK(ext_bytes(ext::Sampling{0x80000}) == Bytes{0x46, 0x80, 0x80, 0x20});
  CHECK(ext_bytes(ext::MarkerView{77, "go"}) == Bytes{0x47, 0x4d, 0x02, 'g', 'o'});
  const ext::StatView stats[] = {{"a", 1}, {"bc", 300}};
  CHECK(ext_bytes(ext::StatsView{stats}) ==
        Bytes{0x48, 0x02, 0x01, 'a', 0x01, 0x02, 'b', 'c', 0xac, 0x02});
  CHECK(ext_bytes(ext::Map{0x1000, 0x2000, 3, 4}) ==
        Bytes{0x49, 0x80, 0x20, 0x80, 0x40, 0x03, 0x04});
  CHECK(ext_bytes(ext::Unmap{0x1000, 128}) == Bytes{0x4a, 0x80, 0x20, 0x80, 0x01});
  CHECK(ext_bytes(ext::ProcessView{42, 1, 5, "/x"}) ==
        Bytes{0x4b, 0x2a, 0x01, 0x05, 0x02, '/', 'x'});
  CHECK(ext_bytes(ext::Sampler{1, 2, 1000000}) == Bytes{0x4c, 0x01, 0x02, 0xc0, 0x84, 0x3d});
  CHECK(ext_bytes(ext::Thread{1234}) == Bytes{0x4d, 0xd2, 0x09});
  CHECK(ext_bytes(ext::Weight{3}) == Bytes{0x4e, 0x03});
  CHECK(ext_bytes(ext::UncleanEnd{1000, 96}) == Bytes{0x4f, 0xe8, 0x07, 0x60});
  CHECK(ext_bytes(ext::Skip{3}) == Bytes{0x50, 0x03, 0x00, 0x00, 0x00});
  CHECK(ext_bytes(ext::ObjectType{2}) == Bytes{0x54, 0x02});
  CHECK(ext_bytes(ext::WorkingDirView{"/w"}) == Bytes{0x55, 0x02, '/', 'w'});
}

TEST_CASE("put_skip_header starts skips that span exactly the gap") {
  auto header = [](uint64_t total) {
    uint8_t buf[16];
    return Bytes(buf, buf + put_skip_header(buf, total));
  };
  CHECK(header(2) == Bytes{0x50, 0x00});
  CHECK(header(10) == Bytes{0x50, 0x08});
  // 130 = 1 + 2 + 127, but 127 takes one byte, 128 two: an empty skip first,
  // then 128 = 1 + 1 + 126.
  CHECK(header(130) == Bytes{0x50, 0x00, 0x50, 0x7e});
  CHECK(header(131) == Bytes{0x50, 0x80, 0x01});  // 1 + 2 + 128
}

TEST_CASE("the owning records the readers return encode as their views do") {
  CHECK(ext_bytes(ext::ModuleLoad{0x1000, 300, "/l", "\x01"}) ==
        ext_bytes(ext::ModuleLoadView{0x1000, 300, "/l", "\x01"}));
  CHECK(ext_bytes(ext::Marker{77, "go"}) == ext_bytes(ext::MarkerView{77, "go"}));
  CHECK(ext_bytes(ext::Process{42, 1, 5, "/x"}) == ext_bytes(ext::ProcessView{42, 1, 5, "/x"}));
  const ext::StatView views[] = {{"a", 1}};
  CHECK(ext_bytes(ext::Stats{{{"a", 1}}}) == ext_bytes(ext::StatsView{views}));
  CHECK(ext_bytes(ExtRecord(ext::Weight{3})) == Bytes{0x4e, 0x03});
}

TEST_CASE("texts the encoders bound: paths, build-ids and labels") {
  // A path is cut at 4096 bytes (string-len 80 20); a build-id over 256
  // bytes is written empty rather than cut.
  const std::string long_path(5000, 'p'), long_id(257, 'i'), id(256, 'i');
  CHECK(ext_bytes(ext::ModuleLoadView{1, 2, long_path, long_id}) ==
        with_text({0x43, 0x01, 0x02, 0x80, 0x20}, std::string(4096, 'p'), {0x00}));
  CHECK(ext_bytes(ext::ModuleLoadView{1, 2, "/l", id}) ==
        with_text({0x43, 0x01, 0x02, 0x02, '/', 'l', 0x80, 0x02}, id));
  CHECK(ext_bytes(ext::ProcessView{1, 0, 0, long_path}) ==
        with_text({0x4b, 0x01, 0x00, 0x00, 0x80, 0x20}, std::string(4096, 'p')));
  CHECK(ext_bytes(ext::WorkingDirView{long_path}) ==
        with_text({0x55, 0x80, 0x20}, std::string(4096, 'p')));
  // A label is cut at 256 bytes (string-len 80 02).
  CHECK(ext_bytes(ext::MarkerView{0, std::string(300, 'm')}) ==
        with_text({0x47, 0x00, 0x80, 0x02}, std::string(256, 'm')));
}

TEST_CASE("kMaxBytes bounds each record the agent encodes into a fixed buffer") {
  CHECK(ext_bytes(ext::StackHost{kMax, kMax, kMax}).size() == ext::StackHost::kMaxBytes);
  CHECK(ext_bytes(ext::StackGuest{kMax, kMax, kMax, kMax, kMax}).size() ==
        ext::StackGuest::kMaxBytes);
  CHECK(ext_bytes(ext::ModuleUnload{kMax}).size() == ext::ModuleUnload::kMaxBytes);
  CHECK(ext_bytes(ext::TimeMark{kMax, kMax, kMax}).size() == ext::TimeMark::kMaxBytes);
  CHECK(ext_bytes(ext::HeapTotal{kMax, kMax}).size() == ext::HeapTotal::kMaxBytes);
  CHECK(ext_bytes(ext::Sampling{kMax}).size() == ext::Sampling::kMaxBytes);
  CHECK(ext_bytes(ext::Map{kMax, kMax, kMax, kMax}).size() == ext::Map::kMaxBytes);
  CHECK(ext_bytes(ext::Unmap{kMax, kMax}).size() == ext::Unmap::kMaxBytes);
  CHECK(ext_bytes(ext::Sampler{kMax, kMax, kMax}).size() == ext::Sampler::kMaxBytes);
  CHECK(ext_bytes(ext::Thread{kMax}).size() == ext::Thread::kMaxBytes);
  CHECK(ext_bytes(ext::Weight{kMax}).size() == ext::Weight::kMaxBytes);
  CHECK(ext_bytes(ext::UncleanEnd{kMax, kMax}).size() == ext::UncleanEnd::kMaxBytes);
  CHECK(ext_bytes(ext::ObjectType{kMax}).size() == ext::ObjectType::kMaxBytes);
  CHECK(ext_bytes(ext::EventThread{kMax}).size() == ext::EventThread::kMaxBytes);
  const std::string text(5000, 't');
  CHECK(ext_bytes(ext::ModuleLoadView{kMax, kMax, text, std::string(256, 'i')}).size() <=
        ext::ModuleLoadView::kMaxBytes);
  CHECK(ext_bytes(ext::ProcessView{kMax, kMax, kMax, text}).size() <= ext::ProcessView::kMaxBytes);
  CHECK(ext_bytes(ext::WorkingDirView{text}).size() <= ext::WorkingDirView::kMaxBytes);
  CHECK(ext_bytes(ext::MarkerView{kMax, text}).size() <= ext::MarkerView::kMaxBytes);
}
