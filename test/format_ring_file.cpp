// The ring file (ring_file.h): a stream read up to its durable point, then
// the ring's records, pairing frees with the compact blocks of the table as
// it was at the durable point (its undo log undone), skipping holes, and
// ending where a reservation of unknown extent starts.
#include <catch2/catch.hpp>

#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "compact_events.h"
#include "ext.h"
#include "memprof.h"
#include "prologue.h"
#include "ring_event.h"
#include "ring_file.h"
#include "symtab.h"
#include "temp_files.h"
#include "vec_out.h"

using namespace prof;

namespace {

void write_file(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr uint64_t kRing = 4096, kSlots = 2, kUndoCap = 8;

struct RingImage {
  std::vector<uint64_t> header = std::vector<uint64_t>(kRingHeaderBytes / 8);
  std::vector<uint64_t> slots = std::vector<uint64_t>((kSlots + 1) * kRingSlotBytes / 8);
  std::vector<uint8_t> ring = std::vector<uint8_t>(kRing);
  std::vector<uint64_t> undo = std::vector<uint64_t>(kUndoCap * 2);
  std::vector<uint64_t> table;
  uint64_t head = 0;

  // Appends bytes at the head, wrapping round the ring.
  void put(const std::vector<uint8_t> &bytes) {
    for (uint8_t b : bytes) ring[head++ % kRing] = b;
  }
  void event(const AllocEvent &e, uint32_t tid = 0) {
    std::vector<uint8_t> b(kMaxRingEventBytes);
    b.resize(put_ring_event(b.data(), e, 0, tid));
    put(b);
  }
  void slot(size_t i, uint64_t from, uint64_t end) {
    slots[i * kRingSlotBytes / 8] = from;
    slots[i * kRingSlotBytes / 8 + 1] = end;
  }
  void write(const std::string &path) {
    const uint64_t ring_off = ring_file_ring_offset(kSlots);
    const uint64_t table_off = ring_off + kRing + kUndoCap * 16;
    header[kRwMagic] = kRingFileMagic;
    header[kRwVersion] = kRingFileVersion;
    header[kRwRingBytes] = kRing;
    header[kRwSlots] = kSlots;
    header[kRwUndoCap] = kUndoCap;
    header[kRwHead] = head;
    header[kRwTableOffset] = table_off;
    header[kRwTableSlots] = table.size() / 2;
    std::string bytes(table_off + table.size() * 8, '\0');
    memcpy(&bytes[0], header.data(), kRingHeaderBytes);
    memcpy(&bytes[kRingSlotsOffset], slots.data(), slots.size() * 8);
    memcpy(&bytes[ring_off], ring.data(), kRing);
    memcpy(&bytes[ring_off + kRing], undo.data(), undo.size() * 8);
    memcpy(&bytes[table_off], table.data(), table.size() * 8);
    write_file(path, bytes);
  }
};

AllocEvent alloc(uint64_t addr, uint64_t size) {
  AllocEvent e{};
  e.aevent = kAeventAlloc;
  e.naddr = addr, e.nsize = size;
  return e;
}
AllocEvent release(uint64_t addr) {
  AllocEvent e{};
  e.aevent = kAeventFree;
  e.oaddr = addr;
  return e;
}

uint64_t ref(uint64_t site, uint64_t number) { return site << kRingRefNumberBits | number; }

struct Read {
  std::vector<MemprofEvent> events;
  std::vector<uint64_t> tids;  // each event's thread (event-thread; 0: none said)
  bool unclean = false;
  uint64_t lost = 0;
};

Read read_stream(const std::string &path) {
  RingTail tail;
  REQUIRE(ring_tail(path, &tail));
  const int fd = open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  ByteReader in(fd, tail.file_bytes, tail.records);
  SymtabReader symtab(in);
  for (Symbol sym; symtab.next(sym);) {
  }
  MemprofReader reader(in);
  Read r;
  uint64_t tid = 0;
  for (MemprofEvent ev; reader.next(ev);) {
    if (ev.record == MemprofRecord::Ext) {
      if (const auto *t = std::get_if<ext::EventThread>(&ev.ext)) tid = t->tid;
      if (const auto *u = std::get_if<ext::UncleanEnd>(&ev.ext)) r.unclean = true, r.lost = u->lost_bytes;
      continue;
    }
    r.events.push_back(ev);
    r.tids.push_back(tid);
  }
  close(fd);
  return r;
}

}  // namespace

TEST_CASE("ring file: the stream's durable part, then the ring's records, paired with the table at that point") {
  const TempDir dir("ringfile");
  const std::string stream = dir / "prof.1.memprof";
  // The durable part: three compact blocks of site 1, then bytes the
  // process wrote past the durable point, which are not read.
  VecOut out;
  put_prologue(out, SectionKind::Symtab, false);
  put_symtab_final(out);
  put_prologue(out, SectionKind::Memprof, true);
  put_ext(out, ext::Site{1, GuestLoc{}, false, 0, 0, 48, 0});
  for (int i = 0; i < 3; i++) put_ext(out, ext::AllocAt{1});
  const size_t durable = out.b.size();
  out.b.push_back(0x55);
  write_file(stream, std::string(out.b.begin(), out.b.end()));

  RingImage img;
  img.header[kRwDurableFile] = durable;
  // From 4000, so that the records wrap round the ring's end.
  img.head = 4000;
  img.header[kRwDurablePos] = img.header[kRwUndoFrom] = 4000;
  // The table after two changes past the durable point (0xa0's block taken
  // out, 0xc0 added), with 0xa1 twice, as an erase moving it leaves it.
  img.table = {0xa1, ref(1, 1), 0, 0, 0xa2, ref(1, 2), 0xa1, ref(1, 1), 0xc0, ref(1, 3), 0, 0};
  img.undo[0] = 0xa0, img.undo[1] = ref(1, 0);
  img.undo[2] = 0xc0, img.undo[3] = kRingUndoAdded | ref(1, 3);
  img.header[kRwUndoLen] = 2;
  // Made by threads 5 and 6: the first names its thread (the writer's last
  // is unknown), and so does each switch.
  img.event(release(0xa1), 5);
  img.event(release(0xa0), 5);
  img.event(alloc(0xb0, 77), 6);
  const uint64_t hole = img.head;
  img.put(std::vector<uint8_t>(24, 0xee));  // a thread's reservation, never finished
  img.slot(0, hole, hole + 24);
  img.event(release(0xb0), 6);
  img.event(release(0xc0), 5);  // not live at the durable point: an address
  const uint64_t cut = img.head;
  img.put(std::vector<uint8_t>(40, 0xdd));  // past a reservation of unknown extent
  img.slot(1, cut, 0);
  img.slot(2, kRingSlotIdle, 0);
  img.write(stream + ".ring");

  const Read r = read_stream(stream);
  REQUIRE(r.events.size() == 3 + 5);
  CHECK(r.events[3].record == MemprofRecord::Free);
  CHECK(r.events[3].oaddr == CompactEvents::block_key(1, 1));
  CHECK(r.events[4].oaddr == CompactEvents::block_key(1, 0));
  CHECK(r.events[5].record == MemprofRecord::Alloc);
  CHECK(r.events[5].naddr == 0xb0);
  CHECK(r.events[5].nsize == 77);
  CHECK(r.events[6].oaddr == 0xb0);
  CHECK(r.events[7].oaddr == 0xc0);
  CHECK(r.tids == std::vector<uint64_t>{0, 0, 0, 5, 5, 6, 6, 5});
  CHECK(r.unclean);
  CHECK(r.lost == 24 + 40);
}

TEST_CASE("ring file: a void one, or one of another version, is not read") {
  const TempDir dir("ringfile");
  const std::string stream = dir / "prof.1.memprof";
  write_file(stream, "ljs");
  RingImage img;
  img.header[kRwEnded] = 1;
  img.write(stream + ".ring");
  RingTail tail;
  CHECK_FALSE(ring_tail(stream, &tail));
  RingImage other;
  other.write(stream + ".ring");
  std::string bytes = read_file(stream + ".ring");
  bytes[8] = 2;  // the version
  write_file(stream + ".ring", bytes);
  CHECK_FALSE(ring_tail(stream, &tail));
  write_file(stream + ".ring", bytes.substr(0, 5000));  // cut
  CHECK_FALSE(ring_tail(stream, &tail));
}
