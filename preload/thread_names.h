// Thread names into the streams (thread_names.cpp): the setters are
// interposed; this writes the name a thread has when it starts.
#pragma once

#include <sys/types.h>

namespace prof {

// The calling thread's name as /proc gives it, written into each stream
// (not in a signal handler).
void write_thread_name_at_start();
// The calling thread's name as /proc gives it, written into the memory
// stream alone, before the thread's first event there (the hooks, guarded).
void write_thread_name_to_memory(pid_t tid);

}  // namespace prof
