// StreamCompactor: on their way from the event ring to the file, turns the
// ring's allocation events (ring_event.h) into compact events (format/ext.h:
// site, alloc-at, free-of, free-at, realloc-of), keeping the map of live
// addresses on the ring's writer, off the program's threads, as heaptrack's
// interpreter does: a stream of them compresses about ten times smaller.
// Not compacting (a plain stream, for memprof readers), it only encodes
// them as memprof events, which is also what an event becomes that cannot
// be compacted. Every other record passes as it is. An event made by
// another thread than the previous event goes after an event-thread record
// (ext.h) naming its thread.
//
// Invariants:
// - Raw (raw_thread.h): no allocation (its tables live in memory it maps
//   itself, raw_table.h), no lock, no errno, no thread-local. One writer at
//   a time (the ring's flag) calls put() and flush().
// - Records come whole or cut anywhere (a write stops at the ring's end); a
//   record's start waits in carry_ until the rest comes. Skips (ext.h) are
//   passed over as their bytes come, never kept.
// - Pairing stays exact (format/README.md: a release pairs with the oldest
//   live block at its address): an allocation at an address the map holds
//   live (a reuse the file shows before its free) stays an event with its
//   address, as does a release of an address the map does not hold, and
//   readers pair those among themselves. So does everything once a table
//   cannot grow. Such events are counted: the compactor's counters join
//   the stream's stats record (or make one before the epilogue).
// - Before arm(), bytes pass as they are (the stream's opening).
// - Kept in the ring file (keep_table_in()), each change of the live blocks
//   is logged before it is made (undo log: address, and the block's ref with
//   bit 63 set for an addition), so that a reader finds the table as it was
//   at the file's durable point (format/ring_file.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloc_event.h"
#include "ext.h"
#include "guest_loc.h"
#include "stream/raw_table.h"

namespace prof {

class StreamCompactor {
 public:
  // Where bytes go on: 0, or -errno (the stream ends there).
  using Sink = long (*)(void *ctx, const uint8_t *data, size_t len);

  // Maps the buffers (once per process); false when they cannot be had.
  // Not compacting, events only become memprof events.
  bool init(bool compacting);
  // Unmaps the buffers and tables (the agent is off for good).
  void release();
  // A new stream (also in a forked child): empty tables, bytes passing as
  // they are until arm().
  void start();
  // The live blocks' table goes to `file` (the ring file, event_ring.h),
  // emptied, and its changes to the undo log beside it.
  void keep_table_in(TableFile *file);
  // A block's ref: its site << kRefNumberBits | its number within the site.
  static constexpr unsigned kRefNumberBits = 40;
  // The bytes from now on are memprof records.
  void arm() { armed_ = true; }
  // Takes [data, data + len); what it has made of whole records goes to
  // sink now or at a later put() or flush().
  long put(const uint8_t *data, size_t len, Sink sink, void *ctx);
  // Everything made so far goes to sink (a record still cut waits).
  long flush(Sink sink, void *ctx);

 private:
  static constexpr size_t kCarry = 1 << 16;  // longer than any record but a skip
  static constexpr size_t kOut = 1 << 16;
  static constexpr size_t kMaxOutRecord = 512;  // what one record can become
  static constexpr size_t kCompactorStats = 5;  // the counters it adds to the stats

  // A live block: its address, and its site and number (site << kNumberBits).
  struct Block {
    uint64_t addr, ref;
    bool empty() const { return addr == 0; }
    // XXX: the blocks of one KiB stay side by side (64 slots, as 16-byte
    // units), as allocators hand them out and programs free them: the
    // table's lines stay in cache. Each KiB goes to a slot of its own.
    uint64_t hash() const {
      return ((addr >> 10) * 0x9E3779B97F4A7C15ull >> 20) << 6 | (addr >> 4 & 63);
    }
    bool same(const Block &o) const { return addr == o.addr; }
  };
  // An allocation site: everything of an event but its address.
  struct Site {
    uint64_t key[5];  // head | type << 8 | line-or-trace << 16, loc addr, host, guest, size
    uint64_t id;
    bool empty() const { return id == 0; }
    uint64_t hash() const;
    bool same(const Site &o) const;
  };
  // What the site's releases name blocks by (ext.h's ages).
  struct SiteBlocks {
    uint64_t made, last_age;
  };
  static constexpr unsigned kNumberBits = kRefNumberBits;
  // carry_, out_ and site_blocks_, mapped as one.
  static constexpr size_t kCarryMapBytes = kCarry + kOut + (kMaxSites + 1) * sizeof(SiteBlocks);

  // A ring event read ahead of its turn (put()).
  static constexpr size_t kAhead = 16;
  struct Ahead;
  // Reads the ring event at the start of [p, p + len), when it is whole
  // there, and prefetches its blocks' and its site's slots: its length, or
  // 0 (anything else, which take() handles).
  size_t read_ahead(const uint8_t *p, size_t len, Ahead *a);
  // Handles the record at the start of [p, p + len): how many bytes it
  // took, 0 when it needs more, or -1 when the bytes are no record.
  long take(const uint8_t *p, size_t len);
  // An allocation event, with its object type (0: none), made by thread tid.
  void take_event(const AllocEvent &e, uint8_t type, uint32_t tid);
  // The event as a memprof event, after its object-type record.
  void emit_event(const AllocEvent &e, uint8_t type);
  // The key of the site of this location, stacks, size and type.
  static Site site_key(uint8_t head, const GuestLoc &loc, uint64_t host, uint64_t guest,
                       uint64_t size, uint8_t type);
  // The id of the site of this location, stacks, size and type (its record
  // written first if new); 0 when the table is full.
  uint64_t site_of(uint8_t head, const GuestLoc &loc, uint64_t host, uint64_t guest, uint64_t size,
                   uint8_t type);
  // Takes addr's block out of the map: its site, or 0 when not there; the
  // release's age-step in *step.
  uint64_t release(uint64_t addr, uint64_t *step);
  // Puts a new block of `site` at addr in the map; false when it cannot be.
  bool make(uint64_t addr, uint64_t site);
  bool live(uint64_t addr);
  // Logs a change of the live blocks before it is made (keep_table_in()).
  void log_change(uint64_t addr, uint64_t ref);
  template <class Record>
  void emit_record(const Record &r);
  void emit(const uint8_t *data, size_t len);
  // A stats record: `count` counters of the stream's (their `len` bytes at
  // `counters`), then the compactor's own.
  void emit_stats(const uint8_t *counters, size_t count, size_t len);
  // Bytes to the sink as they are; the output buffer to the sink.
  void pass(const uint8_t *data, size_t len);
  void drain();

  Sink sink_ = nullptr;  // put()'s or flush()'s, while it runs
  void *ctx_ = nullptr;
  long err_ = 0;
  uint8_t *carry_ = nullptr, *out_ = nullptr;
  size_t carry_len_ = 0, out_len_ = 0;
  uint64_t skip_left_ = 0;
  bool compacting_ = true;
  bool armed_ = false, broken_ = false;
  bool stats_written_ = false;  // the stream's stats record carried ours
  RawTable<Block> blocks_;
  TableFile *table_file_ = nullptr;
  RawTable<Site> sites_;
  SiteBlocks *site_blocks_ = nullptr;  // by site id
  uint64_t next_site_ = 1;
  Site last_site_{};  // the last site found or made
  uint32_t last_tid_ = 0;  // the thread of the last event (0: none yet)
  uint64_t plain_events_ = 0, compact_events_ = 0;
  uint64_t split_reallocs_ = 0;   // written as a compact free and a plain allocation
  uint64_t locations_lost_ = 0;   // frees written without their location (table full)
};

}  // namespace prof
