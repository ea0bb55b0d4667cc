// Whether the program's allocator calls reach the agent's hooks at all.
#pragma once

namespace prof {

// The executable, or a library preloaded before the agent, that defines
// malloc, free, calloc or realloc itself takes those calls ahead of the
// agent (symbols resolve in load order), which then never sees them: says
// so in one line, naming the object and the functions. Nothing when the
// agent's own hooks are the ones found.
void say_if_allocator_hidden();

}  // namespace prof
