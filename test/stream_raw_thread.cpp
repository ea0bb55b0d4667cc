// The ring's writer thread holds no copy of the program's descriptors: a
// pipe the program closes reads EOF at once, however late the thread first
// ran.
#include <catch2/catch.hpp>

#include <atomic>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "stream/raw_thread.h"

namespace {
std::atomic<bool> g_stop{false};
int spin_until_stopped(void *) {
  while (!g_stop.load()) prof::raw_nap(1000000);
  return 0;
}
}  // namespace

TEST_CASE("raw thread: the program's pipe reads EOF as soon as the program closes it") {
  // Many starts, since a task that ran at once would pass without the wait.
  for (int round = 0; round < 50; round++) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    g_stop = false;
    prof::RawThread task;
    REQUIRE(task.start(spin_until_stopped, nullptr));
    close(fds[1]);
    pollfd p{fds[0], POLLIN, 0};
    REQUIRE(poll(&p, 1, 0) == 1);
    CHECK((p.revents & POLLHUP) != 0);
    g_stop = true;
    task.join();
    close(fds[0]);
  }
}
