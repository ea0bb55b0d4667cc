// HostStack's rule walk against libunwind: on every stack shape, from the
// same call site, both must give the same frames, including right after the
// stack changed above the point where a walk joins the previous one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <thread>
#include <ucontext.h>
#include <vector>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "host_stack.h"
#include "unwind_shapes.h"

using prof::CallSite;
using prof::HostStack;
using prof::HostStackCache;

namespace {

struct Capture {
  uint64_t site = 0;                // the probe's call site (a return address)
  std::vector<uint64_t> walk;       // the rule walk, from the probe's call site
  std::vector<uint64_t> reference;  // libunwind, from inside the probe
  uint64_t fallbacks = 0;           // captures that fell back meanwhile
  int unchanged = 0;                // outer frames the walk says are the previous capture's
  size_t common = 0;                // outer frames it actually shares with the previous one
  bool recalled = false;            // HostStack::recall() vouched for a remembered walk
  bool recalled_right = false;      // ... and that walk had these very frames
};

// A name for a stack (what the agent's interner gives it).
uint64_t stack_tag(const uint64_t *ips, int n) {
  uint64_t h = 1469598103934665603ull ^ uint64_t(n);
  for (int i = 0; i < n; i++) h = (h ^ ips[i]) * 1099511628211ull;
  return h;
}

thread_local std::vector<Capture> t_captures;
thread_local std::vector<uint64_t> t_previous_walk;  // this thread's cache's last capture
thread_local int t_max = 128;
void *volatile g_sink;

HostStackCache *thread_cache() {
  thread_local std::unique_ptr<HostStackCache> cache(new HostStackCache());
  return cache.get();
}

void init_once() {
  static const bool done = [] {
    // "The agent's own frames" must not hide any of this binary's: name libc.
    HostStack::init(dlsym(RTLD_DEFAULT, "abort"), true);
    return true;
  }();
  (void)done;
}

// The walk from `from`, innermost first (the agent keeps it root first).
int walk_from(const CallSite &from, uint64_t *ips, int max, int *unchanged) {
  int n;
  const uint64_t *root = HostStack::capture_root_first(from, max, thread_cache(), &n, unchanged);
  for (int i = 0; i < n; i++) ips[i] = root[n - 1 - i];
  return n;
}

// libunwind's stack from here, innermost first.
__attribute__((noinline)) int libunwind_stack(uint64_t *ips, int max) {
  void *raw[HostStackCache::kMaxFrames];
  const int n = unw_backtrace(raw, std::min(max, HostStackCache::kMaxFrames));
  for (int i = 0; i < n; i++) ips[i] = reinterpret_cast<uint64_t>(raw[i]);
  return n;
}

// Captures the stack of its caller both ways.
__attribute__((noinline)) int probe() {
  init_once();
  uint64_t walk[HostStackCache::kMaxFrames], reference[HostStackCache::kMaxFrames];
  const uint64_t before = HostStack::fallbacks();
  // Remembered walks are only good for the same depth limit: it is the epoch.
  const uint64_t epoch = uint64_t(t_max);
  uint64_t recalled = 0;
  const CallSite site = prof::caller_of(__builtin_frame_address(0));
  const bool hit = HostStack::recall(site, thread_cache(), epoch, &recalled);
  int unchanged;
  const int n = walk_from(site, walk, t_max, &unchanged);
  HostStack::remember(thread_cache(), epoch, stack_tag(walk, n));
  Capture c;
  c.site = site.ip;
  c.recalled = hit;
  c.recalled_right = hit && recalled == stack_tag(walk, n);
  c.fallbacks = HostStack::fallbacks() - before;
  c.unchanged = unchanged;
  while (c.common < size_t(n) && c.common < t_previous_walk.size() &&
         walk[size_t(n) - 1 - c.common] == t_previous_walk[t_previous_walk.size() - 1 - c.common])
    c.common++;
  t_previous_walk.assign(walk, walk + n);
  // Three more: libunwind starts inside itself, libunwind_stack() and probe().
  const int m = libunwind_stack(reference, t_max + 3);
  c.walk.assign(walk, walk + n);
  c.reference.assign(reference, reference + m);
  t_captures.push_back(c);
  return n;
}

// The walk must be the reference minus its first frames (libunwind_stack, probe),
// cut to `max` frames.
void check_same(const Capture &c, size_t max = 128) {
  REQUIRE_FALSE(c.walk.empty());
  // What the walk vouches for as unchanged really is, and so is a recalled walk.
  CHECK(c.unchanged >= 0);
  CHECK(size_t(c.unchanged) <= c.common);
  CHECK(c.recalled_right == c.recalled);
  if (c.fallbacks) {
    // Both are libunwind's then, from inside probe() through other functions:
    // the same from probe's call site on.
    const auto walk = std::find(c.walk.begin(), c.walk.end(), c.site);
    const auto reference = std::find(c.reference.begin(), c.reference.end(), c.site);
    REQUIRE(walk != c.walk.end());
    REQUIRE(reference != c.reference.end());
    CHECK(std::vector<uint64_t>(walk, c.walk.end()) ==
          std::vector<uint64_t>(reference, c.reference.end()));
    return;
  }
  size_t k = 0;
  while (k < c.reference.size() && c.reference[k] != c.walk[0]) k++;
  REQUIRE(k <= 3);
  std::vector<uint64_t> expected(c.reference.begin() + long(k), c.reference.end());
  if (expected.size() > max) expected.resize(max);
  CHECK(c.walk == expected);
}

std::vector<Capture> take_captures() {
  std::vector<Capture> out;
  out.swap(t_captures);
  return out;
}

__attribute__((noinline)) int leaf_a() {
  const int r = probe();
  g_sink = nullptr;
  return r;
}
__attribute__((noinline)) int leaf_b() {
  const int r = probe() + probe();
  g_sink = nullptr;
  return r;
}

__attribute__((noinline)) int recurse(int depth, int (*leaf)()) {
  if (depth == 0) return leaf();
  const int r = recurse(depth - 1, leaf);
  g_sink = nullptr;
  return r;
}

int compare_ints(const void *a, const void *b) {
  static thread_local bool probed = false;
  if (!probed) probed = true, probe();
  return *static_cast<const int *>(a) - *static_cast<const int *>(b);
}

__attribute__((noinline)) int through_libc() {
  int values[16];
  for (int i = 0; i < 16; i++) values[i] = (i * 7) % 16;
  qsort(values, 16, sizeof(int), compare_ints);
  return values[0];
}

// Same body and frame size: called one after the other, g()'s frame lands at
// the same address with the same return address, under different callers.
__attribute__((noinline)) int g_site() {
  const int r = probe();
  g_sink = nullptr;
  return r;
}
__attribute__((noinline)) int caller_x() {
  const int r = g_site();
  g_sink = reinterpret_cast<void *>(1);
  return r;
}
__attribute__((noinline)) int caller_y() {
  const int r = g_site();
  g_sink = reinterpret_cast<void *>(2);
  return r;
}

__attribute__((noinline)) int throw_from(int depth) {
  if (depth == 0) {
    probe();
    throw depth;
  }
  const int r = throw_from(depth - 1);
  g_sink = nullptr;
  return r;
}

jmp_buf g_jump;
__attribute__((noinline)) int jump_from(int depth) {
  if (depth <= 0) {
    probe();
    if (depth == 0) longjmp(g_jump, 1);
    return 0;
  }
  const int r = jump_from(depth - 1);
  g_sink = nullptr;
  return r;
}

void run_shapes() {
  for (int depth : {0, 3, 7, 20, 50, 7, 3, 0}) {
    recurse(depth, leaf_a);
    recurse(depth, leaf_b);
    fp_recurse(depth, leaf_a);
    alloca_recurse(depth, 16 + size_t(depth) * 8, leaf_b);
    fp_recurse(depth, [] { return alloca_recurse(2, 40, leaf_a); });
    realigned_call(leaf_a);
    recurse(depth % 5, [] { return realigned_call(leaf_b); });
    through_libc();
  }
}

}  // namespace

TEST_CASE("the rule walk finds libunwind's frames on every stack shape") {
  run_shapes();
  const auto captures = take_captures();
  REQUIRE(captures.size() == 8 * 10 + 1);  // qsort's comparator probes once
  size_t vouched = 0, recalled = 0;
  for (const auto &c : captures) {
    check_same(c);
    CHECK(c.fallbacks == 0);
    vouched += size_t(c.unchanged);
    recalled += c.recalled;
  }
  // Joined walks vouch for their outer frames (here, all but the few that
  // differ between consecutive shapes), and a shape run again from the same
  // state is recalled (the list of depths repeats, except the deepest).
  CHECK(vouched > captures.size() * 4);
  CHECK(recalled >= captures.size() / 8);
}

TEST_CASE("a walk that joins the previous one still sees changes above the join") {
  for (volatile int round = 0; round < 3; round++) {
    caller_x();
    caller_y();
    recurse(4, [] { return caller_x(); });
    recurse(4, [] { return caller_y(); });
    try {
      recurse(3, [] { return throw_from(6); });
    } catch (int) {
    }
    recurse(9, leaf_a);  // the stack the exception tore down, rebuilt otherwise
    if (setjmp(g_jump) == 0) recurse(2, [] { return jump_from(5); });
    recurse(7, leaf_a);
  }
  const auto captures = take_captures();
  REQUIRE(captures.size() == 3 * 8);
  for (const auto &c : captures) {
    check_same(c);
    CHECK(c.fallbacks == 0);
  }
  // caller_x and caller_y really differ one frame above g_site.
  REQUIRE(captures[0].walk.size() > 2);
  CHECK(captures[0].walk[0] == captures[1].walk[0]);
  CHECK(captures[0].walk[1] != captures[1].walk[1]);
}

namespace {
bool g_probing = true;
uintptr_t g_leaf_sp;
__attribute__((noinline)) int sp_leaf() {
  volatile int here = 0;
  g_leaf_sp = reinterpret_cast<uintptr_t>(&here);
  const int r = g_probing ? probe() : here;
  g_sink = nullptr;
  return r;
}
// Runs one shape, chosen by round (even: alloca_call, odd: the wrapper
// with `odd_bytes`), through one call site: the frames outside the shapes
// are the same, and so are the words that hold them.
int (*volatile g_shapes[2])(size_t, int (*)()) = {alloca_call, wrapped_alloca_call};
__attribute__((noinline)) int call_shape(int round, size_t odd_bytes) {
  const int r = g_shapes[round % 2](round % 2 ? odd_bytes : 512, sp_leaf);
  g_sink = nullptr;
  return r;
}
}  // namespace

// Behind the wrapper, alloca_call's frame base is lower, and its alloca
// smaller so that everything inside sits where it did without the wrapper;
// the wrapper's own frame then holds the very words alloca_call's did. The
// one word that tells the stacks apart near the probe is the frame base
// saved in fixed_frame, which alloca_call's step depends on: neither a join
// nor a remembered walk may take one stack for the other.
TEST_CASE("a saved frame base that an outer step depends on is checked too") {
  g_probing = false;
  call_shape(0, 0);
  const uintptr_t direct_sp = g_leaf_sp;
  size_t bytes = 0;
  for (size_t b = 16; b < 512 && !bytes; b += 16) {
    call_shape(1, b);
    if (g_leaf_sp == direct_sp) bytes = b;
  }
  g_probing = true;
  REQUIRE(bytes > 0);
  take_captures();
  for (volatile int round = 0; round < 6; round++) call_shape(round, bytes);
  const auto captures = take_captures();
  REQUIRE(captures.size() == 6);
  for (const auto &c : captures) {
    check_same(c);
    CHECK(c.fallbacks == 0);
  }
  // The wrapper's frame is the one difference.
  CHECK(captures[1].walk.size() == captures[0].walk.size() + 1);
}

TEST_CASE("stacks deeper than the limit keep their innermost frames") {
  t_max = 6;
  for (int depth : {20, 3, 20, 40, 1, 40, 40})
    recurse(depth, depth % 2 ? leaf_a : leaf_b);
  t_max = 128;
  const auto captures = take_captures();
  REQUIRE(captures.size() == 5 * 2 + 2);  // leaf_b probes twice
  for (const auto &c : captures) {
    CHECK(c.walk.size() == 6);
    check_same(c, 6);
  }
}

TEST_CASE("threads walk their own stacks") {
  auto work = [] {
    run_shapes();
    const auto captures = take_captures();
    for (const auto &c : captures) check_same(c);
    return captures.size();
  };
  size_t a = 0, b = 0;
  std::thread ta([&] { a = work(); }), tb([&] { b = work(); });
  ta.join();
  tb.join();
  CHECK(a == 8 * 10 + 1);
  CHECK(a == b);
}

namespace {

ucontext_t g_main_context, g_coroutine_context;
void coroutine_body() {
  for (int depth : {5, 9, 2}) {
    recurse(depth, leaf_a);
    swapcontext(&g_coroutine_context, &g_main_context);
  }
}

}  // namespace

TEST_CASE("stacks switched under the walk (coroutines) are walked as they are") {
  std::vector<char> stack(1 << 18);
  getcontext(&g_coroutine_context);
  g_coroutine_context.uc_stack.ss_sp = stack.data();
  g_coroutine_context.uc_stack.ss_size = stack.size();
  g_coroutine_context.uc_link = &g_main_context;
  makecontext(&g_coroutine_context, coroutine_body, 0);
  for (int round = 0; round < 3; round++) {
    recurse(round + 4, leaf_b);  // main stack, then into the coroutine's
    swapcontext(&g_main_context, &g_coroutine_context);
  }
  const auto captures = take_captures();
  REQUIRE(captures.size() == 3 * 3);
  for (size_t i = 0; i < captures.size(); i++) {
    check_same(captures[i]);
    // XXX: the coroutine's root frame (glibc's __start_context) returns to
    // no code, so the walk hands those stacks to libunwind; not the others.
    CHECK(captures[i].fallbacks == (i % 3 == 2 ? 1u : 0u));  // leaf_b probes twice
  }
}

namespace {
void on_signal(int) { recurse(3, leaf_a); }
}  // namespace

// XXX: the kernel's signal frame (sigreturn trampoline) has no rule the walk
// applies, whichever stack the handler runs on.
TEST_CASE("a capture in a signal handler falls back to libunwind") {
  recurse(2, leaf_a);  // this thread's stack mapping is known
  take_captures();
  std::vector<char> alt(1 << 16);
  stack_t ss{};
  ss.ss_sp = alt.data();
  ss.ss_size = alt.size();
  REQUIRE(sigaltstack(&ss, nullptr) == 0);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_ONSTACK;
  REQUIRE(sigaction(SIGUSR1, &sa, nullptr) == 0);
  raise(SIGUSR1);
  ss.ss_flags = SS_DISABLE;
  sigaltstack(&ss, nullptr);
  signal(SIGUSR1, SIG_DFL);
  const auto captures = take_captures();
  REQUIRE(captures.size() == 1);
  CHECK(captures[0].fallbacks == 1);
  CHECK(captures[0].walk.size() > 8);
  check_same(captures[0]);
}
