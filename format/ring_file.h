// The ring file: the agent's event ring kept in a file beside the stream
// (`<stream>.ring`), mapped shared, so that every record a thread has
// finished appending is in the file's pages at once and outlives the
// process (kill -9, exit_group, a fatal signal, a killed PID namespace, a
// debugger ending it). The stream's writer removes it once the stream ends
// cleanly; a reader that finds one beside a stream takes the stream up to
// the durable point, then the records of the ring after it (ring_tail()).
//
//   ring-file := header slots ring undo table*
//   header    := 4096 bytes of u64 words (the machine's byte order, x86-64):
//     [0] magic "libprofR"   [1] version (kRingFileVersion)
//     [2] ring-bytes (a power of two)   [3] slot-count   [4] undo-cap
//     [8] durable-pos  [9] durable-file-bytes   (stored together)
//     [10] ended: 1 once the stream ended cleanly (the ring file is void)
//     [11] time: the last time mark's time (ns since the stream's start)
//     [16] undo-from   [17] undo-len
//     [20] table-offset   [21] table-slots       (stored together)
//     [24] head: the ring bytes reserved so far
//   slots     := (slot-count + 1) x 64 bytes at kSlotsOffset: busy-from,
//                busy-end (u64 words), then 48 bytes of the writer's own
//   ring      := ring-bytes at kRingOffset: ring position p at p mod ring-bytes
//   undo      := undo-cap x (u64 addr, u64 ref) after the ring
//   table     := table-slots x (u64 addr, u64 ref) at table-offset; addr 0: empty
//
// - durable-pos: the ring bytes before it are in the stream file, which
//   holds the stream up to them in its first durable-file-bytes bytes (a
//   compressed file's blocks end there); the ring's bytes from it on are
//   kept until the next durable point.
// - The records in the ring are the stream's records as the agent's threads
//   append them: memprof's records, except that allocation events are ring
//   events (ring_event.h). A slot (each thread's) says a thread may be
//   writing at or after busy-from (kIdle: none); when busy-end is above
//   busy-from it is the exact end of that reservation (kWritten set: the
//   record is whole). Everything below head and every busy-from is whole.
// - table: the live blocks of compact events (ext.h) at durable-pos: an
//   address, and its block's site << 40 | number within the site. Entries
//   may repeat while the writer moves one; the set is what counts. The
//   undo log, if undo-from equals durable-pos, lists the table's changes
//   made past durable-pos, oldest first: ref bit 63 set, addr was added;
//   clear, addr (with ref) was taken out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace prof {

constexpr uint64_t kRingFileMagic = 0x52666f7270626c69ull;  // "libprofR"
constexpr uint64_t kRingFileVersion = 1;
constexpr size_t kRingHeaderBytes = 4096;
constexpr size_t kRingSlotsOffset = kRingHeaderBytes;
constexpr size_t kRingSlotBytes = 64;
constexpr uint64_t kRingSlotIdle = ~uint64_t(0);
constexpr uint64_t kRingSlotWritten = uint64_t(1) << 63;
constexpr uint64_t kRingUndoAdded = uint64_t(1) << 63;
constexpr unsigned kRingRefNumberBits = 40;

// Header word indexes.
enum RingWord : size_t {
  kRwMagic = 0, kRwVersion = 1, kRwRingBytes = 2, kRwSlots = 3, kRwUndoCap = 4,
  kRwDurablePos = 8, kRwDurableFile = 9, kRwEnded = 10, kRwTime = 11,
  kRwUndoFrom = 16, kRwUndoLen = 17,
  kRwTableOffset = 20, kRwTableSlots = 21,
  kRwHead = 24,
};

// Where the ring starts, after the header and the slots (64 KiB aligned).
constexpr size_t ring_file_ring_offset(size_t slots) {
  return (kRingSlotsOffset + (slots + 1) * kRingSlotBytes + 0xffff) & ~size_t(0xffff);
}

// What a reader makes of a ring file.
struct RingTail {
  uint64_t file_bytes = 0;  // the stream file's bytes to read
  std::string records;      // then these: the ring's records, an unclean end, the epilogue
  uint64_t events = 0;      // allocation events among them
  uint64_t lost_bytes = 0;  // ring bytes no thread finished (not readable)
};

// The ring file beside the stream `stream_path`, if there is one that is
// not void: true, with *tail filled. A ring file that is no ring file (or
// cut) is ignored: false.
bool ring_tail(const std::string &stream_path, RingTail *tail);

}  // namespace prof
