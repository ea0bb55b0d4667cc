// StreamWriter: buffering, and the latch on the first failed flush.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>

#include "stream_writer.h"

using namespace prof;

namespace {
struct Recorder {
  std::string bytes;
  int calls = 0;
  int fail_after = -1;  // fail the n-th call (0-based); -1 never
};
bool record(void *ctx, const uint8_t *data, size_t len) {
  auto *r = static_cast<Recorder *>(ctx);
  if (r->calls++ == r->fail_after) {
    errno = ENOSPC;
    return false;
  }
  r->bytes.append(reinterpret_cast<const char *>(data), len);
  return true;
}
}  // namespace

TEST_CASE("writer delivers bytes in order across many flushes") {
  Recorder r;
  uint8_t buf[16];
  StreamWriter w(buf, sizeof buf, record, &r);
  std::string expected;
  for (int i = 0; i < 100; i++) {
    w.put_u8(uint8_t(i));
    expected.push_back(char(i));
    w.put_string("ab", 2);
    expected += "\x02" "ab";
    w.put_uleb(300);
    expected += "\xac\x02";
  }
  const std::string big(40, 'x');
  w.put_bytes(big.data(), big.size());  // larger than the buffer
  expected += big;
  REQUIRE(w.flush());
  CHECK(r.bytes == expected);
  CHECK(w.bytes_flushed() == expected.size());
  CHECK(r.calls > 10);
}

TEST_CASE("a failed flush latches the writer and never touches the buffer again") {
  Recorder r;
  r.fail_after = 1;
  uint8_t buf[16];
  StreamWriter w(buf, sizeof buf, record, &r);
  for (int i = 0; i < 40; i++) w.put_u8('a');  // first flush ok, second fails
  REQUIRE(w.failed());
  CHECK(w.saved_errno() == ENOSPC);
  const int calls = r.calls;
  memset(buf, 0xEE, sizeof buf);
  for (int i = 0; i < 100; i++) {
    w.put_u8('b');
    w.put_uleb(UINT64_MAX);
    w.put_string("xyz", 3);
  }
  CHECK_FALSE(w.flush());
  CHECK(r.calls == calls);  // the sink is not called again
  for (uint8_t b : buf) CHECK(b == 0xEE);
  CHECK(r.bytes == std::string(16, 'a'));
}

TEST_CASE("fd_sink reports a full disk through errno") {
  const int fd = open("/dev/full", O_WRONLY);
  if (fd < 0) {
    WARN("no /dev/full on this machine");
    return;
  }
  uint8_t buf[64];
  StreamWriter w(buf, sizeof buf, fd_sink, reinterpret_cast<void *>(intptr_t(fd)));
  w.put_bytes("hello", 5);
  CHECK_FALSE(w.flush());
  CHECK(w.failed());
  CHECK(w.saved_errno() == ENOSPC);
  close(fd);
}
