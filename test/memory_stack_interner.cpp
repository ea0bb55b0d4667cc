// StackInterner: nodes interned across the table's tiers (stack_interner.h)
// keep one id each, found again from any tier, and the stream written
// through the ring names each node once, before any use.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "byte_reader.h"
#include "alloc_event.h"
#include "ext.h"
#include "memory/stack_interner.h"
#include "stream/event_ring.h"
#include "stream/owned_file.h"
#include "temp_files.h"

using namespace prof;

TEST_CASE("the stack table keeps one id per node across its tiers, each written once") {
  const TempFile written;
  OwnedFile out;
  const int created = open(written.path.c_str(), O_RDWR);
  REQUIRE(created >= 0);
  out.adopt(created, written.path.c_str());
  // Never freed: its writer may outlive a failed check.
  static EventRing ring;
  REQUIRE(ring.start(&out, -1, nullptr, nullptr, put_skip_header));
  static StackInterner interner;
  REQUIRE(interner.init(&ring));

  // 300,000 one-frame stacks fill the first eleven tiers past half; a second
  // pass, with a cache of its own, finds each in its tier. (A thread of its
  // own: this thread's ring slot may be an earlier test's ring's.)
  constexpr uint64_t kNodes = 300000;
  std::vector<uint64_t> ids(kNodes), again(kNodes);
  std::thread([&] {
    auto cache = std::make_unique<PathCache>(), fresh = std::make_unique<PathCache>();
    for (uint64_t i = 0; i < kNodes; i++)
      ids[i] = interner.intern([i](int) { return FrameKey{0x400000 + 16 * i, 0}; }, 1, *cache);
    for (uint64_t i = 0; i < kNodes; i++)
      again[i] = interner.intern([i](int) { return FrameKey{0x400000 + 16 * i, 0}; }, 1, *fresh);
    const uint8_t end = kMemprofEpilogue;
    ring.finish(&end, 1);
  }).join();
  CHECK(again == ids);
  CHECK(std::set<uint64_t>(ids.begin(), ids.end()).size() == kNodes);
  CHECK(interner.table_full() == 0);

  std::vector<uint8_t> file(size_t(lseek(out.fd(), 0, SEEK_END)));
  REQUIRE(pread(out.fd(), file.data(), file.size(), 0) == ssize_t(file.size()));
  out.close();
  ByteReader in(file.data(), file.size());
  std::set<uint64_t> named;
  for (;;) {
    const uint64_t at = in.offset();
    const uint8_t header = in.u8();
    if (header == kMemprofEpilogue) break;
    ExtRecord r;
    read_ext(in, header, at, SectionKind::Memprof, r);
    const auto *node = std::get_if<ext::StackHost>(&r);
    REQUIRE(node != nullptr);
    CHECK(node->ip == 0x400000 + 16 * (node->id - 1));
    CHECK(named.insert(node->id).second);
  }
  CHECK(named.size() == kNodes);
}
