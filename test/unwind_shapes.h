// Stack shapes built with frame pointers, for test/unwind_host_stack.cpp:
// each calls leaf() at the bottom of a stack of the given kind.
#pragma once

#include <cstddef>

int fp_recurse(int depth, int (*leaf)());
int alloca_recurse(int depth, size_t bytes, int (*leaf)());
int realigned_call(int (*leaf)());
