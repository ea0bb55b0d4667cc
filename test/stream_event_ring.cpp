// EventRing with producers coming and going: the main thread appends alone
// (the solo producer's plain reservation, half of it through append_solo,
// which encodes at the head) and runs the ticks, which append too; threads
// join half-way (each ending the solo path with membarrier), while the raw
// writer thread flushes. Every record must reach the file whole, once, and
// in its thread's order, and glibc must not have counted the writer.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/single_threaded.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "stream/event_ring.h"
#include "stream/owned_file.h"
#include "temp_files.h"

using prof::EventRing;

namespace {

// A record: thread index, sequence number, payload length, payload bytes
// that derive from the first two (so a torn or mixed record shows).
constexpr uint8_t kTickThread = 0xff, kEndThread = 0xfe;
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

}  // namespace

TEST_CASE("the ring keeps every record, whole and in order, as producers come and go") {
  const TempFile written;
  prof::OwnedFile out;
  const int created = open(written.path.c_str(), O_RDWR);
  REQUIRE(created >= 0);
  out.adopt(created, written.path.c_str());
  const int fd = out.fd();
  auto ring = std::make_unique<EventRing>();
  g_ring = ring.get();
  REQUIRE(__libc_single_threaded);
  REQUIRE(ring->start(&out, on_tick, nullptr));
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
  close(fd);

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
