// Output files: one per process and stream kind, named from the PROF_OUTPUT
// template, created safely.
//
// Invariants: no allocation, no stdio. Files are created with O_CREAT|O_EXCL|
// O_NOFOLLOW and mode 0666 filtered by the user's umask, so a symlink is never
// followed and another process's file (or an earlier image of this pid, before
// an exec) is never clobbered: on a name clash ".1", ".2", ... is appended.
// A template naming an existing character device (/dev/null, /dev/full) is
// opened as it is, for every stream.
#pragma once

#include <sys/types.h>

namespace prof {

// Expands `tmpl` (%p = pid, %e = the program's name, argv[0]'s last part
// with characters other than [A-Za-z0-9._+-] as '_', %% = %) and appends ".<suffix>" ("memprof",
// "sysprof"). Returns false when the result does not fit.
bool expand_output_path(const char *tmpl, pid_t pid, const char *suffix, char *out,
                        size_t cap);

// Creates the file for `suffix`; returns the fd or -1 with errno set, and the
// chosen path in path_out.
int create_output_file(const char *tmpl, pid_t pid, const char *suffix, char *path_out,
                       size_t cap);

// Creates the ring file beside the stream at `stream_path` (format/ring_file.h:
// its path with ".ring"), read and written, in path_out; returns the fd (a
// high, close-on-exec one) or -1 with errno set.
int create_ring_file(const char *stream_path, char *path_out, size_t cap);

}  // namespace prof
