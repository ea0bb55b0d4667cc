#include "model/profile.h"

#include <algorithm>
#include <exception>
#include <malloc.h>
#include <thread>

#include "model/frame_names.h"
#include "model/thread_choice.h"
#include "read/batch_pipe.h"
#include "read/llvm_memprof_reader.h"

namespace prof {

StreamContext &Profile::read(const std::string &path) {
  streams_.push_back(std::make_unique<StreamContext>(path, uint32_t(streams_.size())));
  StreamContext &ctx = *streams_.back();
  ctx.window.set(opt_.window);
  if (ctx.file.llvm_memprof()) {
    has_memory_ = true;
    read_measured(ctx);
  } else if (ctx.file.kind() == SectionKind::Memprof) {
    has_memory_ = true;
    read_memory(ctx);
  } else {
    has_cpu_ = true;
    cpu_.read(ctx, calls_, opt_.thread);
  }
  // Memory grows with the stacks and sites read, not with the files: the
  // file's reader goes, and what reading it freed goes back to the system.
  // XXX: glibc keeps freed blocks resident (its mmap threshold rises past
  // the first large block freed): 600 small streams of one run left 450 MB
  // resident for some 25 MB in use.
  ctx.file.done_reading();
  malloc_trim(0);
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
  const std::string name = ctx.location_name(loc);
  auto it = site_ids_.find(name);
  if (it == site_ids_.end()) {
    site_names_.push_back(name);
    it = site_ids_.emplace(name, uint32_t(site_names_.size())).first;
  }
  return loc_sites_[loc_key] = it->second;
}

namespace {

constexpr const char *kUntypedObjectType = "an object-type record not followed by an allocation";

// What the reader hands the heap model: a memory event, or a record that
// changes the model (a heap-over-time point by file offset is a Mark).
struct HeapOp {
  enum Kind : uint8_t {
    Alloc, Free, Realloc, Sampling, Attached, TimeMark, HeapTotal, Map, Unmap, Mark,
    Thread  // stack: the thread's local index, a: its tid, b: chosen
  } kind;
  uint32_t stack;
  uint64_t a = 0, b = 0, c = 0;
};

// The heap model's side of reading a stream: applies the ops in order, with
// state of its own only (it runs on its own thread).
class HeapFeed {
 public:
  HeapFeed(HeapModel &heap, const ProfileOptions &opt)
      : heap_(heap), opt_(opt), snap_ns_(uint64_t(opt.snap_interval_s * 1e9)),
        next_snap_ns_(snap_ns_) {}

  void run(BatchPipe<HeapOp> &pipe) {
    // XXX: nearly every event misses the cache in the live-block table: the
    // slots of the events a few ahead are prefetched.
    constexpr size_t kAhead = 8;
    size_t n = 0;
    while (const HeapOp *ops = pipe.take(&n))
      for (size_t i = 0; i < n; i++) {
        if (i + kAhead < n) prefetch(ops[i + kAhead]);
        apply(ops[i]);
      }
  }

 private:
  void prefetch(const HeapOp &op) const {
    if (op.kind == HeapOp::Free || op.kind == HeapOp::Realloc) heap_.prefetch(op.a);
    if (op.kind == HeapOp::Alloc || op.kind == HeapOp::Realloc) heap_.prefetch(op.b);
  }
  void apply(const HeapOp &op) {
    switch (op.kind) {
      case HeapOp::Alloc: heap_.alloc(op.stack, op.b, op.c); break;
      case HeapOp::Free: heap_.free(op.a); break;
      case HeapOp::Realloc: heap_.realloc(op.stack, op.a, op.b, op.c); break;
      case HeapOp::Sampling: heap_.set_sampling(op.a); return;
      case HeapOp::Attached: heap_.set_attached(); return;
      case HeapOp::TimeMark:
        heap_.time_mark(op.a, op.b);
        // The first time mark at or after each multiple of the interval.
        if (snap_ns_ && op.a >= next_snap_ns_) {
          heap_.snapshot(true, op.a, opt_.snap_top);
          next_snap_ns_ = (op.a / snap_ns_ + 1) * snap_ns_;
        }
        return;
      case HeapOp::HeapTotal: heap_.heap_total(op.a, op.b); return;
      case HeapOp::Map: heap_.map(op.stack, op.a, op.b); return;
      case HeapOp::Unmap: heap_.unmap(op.a, op.b); return;
      case HeapOp::Mark: heap_.event_mark(); return;
      case HeapOp::Thread: heap_.set_thread(op.stack, op.a, op.b != 0); return;
    }
    if (opt_.snap_events && ++events_ % opt_.snap_events == 0)
      heap_.snapshot(false, 0, opt_.snap_top);
  }

  HeapModel &heap_;
  const ProfileOptions opt_;
  const uint64_t snap_ns_;
  uint64_t next_snap_ns_, events_ = 0;
};

}  // namespace

void Profile::read_memory(StreamContext &ctx) {
  heap_.begin_stream(ctx.index, stack_ids_.size());
  // XXX: decoding and the heap model take about as long: the model runs on
  // a second thread, fed in order through a bounded pipe.
  BatchPipe<HeapOp> pipe;
  std::exception_ptr failure;
  std::thread model([this, &pipe, &failure] {
    try {
      HeapFeed(heap_, opt_).run(pipe);
    } catch (...) {
      failure = std::current_exception();
      pipe.stop();
    }
  });
  // Heap marks every 64th of the file: by the stream's offsets, or for a
  // compressed file (whose stream's size is unknown) by the bytes read.
  const uint64_t mark_step = ctx.file.size() / 64 + 1;
  ByteReader &in = ctx.file.reader();
  uint64_t next_mark = mark_step;
  uint64_t offset = 0;  // of the event read
  auto key_of = [&](const EventStacks &s) {
    return StackKey{s.file, s.site, ctx.stacks.check(s.host, false, offset),
                    ctx.stacks.check(s.guest, true, offset), s.object_type};
  };
  // The stack ids of the stream's compact sites, known once (a site's
  // stacks and type never change).
  std::vector<uint32_t> site_stacks;
  // An object-type record types the allocation or reallocation right after it.
  uint8_t object_type = 0;
  uint64_t object_type_at = 0;
  // The thread of the events (event-thread records; 0: none known), its
  // index in the heap model's threads of the stream, and whether --thread
  // chooses it, by the name it has when an event is made.
  const ThreadChoice chosen(opt_.thread);
  uint64_t tid = 0;
  std::unordered_map<uint64_t, uint32_t> locals;
  bool thread_told = false;
  uint64_t told_tid = 0, told_renames = 0;
  uint32_t told_local = 0;
  bool told_chosen = true;
  auto tell_thread = [&] {
    if (thread_told && tid == told_tid && ctx.thread_renames == told_renames) return;
    thread_told = true;
    told_tid = tid;
    told_renames = ctx.thread_renames;
    uint32_t local = 0;
    if (tid) {
      const auto it = locals.find(tid);
      if (it != locals.end()) local = it->second;
      else if (locals.size() + 2 < HeapModel::kMaxStreamThreads) local = locals[tid] = uint32_t(locals.size() + 1);
      else local = HeapModel::kMaxStreamThreads - 1;  // (past them, all together)
    }
    const bool is_chosen = chosen.chooses(tid, ctx.thread_name(tid));
    if (local == told_local && is_chosen == told_chosen) return;
    told_local = local;
    told_chosen = is_chosen;
    pipe.put(HeapOp{HeapOp::Thread, local, tid, is_chosen});
  };
  try {
    bool attached = false;  // (the record comes before any event, and is the context's)
    ctx.read_memprof([&](const MemprofEvent &ev) {
      offset = ev.offset;
      if (!attached && ctx.attach_number) {
        pipe.put(HeapOp{HeapOp::Attached, 0});
        attached = true;
      }
      const uint64_t at = in.compressed() ? in.source_bytes() : ev.offset;
      if (at >= next_mark) {
        pipe.put(HeapOp{HeapOp::Mark, 0});
        next_mark = at + mark_step;
      }
      if (object_type && ev.record != MemprofRecord::Alloc && ev.record != MemprofRecord::Realloc)
        throw FormatError(object_type_at, false, kUntypedObjectType);
      if (ev.record == MemprofRecord::Ext) {
        if (const auto *t = std::get_if<ext::ObjectType>(&ev.ext)) {
          object_type = uint8_t(t->type);
          object_type_at = ev.offset;
          has_object_types_ = true;
        } else if (const auto *s = std::get_if<ext::Sampling>(&ev.ext)) {
          pipe.put(HeapOp{HeapOp::Sampling, 0, s->mean_bytes});

        } else if (const auto *t = std::get_if<ext::TimeMark>(&ev.ext)) {
          pipe.put(HeapOp{HeapOp::TimeMark, 0, t->time_ns, t->rss_bytes});
        } else if (const auto *e = std::get_if<ext::EventThread>(&ev.ext)) {
          tid = e->tid;
        } else if (const auto *h = std::get_if<ext::HeapTotal>(&ev.ext)) {
          // (The process's count: not that of the threads --thread chooses.)
          if (chosen.all()) pipe.put(HeapOp{HeapOp::HeapTotal, 0, h->time_ns, h->live_bytes});
        } else if (const auto *m = std::get_if<ext::Map>(&ev.ext)) {
          const EventStacks stacks{ctx.index, 0, m->host_stack, m->guest_stack};
          pipe.put(HeapOp{HeapOp::Map, stack_ids_.id_of(stacks, key_of), m->addr, m->length});
        } else if (const auto *u = std::get_if<ext::Unmap>(&ev.ext)) {
          pipe.put(HeapOp{HeapOp::Unmap, 0, u->addr, u->length});
        }
        return;
      }
      tell_thread();
      if (ev.record == MemprofRecord::Free) {
        pipe.put(HeapOp{HeapOp::Free, 0, ev.oaddr});
        return;
      }
      uint32_t stack;
      if (ev.site && ev.has_stacks && ev.site < site_stacks.size() && site_stacks[ev.site]) {
        stack = site_stacks[ev.site] - 1;
        object_type = 0;
      } else {
        EventStacks stacks{ctx.index, 0, ev.host_stack, ev.guest_stack, object_type};
        object_type = 0;
        if (!ev.has_stacks && ev.loc.source != kAsourceNone) stacks.site = site_of(ctx, ev.loc);
        stack = stack_ids_.id_of(stacks, key_of);
        if (ev.site && ev.has_stacks) {
          if (ev.site >= site_stacks.size()) site_stacks.resize(ev.site + 1);
          site_stacks[ev.site] = stack + 1;
        }
      }
      if (ev.record == MemprofRecord::Alloc)
        pipe.put(HeapOp{HeapOp::Alloc, stack, 0, ev.naddr, ev.nsize});
      else
        pipe.put(HeapOp{HeapOp::Realloc, stack, ev.oaddr, ev.naddr, ev.nsize});
    });
  } catch (...) {
    pipe.close();
    model.join();
    throw;
  }
  pipe.close();
  model.join();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::bad_alloc &) {
      throw OutOfMemory(ctx.file.reader().offset());
    }
  }
  // (A stream cut right after one is truncated, not corrupt.)
  if (object_type && !ctx.end.truncated)
    throw FormatError(object_type_at, false, kUntypedObjectType);
  heap_.end_stream();
}

void Profile::read_measured(StreamContext &ctx) {
  heap_.begin_stream(ctx.index, stack_ids_.size());
  read_llvm_memprof(ctx, opt_.binary, [&](uint64_t host, const LlvmMemprofMib &mib) {
    const EventStacks stacks{ctx.index, 0, host, 0};
    const uint32_t stack = stack_ids_.id_of(stacks, [&](const EventStacks &s) {
      return StackKey{s.file, 0, ctx.stacks.check(s.host, false, 0), 0};
    });
    heap_.add_measured(stack, mib);
  });
  heap_.end_stream();
}

void Profile::suppress_leaks(const Suppressions &suppressions) {
  if (suppressions.patterns().empty()) return;
  std::vector<SuppressedLeaks> used(suppressions.patterns().size());
  // XXX: matched once a frame and once a call-tree node (its parent's match
  // or its frame's, the first pattern in file order), not once a stack's
  // every frame: 100k leaks under a chain of 1000 frames took minutes.
  constexpr int kUnknown = -2;
  std::vector<int> by_frame, by_node;
  auto frame_match = [&](uint32_t frame) {
    if (by_frame.size() <= frame) by_frame.resize(calls_.frame_count(), kUnknown);
    int &m = by_frame[frame];
    if (m == kUnknown) m = suppressions.match({calls_.frame(frame)});
    return m;
  };
  auto earlier = [](int a, int b) { return a < 0 ? b : b < 0 ? a : std::min(a, b); };
  std::vector<uint32_t> chain;
  auto node_match = [&](uint32_t node) {
    by_node.resize(calls_.size(), kUnknown);
    chain.clear();
    for (uint32_t n = node; n != CallTree::kRoot && by_node[n] == kUnknown; n = calls_.parent(n))
      chain.push_back(n);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const uint32_t parent = calls_.parent(*it);
      by_node[*it] = earlier(parent == CallTree::kRoot ? -1 : by_node[parent],
                             frame_match(calls_.frame_of(*it)));
    }
    return node == CallTree::kRoot ? -1 : by_node[node];
  };
  for (uint32_t id = 0; id < heap_.stacks().size(); id++) {
    const StackStats &s = heap_.stacks()[id];
    if (s.live_blocks == 0) continue;
    const int i = node_match(node(id));
    if (i < 0) continue;
    used[size_t(i)].blocks += s.live_blocks;
    used[size_t(i)].bytes += s.live_bytes;
    heap_.drop_leaks(id);
  }
  for (size_t i = 0; i < used.size(); i++)
    if (used[i].blocks) {
      used[i].pattern = suppressions.patterns()[i];
      used[i].by_default = suppressions.is_default(i);
      suppressed_.push_back(used[i]);
    }
}

uint32_t Profile::node(uint32_t stack) {
  if (stack_nodes_.size() <= stack) stack_nodes_.resize(stack_ids_.size(), IdTable::kNone);
  uint32_t &node = stack_nodes_[stack];
  if (node != IdTable::kNone) return node;
  const StackKey &key = stack_ids_.key(stack);
  if (key.site) {
    Frame f;
    f.kind = Frame::Kind::Guest;
    f.function = site_names_[key.site - 1];
    return node = calls_.child(CallTree::kRoot, calls_.frame_id(f));
  }
  return node = without_allocator(streams_[key.file]->stack_node(key.host, key.guest, calls_));
}

uint32_t Profile::without_allocator(uint32_t node) {
  if (allocator_frames_.size() < calls_.frame_count()) allocator_frames_.resize(calls_.frame_count(), -1);
  auto allocator = [&](uint32_t frame) {
    int8_t &known = allocator_frames_[frame];
    if (known < 0) {
      const Frame::Kind kind = calls_.kind(frame);
      known = (kind == Frame::Kind::Native || kind == Frame::Kind::Inlined) &&
              is_allocator_function(calls_.function(frame));
    }
    return known == 1;
  };
  while (node != CallTree::kRoot && calls_.parent(node) != CallTree::kRoot &&
         allocator(calls_.frame_of(node)))
    node = calls_.parent(node);
  return node;
}

}  // namespace prof
