// Two threads of malloc/free/realloc churn at stack depths 3 to 22: about
// 2.2 M allocator calls in all.
#include <cstdlib>
#include <thread>
#include <vector>

static void *volatile sink;

__attribute__((noinline)) static void work(int depth, unsigned seed, int rounds) {
  if (depth > 0) {
    work(depth - 1, seed, rounds);
    sink = nullptr;  // keep the frame
    return;
  }
  std::vector<void *> live(64, nullptr);
  for (int i = 0; i < rounds; i++) {
    seed = seed * 1103515245u + 12345u;
    void *&slot = live[seed % live.size()];
    if (!slot) slot = malloc(16 + seed % 512);
    else if (seed & 1) slot = realloc(slot, 16 + (seed >> 8) % 1024);
    else free(slot), slot = nullptr;
  }
  for (void *p : live) free(p);
}

int main() {
  auto run = [](unsigned seed) {
    for (int d = 3; d <= 22; d++) work(d, seed + unsigned(d), 55000);
  };
  std::thread a(run, 1u), b(run, 2u);
  a.join();
  b.join();
}
