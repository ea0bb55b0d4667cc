// Stack shapes built with frame pointers, for test/unwind_host_stack.cpp:
// each calls leaf() at the bottom of a stack of the given kind.
#pragma once

#include <cstddef>

int fp_recurse(int depth, int (*leaf)());
int alloca_recurse(int depth, size_t bytes, int (*leaf)());
int realigned_call(int (*leaf)());
// alloca_call: a frame-pointer frame that allocas `bytes`, then calls leaf()
// through a fixed frame-pointer frame. wrapped_alloca_call: the same behind
// one more frame-pointer frame. Called through one call site with sizes
// that put the fixed frame at the same sp, the two stacks differ only in
// the frame base that fixed frame saved (and in the wrapper, further out).
int alloca_call(size_t bytes, int (*leaf)());
int wrapped_alloca_call(size_t bytes, int (*leaf)());
