#include "profile.h"

#include <exception>
#include <thread>

#include "batch_pipe.h"

namespace prof {

StreamContext &Profile::read(const std::string &path) {
  streams_.push_back(std::make_unique<StreamContext>(path, uint32_t(streams_.size())));
  StreamContext &ctx = *streams_.back();
  if (ctx.file.kind() == SectionKind::Memprof) {
    has_memory_ = true;
    read_memory(ctx);
  } else {
    has_cpu_ = true;
    cpu_.read(ctx);
  }
  return ctx;
}

uint32_t Profile::site_of(StreamContext &ctx, const GuestLoc &loc) {
  // XXX: names as LuaJIT's parser gives them when the event is read; ids are
  // shared by all streams, so equal names merge.
  if (loc_epoch_ != std::make_pair(ctx.index, ctx.naming_epoch)) {
    loc_sites_.clear();
    loc_epoch_ = {ctx.index, ctx.naming_epoch};
  }
  const auto loc_key = std::make_tuple(loc.addr, loc.line, loc.traceno);
  auto known = loc_sites_.find(loc_key);
  if (known != loc_sites_.end()) return known->second;
  const std::string name = ctx.file.symbols().location_name(loc);
  auto it = site_ids_.find(name);
  if (it == site_ids_.end()) {
    site_names_.push_back(name);
    it = site_ids_.emplace(name, uint32_t(site_names_.size())).first;
  }
  return loc_sites_[loc_key] = it->second;
}

namespace {

// What the reader hands the heap model: a memory event, or a record that
// changes the model (a heap-over-time point by file offset is a Mark).
struct HeapOp {
  enum Kind : uint8_t { Alloc, Free, Realloc, Sampling, TimeMark, Map, Unmap, Mark } kind;
  StackKey key;
  uint64_t a = 0, b = 0, c = 0;
};

}  // namespace

void Profile::read_memory(StreamContext &ctx) {
  HeapModel &heap = heap_;
  heap.begin_stream(ctx.index);
  const uint64_t snap_ns = uint64_t(opt_.snap_interval_s * 1e9);
  uint64_t events = 0, next_snap_ns = snap_ns;
  auto apply = [&](const HeapOp &op) {
    switch (op.kind) {
      case HeapOp::Alloc: heap.alloc(op.key, op.b, op.c); break;
      case HeapOp::Free: heap.free(op.a); break;
      case HeapOp::Realloc: heap.realloc(op.key, op.a, op.b, op.c); break;
      case HeapOp::Sampling: heap.set_sampling(op.a); return;
      case HeapOp::TimeMark:
        heap.time_mark(op.a, op.b);
        // The first time mark at or after each multiple of the interval.
        if (snap_ns && op.a >= next_snap_ns) {
          heap.snapshot(true, op.a, opt_.snap_top);
          next_snap_ns = (op.a / snap_ns + 1) * snap_ns;
        }
        return;
      case HeapOp::Map: heap.map(op.key, op.a, op.b); return;
      case HeapOp::Unmap: heap.unmap(op.a, op.b); return;
      case HeapOp::Mark: heap.event_mark(); return;
    }
    if (opt_.snap_events && ++events % opt_.snap_events == 0)
      heap.snapshot(false, 0, opt_.snap_top);
  };
  auto prefetch = [&](const HeapOp &op) {
    if (op.kind == HeapOp::Free || op.kind == HeapOp::Realloc) heap.prefetch(op.a);
    if (op.kind == HeapOp::Alloc || op.kind == HeapOp::Realloc) heap.prefetch(op.b);
  };

  // XXX: decoding and the heap model each take about half the time: the
  // model runs on a second thread, fed in order through a bounded pipe. It
  // prefetches the live-block slots of the events a few ahead, as each
  // event misses the cache there.
  BatchPipe<HeapOp> pipe;
  std::exception_ptr failure;
  std::thread model([&] {
    try {
      constexpr size_t kAhead = 8;
      std::vector<HeapOp> batch;
      while (pipe.take(batch))
        for (size_t i = 0; i < batch.size(); i++) {
          if (i + kAhead < batch.size()) prefetch(batch[i + kAhead]);
          apply(batch[i]);
        }
    } catch (...) {
      failure = std::current_exception();
      pipe.stop();
    }
  });

  const uint64_t mark_step = ctx.file.size() / 64 + 1;
  uint64_t next_mark = mark_step;
  try {
    ctx.read_memprof([&](const MemprofEvent &ev) {
      if (ev.offset >= next_mark) {
        pipe.put(HeapOp{HeapOp::Mark, {}});
        next_mark = ev.offset + mark_step;
      }
      if (ev.record == MemprofRecord::Ext) {
        const ExtRecord &x = ev.ext;
        const StackKey key{ctx.index, 0, x.host_stack, x.guest_stack};
        switch (x.kind) {
          case ExtKind::Sampling: pipe.put(HeapOp{HeapOp::Sampling, {}, x.value}); break;
          case ExtKind::TimeMark: pipe.put(HeapOp{HeapOp::TimeMark, {}, x.time_ns, x.value}); break;
          case ExtKind::Map: pipe.put(HeapOp{HeapOp::Map, key, x.addr, x.size}); break;
          case ExtKind::Unmap: pipe.put(HeapOp{HeapOp::Unmap, {}, x.addr, x.size}); break;
          default: break;
        }
        return;
      }
      StackKey key{ctx.index, 0, ev.host_stack, ev.guest_stack};
      if (!ev.has_stacks && ev.loc.source != kAsourceNone && ev.record != MemprofRecord::Free)
        key.site = site_of(ctx, ev.loc);
      switch (ev.record) {
        case MemprofRecord::Alloc: pipe.put(HeapOp{HeapOp::Alloc, key, 0, ev.naddr, ev.nsize}); break;
        case MemprofRecord::Free: pipe.put(HeapOp{HeapOp::Free, key, ev.oaddr}); break;
        case MemprofRecord::Realloc:
          pipe.put(HeapOp{HeapOp::Realloc, key, ev.oaddr, ev.naddr, ev.nsize});
          break;
        default: break;
      }
    });
  } catch (...) {
    pipe.close();
    model.join();
    throw;
  }
  pipe.close();
  model.join();
  if (failure) std::rethrow_exception(failure);
  heap.end_stream();
}

std::vector<Frame> Profile::frames(const StackKey &key) {
  if (key.site) {
    Frame f;
    f.kind = Frame::Kind::Guest;
    f.function = site_names_[key.site - 1];
    return {f};
  }
  return streams_[key.file]->stack_frames(key.host, key.guest);
}

}  // namespace prof
