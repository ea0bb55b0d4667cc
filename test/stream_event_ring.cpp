// EventRing with producers coming and going: the main thread appends alone
// (the solo producer's plain reservation, half of it through append_solo,
// which encodes at the head) and runs the ticks, which append too; threads
// join half-way (each ending the solo path with membarrier), while the raw
// writer thread flushes. Every record must reach the file whole, once, and
// in its thread's order, and glibc must not have counted the writer. Then
// threads that leave an append half-done (a longjmp out of the copy): the
// stream goes on, a gap where their record would have been. And the same
// ring writing a zstd-compressed file: decodable every 100 ms, one whole
// frame at the end.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <sys/single_threaded.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "byte_reader.h"
#include "stream/event_ring.h"
#include "stream/owned_file.h"
#include "stream/stream_compressor.h"
#include "temp_files.h"
#include "zstd_input.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_findFrameCompressedSize
#include <zstd.h>

using prof::EventRing;

namespace {

// A record: thread index, sequence number, payload length, payload bytes
// that derive from the first two (so a torn or mixed record shows).
constexpr uint8_t kTickThread = 0xff, kEndThread = 0xfe, kGapThread = 0xfd;
constexpr int kThreads = 3;
constexpr uint32_t kThreadRecords = 300000;

size_t encode(uint8_t *out, uint8_t thread, uint32_t seq) {
  const uint8_t len = uint8_t(seq * 7 % 23);
  out[0] = thread;
  memcpy(out + 1, &seq, 4);
  out[5] = len;
  for (uint8_t i = 0; i < len; i++) out[6 + i] = uint8_t(thread ^ seq ^ i);
  return 6 + size_t(len);
}

// A gap: a record of the gap thread whose payload runs to the gap's end.
size_t gap_header(uint8_t *dst, uint64_t len) {
  dst[0] = kGapThread;
  memset(dst + 1, 0, 4);
  dst[5] = uint8_t(len - 6);
  return 6;
}

// The ring's output: a temporary file, its descriptor owned as the agent's
// are; compressed as the agent's are by default, if asked.
struct RingFile {
  explicit RingFile(prof::StreamCompressor *compressor = nullptr) {
    const int created = open(written.path.c_str(), O_RDWR);
    REQUIRE(created >= 0);
    out.compress_with(compressor);
    out.adopt(created, written.path.c_str());
  }
  ~RingFile() { out.close(); }
  const TempFile written;
  prof::OwnedFile out;
};

// The whole file as written.
std::vector<uint8_t> file_bytes(int fd) {
  std::vector<uint8_t> file(size_t(lseek(fd, 0, SEEK_END)));
  REQUIRE(pread(fd, file.data(), file.size(), 0) == ssize_t(file.size()));
  return file;
}

// The stream a file holds, decompressed by the analyzer's reader if it is
// compressed (all it can decode, if the frame is not ended).
std::vector<uint8_t> stream_bytes(int fd) {
  REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
  prof::ByteReader in(fd);
  std::vector<uint8_t> bytes;
  while (!in.at_end()) bytes.push_back(in.u8());
  return bytes;
}

EventRing *g_ring;
uint32_t g_ticks;

void on_tick() {
  uint8_t buf[64];
  g_ring->append(buf, encode(buf, kTickThread, g_ticks++));
}

// The main thread's appends: every other one through append_solo, the solo
// producer's shortcut (false when it does not apply), the rest copied in.
bool main_append(uint32_t seq) {
  if (seq % 2 && g_ring->append_solo(64, [seq](uint8_t *dst) { return encode(dst, 0, seq); }))
    return true;
  uint8_t buf[64];
  g_ring->append(buf, encode(buf, 0, seq));
  return false;
}

void produce(uint8_t thread, uint32_t count) {
  uint8_t buf[64];
  for (uint32_t seq = 0; seq < count; seq++) g_ring->append(buf, encode(buf, thread, seq));
}

// A ring for one test, never freed: its writer may outlive a failed check
// (it ends the stream once the program is gone) and must not find its
// memory reused meanwhile.
EventRing *new_ring() { return new EventRing; }

}  // namespace

TEST_CASE("the ring keeps every record, whole and in order, as producers come and go") {
  RingFile output;
  const int fd = output.out.fd();
  EventRing *const ring = new_ring();
  g_ring = ring;
  REQUIRE(__libc_single_threaded);
  REQUIRE(ring->start(&output.out, -1, on_tick, nullptr, gap_header));
  CHECK(__libc_single_threaded);  // the writer is a raw thread

  // Alone for a while, ticks included.
  uint32_t seq = 0;
  uint64_t solo_appends = 0;
  const auto alone_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(350);
  while (std::chrono::steady_clock::now() < alone_until)
    for (int i = 0; i < 4096; i++, seq++) solo_appends += main_append(seq);
  CHECK(ring->solo());  // membarrier is there on any kernel this runs on
  CHECK(solo_appends * 2 >= seq / 2);  // the shortcut, but around the ring's end and the ticks
  CHECK(g_ticks >= 2);
  // Then threads join, one after another, while it goes on.
  std::vector<std::thread> threads;
  for (int t = 1; t <= kThreads; t++) {
    threads.emplace_back(produce, uint8_t(t), kThreadRecords);
    for (int i = 0; i < 200000; i++, seq++) main_append(seq);
  }
  for (auto &t : threads) t.join();
  CHECK_FALSE(ring->solo());
  if (seq % 2 == 0) main_append(seq++);
  CHECK_FALSE(main_append(seq++));  // an odd one: no shortcut once other threads appended
  uint8_t buf[64];
  const uint32_t main_records = seq;
  ring->finish(buf, encode(buf, kEndThread, 0));

  std::vector<uint8_t> file(size_t(lseek(fd, 0, SEEK_END)));
  REQUIRE(pread(fd, file.data(), file.size(), 0) == ssize_t(file.size()));

  uint32_t next[kThreads + 1] = {0};
  uint32_t ticks = 0;
  bool ended = false;
  size_t at = 0, bad = 0;
  while (at + 6 <= file.size() && !ended) {
    const uint8_t thread = file[at], len = file[at + 5];
    uint32_t seq;
    memcpy(&seq, &file[at + 1], 4);
    if (at + 6 + len > file.size()) FAIL("a record runs past the end at byte " << at);
    for (uint8_t i = 0; i < len; i++) bad += file[at + 6 + i] != uint8_t(thread ^ seq ^ i);
    if (thread == kTickThread) {
      if (seq != ticks) FAIL("tick " << seq << " after " << ticks);
      ticks++;
    } else if (thread == kEndThread) {
      ended = true;
    } else {
      if (thread > kThreads) FAIL("no thread " << int(thread) << " at byte " << at);
      if (seq != next[thread]) FAIL("thread " << int(thread) << ": record " << seq << " after " << next[thread]);
      next[thread]++;
    }
    at += 6 + len;
  }
  CHECK(bad == 0);
  CHECK(ended);
  CHECK(at == file.size());
  CHECK(next[0] == main_records);
  for (int t = 1; t <= kThreads; t++) CHECK(next[t] == kThreadRecords);
  // Every tick, in order; a last one that came while finish() had already
  // closed the ring is dropped, as any late append is.
  CHECK((ticks == g_ticks || ticks + 1 == g_ticks));
}

namespace {

// Appends records 0..lost of `thread`, the last through an encoder that
// jumps out half-way, as a signal handler's siglongjmp would.
void append_then_leave(EventRing &ring, uint8_t thread, uint32_t lost) {
  static thread_local jmp_buf out;
  uint8_t buf[64];
  for (uint32_t seq = 0; seq < lost; seq++) ring.append(buf, encode(buf, thread, seq));
  if (setjmp(out) == 0)
    ring.append_in_place(encode(buf, thread, lost), [lost, thread](uint8_t *dst) {
      encode(dst, thread, lost);
      dst[0] = 0xee;  // half-written
      longjmp(out, 1);
    });
}

// The file's records: per thread, the sequence numbers in order; gaps' lengths.
struct Parsed {
  std::map<uint8_t, std::vector<uint32_t>> seqs;
  std::vector<size_t> gaps;
  bool ended = false;
  size_t bad = 0;
};

Parsed parse(const std::vector<uint8_t> &file) {
  Parsed p;
  size_t at = 0;
  while (at + 6 <= file.size() && !p.ended) {
    const uint8_t thread = file[at], len = file[at + 5];
    uint32_t seq;
    memcpy(&seq, &file[at + 1], 4);
    REQUIRE(at + 6 + len <= file.size());
    if (thread == kGapThread) {
      p.gaps.push_back(6 + size_t(len));
    } else {
      for (uint8_t i = 0; i < len; i++) p.bad += file[at + 6 + i] != uint8_t(thread ^ seq ^ i);
      if (thread == kEndThread) p.ended = true;
      else p.seqs[thread].push_back(seq);
    }
    at += 6 + len;
  }
  CHECK(at == file.size());
  return p;
}

void check_all_but(const Parsed &p, uint8_t thread, uint32_t count, uint32_t lost) {
  INFO("thread " << int(thread));
  REQUIRE(p.seqs.count(thread));
  const std::vector<uint32_t> &got = p.seqs.at(thread);
  CHECK(got.size() == count - 1);
  uint32_t want = 0;
  for (uint32_t seq : got) {
    if (want == lost) want++;
    if (seq != want) FAIL("record " << seq << " where " << want << " was due");
    want++;
  }
}

}  // namespace

TEST_CASE("a record its thread never finishes becomes a gap, and the stream goes on") {
  RingFile output;
  const int fd = output.out.fd();
  EventRing *const ring = new_ring();
  REQUIRE(ring->start(&output.out, -1, nullptr, nullptr, gap_header));
  // (Threads of their own: the main thread's slot is the first test's ring's.)
  std::atomic<bool> first{false}, left{false}, go_on{false};
  constexpr uint32_t kLost = 1000, kCount = 2000, kMainRecords = 400000;  // some 7 MB, the ring being 4 MiB
  double waited = 0;
  std::thread main_like([&] {
    uint8_t b[64];
    ring->append(b, encode(b, 0, 0));  // first: the solo producer
    first = true;
    while (!left) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const auto t0 = std::chrono::steady_clock::now();
    for (uint32_t seq = 1; seq < kMainRecords; seq++) ring->append(b, encode(b, 0, seq));
    waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  // One thread leaves a record half-done and then waits, appending nothing,
  // while the other appends more than the ring holds: the writer must take
  // the record over, or the other would wait for ever.
  std::thread stuck([&] {
    while (!first) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    append_then_leave(*ring, 1, kLost);
    left = true;
    while (!go_on) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    uint8_t b[64];
    for (uint32_t seq = kLost + 1; seq < kCount; seq++) ring->append(b, encode(b, 1, seq));
  });
  main_like.join();
  go_on = true;
  stuck.join();

  // Another comes back to the ring after its jump (as a guard found
  // abandoned does): its record is a gap at once.
  std::thread back([&] {
    append_then_leave(*ring, 2, 50);
    ring->recover_abandoned_append();
    uint8_t b[64];
    for (uint32_t seq = 51; seq < 200; seq++) ring->append(b, encode(b, 2, seq));
  });
  back.join();
  std::thread([&] {
    uint8_t b[64];
    ring->finish(b, encode(b, kEndThread, 0));
  }).join();

  const Parsed p = parse(file_bytes(fd));
  INFO("the first thread's appends took " << waited << " s");
  CHECK(p.ended);
  CHECK(p.bad == 0);
  CHECK(p.seqs.at(0).size() == kMainRecords);
  check_all_but(p, 1, kCount, kLost);
  check_all_but(p, 2, 200, 50);
  uint8_t buf[64];
  CHECK(p.gaps == std::vector<size_t>{encode(buf, 1, kLost), encode(buf, 2, 50)});
  CHECK(ring->abandoned_records() == 2);
  CHECK(waited < 30);
}

TEST_CASE("a compressed stream decodes every 100 ms and ends as one whole zstd frame") {
  prof::StreamCompressor compressor;
  REQUIRE(compressor.init());
  RingFile output(&compressor);
  const int fd = output.out.fd();
  EventRing *const ring = new_ring();
  REQUIRE(ring->start(&output.out, -1, nullptr, nullptr, gap_header));
  // (Threads of their own, as above.)
  constexpr uint32_t kFirst = 5000, kCount = 300000;  // more than the ring holds
  std::thread([&] {
    uint8_t b[64];
    for (uint32_t seq = 0; seq < kFirst; seq++) ring->append(b, encode(b, 0, seq));
  }).join();
  // The writer's next 100 ms sync: what was appended decodes from the file,
  // its frame still open.
  std::this_thread::sleep_for(std::chrono::milliseconds(350));
  {
    const std::vector<uint8_t> file = file_bytes(fd);
    REQUIRE(prof::has_zstd_magic(file.data(), file.size()));
    CHECK(ZSTD_isError(ZSTD_findFrameCompressedSize(file.data(), file.size())));  // not ended
    const Parsed early = parse(stream_bytes(fd));
    CHECK(early.bad == 0);
    REQUIRE(early.seqs.count(0));
    CHECK(early.seqs.at(0).size() == kFirst);
  }
  std::vector<std::thread> threads;
  for (uint8_t t = 1; t <= 2; t++)
    threads.emplace_back([&, t] {
      uint8_t b[64];
      for (uint32_t seq = 0; seq < kCount; seq++) ring->append(b, encode(b, t, seq));
    });
  for (auto &t : threads) t.join();
  std::thread([&] {
    uint8_t b[64];
    ring->finish(b, encode(b, kEndThread, 0));
  }).join();
  CHECK_FALSE(ring->write_failed());

  const std::vector<uint8_t> file = file_bytes(fd);
  CHECK(ZSTD_findFrameCompressedSize(file.data(), file.size()) == file.size());  // one frame, ended
  const std::vector<uint8_t> stream = stream_bytes(fd);
  CHECK(file.size() * 2 < stream.size());
  const Parsed p = parse(stream);
  CHECK(p.ended);
  CHECK(p.bad == 0);
  CHECK(p.gaps.empty());
  for (uint8_t t = 0; t <= 2; t++) {
    INFO("thread " << int(t));
    REQUIRE(p.seqs.count(t));
    const std::vector<uint32_t> &got = p.seqs.at(t);
    CHECK(got.size() == (t == 0 ? kFirst : kCount));
    bool in_order = true;
    for (uint32_t i = 0; i < got.size(); i++) in_order &= got[i] == i;
    CHECK(in_order);
  }
}
