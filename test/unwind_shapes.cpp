// Stack shapes for the host-stack tests, built with frame pointers (see
// test/agent.cmake) so that their frames use rbp-based unwind rules, unlike
// the rest of the test binary.
#include "unwind_shapes.h"

#include <alloca.h>
#include <cstring>

void *volatile g_shape_sink;

__attribute__((noinline)) int fp_recurse(int depth, int (*leaf)()) {
  if (depth == 0) return leaf();
  const int r = fp_recurse(depth - 1, leaf);
  g_shape_sink = nullptr;  // not a tail call: keep the frame
  return r;
}

__attribute__((noinline)) int alloca_recurse(int depth, size_t bytes, int (*leaf)()) {
  // A frame whose size is only known at run time: its CFA is rbp-based.
  char *buf = static_cast<char *>(alloca(bytes));
  memset(buf, depth, bytes);
  g_shape_sink = buf;
  if (depth == 0) return leaf();
  const int r = alloca_recurse(depth - 1, bytes + 16, leaf);
  g_shape_sink = nullptr;
  return r;
}

__attribute__((noinline)) int realigned_call(int (*leaf)()) {
  alignas(64) char buf[64];  // makes the compiler realign the stack
  memset(buf, 1, sizeof buf);
  g_shape_sink = buf;
  const int r = leaf();
  g_shape_sink = nullptr;
  return r;
}

__attribute__((noinline)) static int fixed_frame(int (*leaf)()) {
  const int r = leaf();
  g_shape_sink = nullptr;
  return r;
}

__attribute__((noinline)) int alloca_call(size_t bytes, int (*leaf)()) {
  char *buf = static_cast<char *>(alloca(bytes));
  memset(buf, 2, bytes);
  g_shape_sink = buf;
  const int r = fixed_frame(leaf);
  g_shape_sink = nullptr;
  return r;
}

__attribute__((noinline)) int wrapped_alloca_call(size_t bytes, int (*leaf)()) {
  const int r = alloca_call(bytes, leaf);
  g_shape_sink = nullptr;
  return r;
}
