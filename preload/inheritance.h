// Inheritance: which processes of a profiled tree record, and the settings
// they inherit, fixed once in the process profiling started in.
//
// PROF_FOLLOW=0 profiles that one process through its execs (exec keeps the
// pid) and none of its children, however made (fork, vfork, posix_spawn,
// system, popen: glibc's own spawns cannot be interposed): the first agent
// rewrites the variable to 0:<its pid>, and an agent starting in another pid
// stays inert. A relative PROF_OUTPUT is made absolute against the directory
// that process started in, so children that change directory write beside it.
//
// XXX: setenv on a variable the environment has replaces the string in its
// slot of the array the process started with, which main()'s envp and Go's
// runtime read too; a new variable would be in a copy of the array only.
// So the pid rides in PROF_FOLLOW, and only PROF_OUTPUT's default is added.
#pragma once

#include "config.h"

namespace prof {

// Whether this process records: false when PROF_FOLLOW names another pid.
bool records_here(const Config &cfg);

// Pins the root pid and the absolute output template in cfg and in the
// environment; false, after one line on stderr, when that fails.
bool pin_inherited_settings(Config *cfg);

}  // namespace prof
