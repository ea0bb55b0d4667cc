// A library with an inlined call at known lines, for the symbolizer tests:
// analyzer_inline_outer() returns a return address that lies in code of
// inlined_leaf() inlined into analyzer_inline_outer(), and the two lines.

__attribute__((noinline)) static void *return_address(void) {
  return __builtin_return_address(0);
}

static inline __attribute__((always_inline)) void *inlined_leaf(int *leaf_line) {
  *leaf_line = __LINE__ + 1;
  void *ra = return_address();
  __asm__ volatile("" ::: "memory");  // no tail call: the return address stays here
  return ra;
}

__attribute__((noinline)) void *analyzer_inline_outer(int *outer_line, int *leaf_line) {
  *outer_line = __LINE__ + 1;
  void *ra = inlined_leaf(leaf_line);
  __asm__ volatile("" ::: "memory");
  return ra;
}
