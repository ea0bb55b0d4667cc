// Four threads, each making 3 M objects with new and deleting 3 M, half of
// them made by the thread before it: each thread hands every second batch
// of 1,000 objects to the next one round the ring, which deletes it
// (cross-thread frees, as a producer-consumer server makes them).
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 4, kBatch = 1000, kBatches = 3000;

struct Node {
  long value[4];
};
using Batch = std::vector<Node *>;

// The batches handed to a thread, not yet deleted.
struct Inbox {
  std::mutex lock;
  std::vector<Batch *> batches;
};
Inbox g_inbox[kThreads];
std::atomic<int> g_done{0};  // threads whose every batch is made

void delete_batch(Batch *batch) {
  for (Node *n : *batch) delete n;
  delete batch;
}

// Deletes what was handed to this thread so far.
void take(Inbox &in) {
  std::vector<Batch *> got;
  {
    std::lock_guard<std::mutex> hold(in.lock);
    got.swap(in.batches);
  }
  for (Batch *b : got) delete_batch(b);
}

void run(int me) {
  Inbox &in = g_inbox[me], &next = g_inbox[(me + 1) % kThreads];
  for (int b = 0; b < kBatches; b++) {
    auto *batch = new Batch;
    batch->reserve(kBatch);
    for (int i = 0; i < kBatch; i++) batch->push_back(new Node{{b, i, me, 0}});
    if (b % 2 == 0) {
      delete_batch(batch);
    } else {
      std::lock_guard<std::mutex> hold(next.lock);
      next.batches.push_back(batch);
    }
    take(in);
  }
  g_done.fetch_add(1);
  while (g_done.load() < kThreads) std::this_thread::yield();
  take(in);
}

}  // namespace

int main() {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back(run, t);
  for (std::thread &t : threads) t.join();
}
