// The CPU sampler: per-thread CPU-time sampling of host and guest stacks,
// streamed as sysprof. Its lifecycle is driven by the agent's (lifecycle.h).
#pragma once

#include "config.h"

namespace prof {

// Starts sampling every thread of the process (threads created later are
// registered by the pthread_create hook). Returns false, having printed one
// line on stderr, when sampling cannot start; the memory agent goes on.
bool sampler_start(const Config &cfg);
// Registers the calling thread (called on each new thread).
void sampler_thread_start();
// Stops sampling, drains every buffer and writes the epilogue.
void sampler_stop();
// In a forked child: drop the parent's state and start a fresh stream.
void sampler_fork_child(const Config &cfg);

}  // namespace prof
