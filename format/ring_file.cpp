#include "ring_file.h"

#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#include "compact_events.h"
#include "ext.h"
#include "memprof.h"
#include "record_extent.h"
#include "ring_event.h"
#include "stream_writer.h"

namespace prof {
namespace {

bool read_at(int fd, void *out, size_t len, uint64_t at) {
  auto *p = static_cast<uint8_t *>(out);
  while (len > 0) {
    const ssize_t n = pread(fd, p, len, off_t(at));
    if (n <= 0) return false;
    p += n, len -= size_t(n), at += uint64_t(n);
  }
  return true;
}

// The blocks of compact events live at the durable point: address -> ref.
using LiveTable = std::unordered_map<uint64_t, uint64_t>;

bool read_table(int fd, uint64_t file_size, const uint64_t *h, LiveTable *live) {
  const uint64_t off = h[kRwTableOffset], slots = h[kRwTableSlots];
  if (slots == 0) return true;
  if (slots > file_size / 16 || off > file_size - slots * 16) return false;
  std::vector<uint64_t> words(slots * 2);
  if (!read_at(fd, words.data(), slots * 16, off)) return false;
  for (uint64_t i = 0; i < slots; i++)
    if (words[2 * i]) (*live)[words[2 * i]] = words[2 * i + 1];
  // Changes made past the durable point, undone newest first.
  const uint64_t cap = h[kRwUndoCap], len = h[kRwUndoLen];
  if (h[kRwUndoFrom] != h[kRwDurablePos] || len == 0) return true;
  if (len > cap) return false;
  std::vector<uint64_t> undo(len * 2);
  const uint64_t undo_off = ring_file_ring_offset(h[kRwSlots]) + h[kRwRingBytes];
  if (!read_at(fd, undo.data(), len * 16, undo_off)) return false;
  for (uint64_t i = len; i-- > 0;) {
    const uint64_t addr = undo[2 * i], ref = undo[2 * i + 1];
    if (ref & kRingUndoAdded) live->erase(addr);
    else (*live)[addr] = ref;
  }
  return true;
}

// The stream's records made of the ring's, in `tail`.
class TailWriter {
 public:
  TailWriter(RingTail *tail, LiveTable *live) : tail_(tail), live_(live) {}
  // The record at the start of [p, end): its length, or 0 when the bytes
  // are no whole record. *ended: it was the epilogue.
  size_t take(const uint8_t *p, const uint8_t *end, bool *ended) {
    if (p[0] == kRingEventTag) {
      if (end - p < 2 || size_t(end - p) < ring_event_size(p[1])) return 0;
      AllocEvent e;
      uint8_t type;
      uint32_t tid;
      read_ring_event(p, &e, &type, &tid);
      put_event(e, type, tid);
      return ring_event_size(p[1]);
    }
    ExtentCursor c(p, end);
    const uint8_t header = c.u8();
    if (header & kMemprofEpilogue) {
      *ended = true;
      tail_->records.push_back(char(header));
      return 1;
    }
    if (header & kExtFlag) {
      const uint8_t kind = header & kExtKindMask;
      skip_ext_body(c, kind);
      if (kind == uint8_t(ExtKind::Skip)) c.bytes(skip_length(p, end));
      if (c.ok() && kind == uint8_t(ExtKind::TimeMark)) last_time_ns_ = time_of(p, end);
    } else if ((header & kAeventMask) == kAeventSymtab) {
      skip_symbol_body(c, header & kAsourceMask);
    } else {
      c.fail();  // events come as ring events only
    }
    if (!c.ok()) return 0;
    tail_->records.append(reinterpret_cast<const char *>(p), c.used());
    return c.used();
  }
  uint64_t last_time_ns() const { return last_time_ns_; }

 private:
  static uint64_t skip_length(const uint8_t *p, const uint8_t *end) {
    ExtentCursor c(p + 1, end);
    const uint64_t n = c.uleb();
    return c.ok() ? n : ~uint64_t(0);
  }
  static uint64_t time_of(const uint8_t *p, const uint8_t *end) {
    ExtentCursor c(p + 1, end);
    const uint64_t t = c.uleb();
    return c.ok() ? t : 0;
  }
  // A release names a compact block where the table holds its address (the
  // oldest live block there); else the address, as the writer would have.
  // The first event names its thread (the writer's last is unknown here),
  // and so does each one of another thread than the event before.
  void put_event(AllocEvent e, uint8_t type, uint32_t tid) {
    if (e.aevent & kAeventFree) {
      const auto it = live_->find(e.oaddr);
      if (it != live_->end()) {
        const uint64_t ref = it->second;
        e.oaddr = CompactEvents::block_key(ref >> kRingRefNumberBits,
                                           ref & ((uint64_t(1) << kRingRefNumberBits) - 1));
        live_->erase(it);
      }
    }
    uint8_t buf[ext::EventThread::kMaxBytes + ext::ObjectType::kMaxBytes + kMaxEventBytes];
    SpanWriter w(buf);
    if (tid != last_tid_ && tid) put_ext(w, ext::EventThread{tid});  // (0: unknown)
    last_tid_ = tid;
    if (type) put_ext(w, ext::ObjectType{type});
    put_memprof_event(w, e);
    tail_->records.append(reinterpret_cast<const char *>(buf), w.size());
    tail_->events++;
  }

  RingTail *tail_;
  LiveTable *live_;
  uint64_t last_time_ns_ = 0;
  uint32_t last_tid_ = 0;
};

}  // namespace

bool ring_tail(const std::string &stream_path, RingTail *tail) {
  const int fd = open((stream_path + ".ring").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st {};
  uint64_t h[kRingHeaderBytes / 8];
  if (fstat(fd, &st) != 0 || !read_at(fd, h, sizeof h, 0)) return false;
  const uint64_t size = uint64_t(st.st_size), ring = h[kRwRingBytes], slots = h[kRwSlots];
  if (h[kRwMagic] != kRingFileMagic || h[kRwVersion] != kRingFileVersion || h[kRwEnded]) return false;
  if (ring == 0 || (ring & (ring - 1)) || ring > (uint64_t(1) << 32) || slots > (1u << 16) ||
      h[kRwUndoCap] > ring || ring_file_ring_offset(slots) + ring + h[kRwUndoCap] * 16 > size)
    return false;
  const uint64_t from = h[kRwDurablePos], head = h[kRwHead];
  if (head < from || head - from > ring) return false;
  LiveTable live;
  if (!read_table(fd, size, h, &live)) return false;

  // Where the whole records end: below head and every busy slot's start,
  // past the reservations whose extent is known (they become holes).
  std::vector<uint64_t> words((slots + 1) * kRingSlotBytes / 8);
  if (!read_at(fd, words.data(), words.size() * 8, kRingSlotsOffset)) return false;
  uint64_t stop = head;
  std::vector<std::pair<uint64_t, uint64_t>> holes;
  for (uint64_t i = 0; i <= slots; i++) {
    const uint64_t busy = words[i * kRingSlotBytes / 8], end_word = words[i * kRingSlotBytes / 8 + 1];
    if (busy == kRingSlotIdle || busy >= head || busy < from) continue;
    const uint64_t end = end_word & ~kRingSlotWritten;
    if (end > busy && (end_word & kRingSlotWritten)) continue;  // whole
    if (end > busy) holes.emplace_back(busy, end);
    else stop = std::min(stop, busy);
  }
  std::sort(holes.begin(), holes.end());

  std::vector<uint8_t> bytes(head - from);
  const uint64_t ring_off = ring_file_ring_offset(slots);
  const uint64_t first = std::min<uint64_t>(bytes.size(), ring - from % ring);
  if (!read_at(fd, bytes.data(), first, ring_off + from % ring) ||
      !read_at(fd, bytes.data() + first, bytes.size() - first, ring_off))
    return false;

  *tail = RingTail{};
  tail->file_bytes = h[kRwDurableFile];
  TailWriter out(tail, &live);
  uint64_t pos = from;
  bool ended = false;
  size_t next_hole = 0;
  while (pos < stop && !ended) {
    if (next_hole < holes.size() && holes[next_hole].first <= pos) {
      const uint64_t hole_end = holes[next_hole++].second;
      if (hole_end > pos) tail->lost_bytes += hole_end - pos, pos = hole_end;
      continue;
    }
    const uint64_t limit = next_hole < holes.size() ? std::min(stop, holes[next_hole].first) : stop;
    const size_t n = out.take(bytes.data() + (pos - from), bytes.data() + (limit - from), &ended);
    if (n == 0) break;
    pos += n;
  }
  if (ended) return true;
  if (pos < head) tail->lost_bytes += head - std::min(pos, head);
  uint8_t buf[ext::UncleanEnd::kMaxBytes + 1];
  SpanWriter w(buf);
  put_ext(w, ext::UncleanEnd{std::max(out.last_time_ns(), h[kRwTime]), tail->lost_bytes});
  put_memprof_epilogue(w);
  tail->records.append(reinterpret_cast<const char *>(buf), w.size());
  return true;
}

}  // namespace prof
