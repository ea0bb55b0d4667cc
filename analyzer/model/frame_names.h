// How the tables name and cut frames: C++ template arguments shortened (as
// heaptrack prints them), and the allocator's own frames recognised, so an
// allocation is charged to the code that asked for it, not to operator new.
//
// Invariants: short_name() keeps every character outside template argument
// lists (operators such as `operator<<` included) and returns the name
// unchanged when its brackets do not balance; both are pure functions of
// the name.
#pragma once

#include <string>
#include <string_view>

#include "model/frame.h"

namespace prof {

// "std::vector<…>::push_back(int const&)" for
// "std::vector<int, std::allocator<int> >::push_back(int const&)".
std::string short_name(std::string_view function);

// Whether a host function is the allocator's rather than its caller's:
// operator new and new[], std::allocator, std::allocator_traits,
// (__gnu_cxx|std::_)_new_allocator, the containers' _M_allocate* and
// _M_get_node helpers, the C allocation entry points (malloc, calloc,
// realloc, aligned variants, __libc_*), and the Lua adapters' allocator
// wrappers (publishing_alloc, typing_alloc, profiling_alloc).
bool is_allocator_function(std::string_view function);

// The function a frame is in, for tables by function: a host frame's
// function; a Lua frame's function by the line it starts at ("@bt.lua:6"
// for every line of the function defined at line 6, as LuaJIT's tools name
// functions), after its name where the frame has one ("build (@bt.lua:6)",
// "(main chunk) (@bt.lua)").
std::string function_name(const Frame &f);

}  // namespace prof
