#include "stream/stream_compressor.h"

#include <cerrno>
#include <sys/mman.h>

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_initStaticCCtx, ZSTD_estimateCStreamSize
#include <zstd.h>

#include "stream/raw_thread.h"

namespace prof {

bool StreamCompressor::init() {
  if (mem_) return true;
  ZSTD_compressionParameters params = ZSTD_getCParams(kLevel, 0, 0);
  params.minMatch = kMinMatch;
  const size_t ctx_size = ZSTD_estimateCStreamSize_usingCParams(params);
  const size_t out_size = ZSTD_CStreamOutSize();
  void *mem = mmap(nullptr, ctx_size + out_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return false;
  mem_ = mem, ctx_size_ = ctx_size;
  if (!make_context()) {
    munmap(mem, ctx_size + out_size);
    mem_ = nullptr;
    return false;
  }
  raw_wipe_on_fork(mem, ctx_size + out_size);
  out_ = static_cast<uint8_t *>(mem) + ctx_size;
  out_cap_ = out_size;
  return true;
}

void StreamCompressor::release() {
  if (mem_) munmap(mem_, ctx_size_ + out_cap_);
  mem_ = nullptr;
  cctx_ = nullptr;
  out_ = nullptr;
}

bool StreamCompressor::make_context() {
  ZSTD_CCtx *cctx = ZSTD_initStaticCCtx(mem_, ctx_size_);
  cctx_ = cctx && !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, kLevel)) &&
                  !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, kMinMatch))
              ? cctx
              : nullptr;
  return cctx_ != nullptr;
}

void StreamCompressor::start() { broken_ = !mem_ || !make_context(); }

long StreamCompressor::put(const uint8_t *data, size_t len, Mode mode, Sink sink, void *ctx) {
  if (broken_) return -EIO;
  static const ZSTD_EndDirective kDirective[] = {ZSTD_e_continue, ZSTD_e_flush, ZSTD_e_end};
  ZSTD_inBuffer in{data, len, 0};
  for (;;) {
    ZSTD_outBuffer out{out_, out_cap_, 0};
    const size_t left = ZSTD_compressStream2(cctx_, &out, &in, kDirective[int(mode)]);
    if (ZSTD_isError(left)) {
      broken_ = true;
      return -EIO;
    }
    if (out.pos > 0)
      if (const long rc = sink(ctx, out_, out.pos); rc < 0) return rc;
    // Continue: done once zstd holds all of it; Sync and End: once flushed.
    if (mode == Mode::Continue ? in.pos == in.size : left == 0) return 0;
  }
}

}  // namespace prof

// XXX: libzstd.a calls these tracing hooks, weak references, when anyone in
// the process defines them; the agent's own (hidden, no tracing) keep the
// program's out of the writer.
extern "C" {
__attribute__((visibility("hidden"))) unsigned long long ZSTD_trace_compress_begin(const void *) {
  return 0;
}
__attribute__((visibility("hidden"))) void ZSTD_trace_compress_end(unsigned long long, const void *) {}
__attribute__((visibility("hidden"))) unsigned long long ZSTD_trace_decompress_begin(const void *) {
  return 0;
}
__attribute__((visibility("hidden"))) void ZSTD_trace_decompress_end(unsigned long long,
                                                                    const void *) {}
}
