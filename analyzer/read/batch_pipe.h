// BatchPipe: hands items from one producer thread to one consumer thread, in
// order, in batches, so that decoding a stream and applying its events to a
// model run on two cores.
//
// Invariants: a fixed ring of kSlots batches, allocated once (memory is
// constant); the producer waits while every batch is full, the consumer
// while none is. close() ends the stream after the items already put; a
// consumer that fails stop()s the pipe, and the producer's later put()s are
// dropped instead of waiting forever.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace prof {

template <class Item>
class BatchPipe {
  static_assert(std::is_trivially_copyable<Item>::value, "items are copied as bytes");

 public:
  static constexpr size_t kBatch = 4096, kSlots = 6;

  BatchPipe() {
    for (size_t i = 0; i < kSlots; i++) {
      batches_.push_back(std::make_unique<Batch>());
      free_.push_back(batches_.back().get());
    }
  }

  // Producer. Inlined, as every event puts an item; taking and handing over
  // a batch, once in kBatch items, out of line.
  [[gnu::always_inline]] void put(const Item &item) {
    if (__builtin_expect(!filling_, 0) && !(filling_ = acquire())) return;  // stopped
    store(&filling_->items[filling_->count++], item);
    if (__builtin_expect(filling_->count == kBatch, 0)) publish();
  }
  void close() {
    if (filling_) publish();
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }

  // Consumer: the items of the next batch (the previous one goes back to the
  // producer), or nullptr at the end.
  const Item *take(size_t *count) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (taken_) {
      taken_->count = 0;
      free_.push_back(taken_);
      taken_ = nullptr;
      changed_.notify_all();
    }
    changed_.wait(lock, [&] { return !full_.empty() || closed_; });
    if (full_.empty()) return nullptr;
    taken_ = full_.front();
    full_.pop_front();
    *count = taken_->count;
    return taken_->items;
  }
  void stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    changed_.notify_all();
  }

 private:
  struct Batch {
    alignas(64) Item items[kBatch];
    size_t count = 0;
  };

  // XXX: streaming (non-temporal) stores: the batch's cache lines were last
  // read on the consumer's core; ordinary stores would have to take each line
  // back from it first, a cache miss per line on the decoding thread.
  static void store(Item *dst, const Item &item) {
#if defined(__SSE2__)
    if (sizeof(Item) % 16 == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
      const __m128i *src = reinterpret_cast<const __m128i *>(&item);
      __m128i *out = reinterpret_cast<__m128i *>(dst);
      for (size_t i = 0; i < sizeof(Item) / 16; i++) _mm_stream_si128(out + i, _mm_loadu_si128(src + i));
      return;
    }
#endif
    *dst = item;
  }

  [[gnu::noinline]] Batch *acquire() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !free_.empty() || stopped_; });
    if (stopped_) return nullptr;
    Batch *b = free_.front();
    free_.pop_front();
    return b;
  }
  [[gnu::noinline]] void publish() {
#if defined(__SSE2__)
    _mm_sfence();  // the streamed items are visible before the batch is
#endif
    std::lock_guard<std::mutex> lock(mutex_);
    full_.push_back(filling_);
    filling_ = nullptr;
    changed_.notify_all();
  }

  std::vector<std::unique_ptr<Batch>> batches_;
  Batch *filling_ = nullptr;  // the producer's
  Batch *taken_ = nullptr;    // the consumer's
  std::deque<Batch *> free_, full_;
  bool closed_ = false, stopped_ = false;
  std::mutex mutex_;
  std::condition_variable changed_;
};

}  // namespace prof
