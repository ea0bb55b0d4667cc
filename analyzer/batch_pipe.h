// BatchPipe: hands batches of items from one producer thread to one consumer
// thread, in order, so that decoding a stream and applying its events to a
// model run on two cores.
//
// Invariants: at most kDepth batches are in flight (memory is constant);
// close() ends the stream for the consumer after the batches already sent;
// a consumer that fails stop()s the pipe, and the producer's later put()s
// are dropped instead of waiting forever.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

namespace prof {

template <class Item>
class BatchPipe {
 public:
  static constexpr size_t kBatch = 4096, kDepth = 4;

  // Producer: queues an item; blocks while kDepth full batches wait.
  void put(const Item &item) {
    filling_.push_back(item);
    if (filling_.size() == kBatch) send();
  }
  // Producer: sends what is left and marks the end.
  void close() {
    if (!filling_.empty()) send();
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }
  // Consumer: gives up; the producer no longer waits.
  void stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    changed_.notify_all();
  }
  // Consumer: the next batch into `out`; false at the end.
  bool take(std::vector<Item> &out) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !full_.empty() || closed_; });
    if (full_.empty()) return false;
    out.swap(full_.front());
    full_.pop_front();
    changed_.notify_all();
    return true;
  }

 private:
  void send() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return full_.size() < kDepth || stopped_; });
    if (!stopped_) full_.push_back(std::move(filling_));
    filling_.clear();
    filling_.reserve(kBatch);
    changed_.notify_all();
  }

  std::vector<Item> filling_;
  std::deque<std::vector<Item>> full_;
  bool closed_ = false, stopped_ = false;
  std::mutex mutex_;
  std::condition_variable changed_;
};

}  // namespace prof
