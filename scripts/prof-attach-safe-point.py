# prof-run --pid: the gdb command `prof-safe-point`, run before each call
# gdb makes in the process (dlopen, prof_attach_start, prof_attach_stop;
# scripts/prof-attach.sh sources this file).
#
# Why: gdb stops the process wherever its threads are, and calls on the
# selected one. A thread stopped inside the C library's allocator (or the
# dynamic loader) is half-way through changing the heap (or the list of
# loaded objects): a call that allocates there (dlopen does, and so does
# the agent's start: the Lua adapter's scratch state) finds the heap
# inconsistent, or deadlocks on the lock the thread holds. A Lua script
# that allocates all the time was stopped there in 1 attach out of 20, and
# crashed ("corrupted double-linked list").
#
# What: while the innermost frames of the selected thread, those in libc
# or ld.so, include the allocator (any name of its family) or the loader,
# the thread is let run until the outermost of them returns to its caller
# (`finish`; the other threads run meanwhile, so a lock it waits for is
# released), then looked at again. Other C library calls (a read or an
# epoll_wait blocked in the kernel) are left as they are: they hold no
# state a call could break, and may not return for a long time.
import re

import gdb

ALLOCATOR = re.compile(
    r"malloc|calloc|realloc|free|memalign|valloc|aligned_alloc|tcache|arena|"
    r"sysmalloc|systrim|consolidate|morecore|sbrk|brk")
TRIES = 50


def in_libc_or_loader(frame):
    lib = gdb.solib_name(frame.pc()) or ""
    base = lib.rsplit("/", 1)[-1]
    return base.startswith("libc.so") or base.startswith("ld-linux")


def loader(frame):
    lib = gdb.solib_name(frame.pc()) or ""
    return lib.rsplit("/", 1)[-1].startswith("ld-linux")


def unsafe_entry():
    """The outermost frame of the innermost run in libc or ld.so, when that
    run is in the allocator or the loader; else None."""
    frame, run = gdb.newest_frame(), []
    while frame is not None and in_libc_or_loader(frame):
        run.append(frame)
        frame = frame.older()
    if any(loader(f) or ALLOCATOR.search(f.name() or "") for f in run):
        return run[-1]
    return None


class SafePoint(gdb.Command):
    """Lets the selected thread leave the allocator or the loader."""

    def __init__(self):
        super().__init__("prof-safe-point", gdb.COMMAND_RUNNING)

    def invoke(self, arg, from_tty):
        try:
            for _ in range(TRIES):
                entry = unsafe_entry()
                if entry is None or entry.older() is None:
                    return  # (None older: a thread of the C library's own, wholly in it)
                entry.select()
                gdb.execute("finish", to_string=True)
            print("prof-safe-point: the thread stayed in the allocator")
        except gdb.error as e:  # (a stack gdb cannot unwind, the process gone)
            print("prof-safe-point: %s" % e)


SafePoint()
