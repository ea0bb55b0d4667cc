// StreamCompressor: zstd's streaming compression of one output file, in
// memory the agent maps itself: a static context (ZSTD_initStaticCCtx), so
// zstd never allocates.
//
// Invariants:
// - No allocation, no lock, no errno, no thread-local: it runs on the ring's
//   raw writer (raw_thread.h) and in the CPU sampler's signal handler, each
//   time under its stream's one-writer flag.
// - One frame per file. Input is held inside zstd until a block fills;
//   sync() ends the block, so that everything put so far decodes from the
//   file (the writers sync every 100 ms: a SIGKILL of the writer loses at
//   most that), and end() ends the frame.
// - XXX: libzstd.a is built with the stack protector, so on the writer its
//   functions read the canary through the thread pointer the writer shares
//   with its creator (raw_thread.h): the thread that started the agent (or
//   a fork child's only thread), whose thread control block must stay
//   mapped, as the main thread's always does. The agent's own files that
//   run on the writer are built without it.
// - A failure of zstd itself (none is expected: the context is sized for the
//   level) fails every later put() with -EIO: the stream ends there.
#pragma once

#include <cstddef>
#include <cstdint>

struct ZSTD_CCtx_s;

namespace prof {

class StreamCompressor {
 public:
  // Where compressed bytes go: 0, or -errno.
  using Sink = long (*)(void *ctx, const uint8_t *data, size_t len);
  enum class Mode { Continue, Sync, End };

  // Maps the context's memory (once per process); false when it cannot be
  // had.
  bool init();
  // Unmaps that memory (the agent is off for good), if it was mapped.
  void release();
  // A new frame, for a new file (also in a forked child, whose copy of the
  // memory is wiped at fork: the context is made anew on it).
  void start();
  // Compresses [data, data + len) and, per mode, ends the block or the
  // frame; each full output buffer goes to sink. 0, or the sink's -errno.
  long put(const uint8_t *data, size_t len, Mode mode, Sink sink, void *ctx);

 private:
  // XXX: level 1 keeps the writer ahead of the fastest allocating programs
  // on one core; higher levels cost the writer more than they save.
  static constexpr int kLevel = 1;
  // XXX: level 1 looks for matches of 7 bytes and more; compact events are
  // 2-4 bytes each, their repeats short: from 6 bytes on, the churn bench's
  // stream is 5.5-5.9 MB instead of 6.3-7.0 (heaptrack's: 6.84), for zstd
  // instructions per event 150 -> 260 (callgrind).
  static constexpr int kMinMatch = 6;
  // Makes the context on mem_; false if zstd refuses the parameters.
  bool make_context();
  void *mem_ = nullptr;
  size_t ctx_size_ = 0;
  ZSTD_CCtx_s *cctx_ = nullptr;
  uint8_t *out_ = nullptr;
  size_t out_cap_ = 0;
  bool broken_ = false;
};

}  // namespace prof
