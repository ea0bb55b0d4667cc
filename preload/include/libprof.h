/*
** libprof.h: the public C API of the libprof agent, for programs and for the
** guest VMs they embed.
**
** Every function here is exported by libprof.so. A program must run unchanged
** when the agent is not loaded, so declare what you call weak and test it:
**
**   #pragma weak prof_register_guest
**   if (prof_register_guest) prof_register_guest(my_backtracer, my_ctx);
**
** (PROF_WEAK_API, defined before including this header, does that for you.)
*/
#ifndef LIBPROF_H
#define LIBPROF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Guest frame types: sysprof's FRAME_* values. */
#define PROF_FRAME_LFUNC 1 /* a guest function: addr = its prototype, line = current line */
#define PROF_FRAME_CFUNC 2 /* a native function called by the guest: addr = its address */
#define PROF_FRAME_FFUNC 3 /* a VM built-in ("fast function"): addr = its id */
/* In a CPU sample (prof_guest_signal_context() not NULL) under
** PROF_VMST_TRACE, the JIT trace running: addr = its number. A backtracer
** that knows it puts it innermost when max >= 2, the frame where the trace
** started (PROF_FRAME_LFUNC at its start line) right after it. */
#define PROF_FRAME_TRACE 4
/* A backtracer that stops before the root of a guest stack (a frame limit)
** ends it with one PROF_FRAME_CFUNC frame at this address, which no function
** has (the highest, so that no lookup of the nearest symbol below an
** address finds it); the agent counts such stacks (guest_stacks_cut) and the
** adapter names the address "[… more frames]" through prof_guest_cfunc_symbol. */
#define PROF_GUEST_CUT_ADDR UINT64_MAX

/* VM states: LuaJIT's LJ_VMST_* values, for sysprof's DEFAULT-mode counters. */
#define PROF_VMST_INTERP 0
#define PROF_VMST_LFUNC 1
#define PROF_VMST_FFUNC 2
#define PROF_VMST_CFUNC 3
#define PROF_VMST_GC 4
#define PROF_VMST_EXIT 5
#define PROF_VMST_RECORD 6
#define PROF_VMST_OPT 7
#define PROF_VMST_ASM 8
#define PROF_VMST_TRACE 9

struct prof_guest_frame {
  uint8_t type;  /* PROF_FRAME_* */
  uint64_t addr;
  uint64_t line;
};

/*
** A guest backtracer fills frames[0..max) innermost first and returns how
** many it wrote (0 when no guest code runs on this thread), and stores the VM
** state in *vmstate. max may be 0: then only *vmstate is wanted.
**
** It is called on the thread being sampled, in signal context, and inside
** allocation hooks: it must be async-signal-safe (no malloc, no locks, no
** stdio), must not allocate through the VM, and must tolerate being called
** while the VM is half-way through a call or return, and while it runs
** itself (a sample that interrupts the backtracer inside a hook).
*/
typedef int (*prof_guest_backtracer)(void *ctx, struct prof_guest_frame *frames, int max,
                                     int *vmstate);

/* Inside a backtracer called by the CPU sampler: the ucontext_t of the
** interrupted code (its registers), else NULL. A VM that keeps its frame
** pointer in a register can read it there. */
const void *prof_guest_signal_context(void);

/* Registers the backtracer (one per process; NULL unregisters). */
void prof_register_guest(prof_guest_backtracer backtracer, void *ctx);

/*
** Optional, registered after the backtracer and for the same VM: the same
** walk for allocation hooks only (on the allocating thread, never in a
** signal handler), which may remember its previous call on this thread. It
** also stores in *unchanged how many outermost frames of its result are
** provably those of its previous call's result on this thread (0 when it
** cannot tell), so that the agent spends nothing on them. Registering a
** backtracer again drops it.
*/
typedef int (*prof_guest_recaller)(void *ctx, struct prof_guest_frame *frames, int max,
                                   int *vmstate, int *unchanged);
void prof_register_guest_recall(prof_guest_recaller recaller, void *ctx);

/*
** Optional, the same as a recaller without copying frames it keeps
** (registered the same way; the agent prefers it to a recaller): it
** returns where its *n frames lie, innermost first: in room[0..max), or in
** memory of its own, left as it is until its next call on this thread.
*/
typedef const struct prof_guest_frame *(*prof_guest_stack_recaller)(
    void *ctx, struct prof_guest_frame *room, int max, int *n, int *vmstate, int *unchanged);
void prof_register_guest_stack_recall(prof_guest_stack_recaller recaller, void *ctx);

/*
** Publishes guest symbols (not from signal context): a function prototype at
** addr defined in chunk at line, or a native function's name. They reach
** both streams as in-stream symtab records, once per address.
*/
void prof_guest_symbol(uint64_t addr, const char *chunk, uint64_t line);
void prof_guest_cfunc_symbol(uint64_t addr, const char *name);
/* prof_guest_symbol from a signal handler: a backtracer that has no normal
** context to name what it walks in (a process the agent was attached to,
** where no hook of the adapter runs). Async-signal-safe; 0 when the symbol
** table is busy (another thread publishing, or the interrupted one): name
** it at a later sample. 1 when published. */
int prof_guest_symbol_from_signal(uint64_t addr, const char *chunk, uint64_t line);

/*
** A guest VM's own allocator calls, for VMs that allocate outside malloc
** (LuaJIT's allocator maps its own arenas). The site is where memprof
** charges the call: PROF_SITE_* below. Call it with lua_Alloc's arguments:
** before the VM frees a block (nptr NULL, nsize 0), after it allocated
** (ptr NULL, osize 0) or reallocated one. frames[0..nframes) are the guest
** stack, innermost first, taken at the call (the backtracer's frames).
** A failed call may be reported too (nptr NULL, nsize not 0): the old block
** lives on, nothing is recorded. Allocation sampling (PROF_SAMPLE_BYTES)
** applies as it does to malloc. Not from signal context.
*/
#define PROF_SITE_INTERNAL 1 /* the VM itself: collector, trace compiler, ... */
#define PROF_SITE_LFUNC 2    /* addr = a prototype, line = its current line */
#define PROF_SITE_CFUNC 3    /* addr = a native function's address */
#define PROF_SITE_TRACE 4    /* addr = the number of the JIT trace running */

struct prof_guest_site {
  uint8_t source; /* PROF_SITE_* */
  uint64_t addr;
  uint64_t line;
};

void prof_guest_alloc(const void *ptr, size_t osize, const void *nptr, size_t nsize,
                      const struct prof_guest_site *site, const struct prof_guest_frame *frames,
                      int nframes);
/*
** prof_guest_alloc for an adapter that takes the sampling verdict first,
** so that it captures nothing for a call the agent will not record, and
** that remembers its walks between calls, so that the agent compares only
** the frames that may have changed with the stack it recorded last.
**
** prof_guest_sample, before the VM's call (not from signal context):
** which of its blocks are recorded, PROF_SAMPLE_OLD (ptr's end: a free, or
** the old half of a realloc) and PROF_SAMPLE_NEW (the block of nsize bytes
** it makes); 0: nothing, skip the capture. Without allocation sampling
** (PROF_SAMPLE_BYTES) that is every block while the agent records
** (allocations not while paused); with it, the blocks it samples and the
** ends of the blocks it sampled, as for malloc. Take it exactly once per
** call: it counts the new block's bytes down and forgets the old block.
**
** prof_guest_alloc_walked, with that verdict, after every call (before a
** free), a verdict of 0 too (frames NULL): the heap count takes every
** call. The arguments as prof_guest_alloc's; a failed call is reported too
** (nptr NULL, nsize not 0: the old block lives on). walk: what the adapter walks
** from (a VM), seq: that walk's count of captures (one more at each
** capture), same: how many outer frames of this capture are, at the same
** depth from the root, those of the capture it passed with seq - 1. A
** capture the agent did not see (a call it did not make, or skipped) makes
** the agent compare them all.
*/
#define PROF_SAMPLE_OLD 1u
#define PROF_SAMPLE_NEW 2u
unsigned prof_guest_sample(const void *ptr, size_t nsize);
struct prof_guest_walk {
  const void *walk;
  uint64_t seq;
  int same;
};
void prof_guest_alloc_walked(unsigned verdict, const void *ptr, size_t osize, const void *nptr,
                             size_t nsize, const struct prof_guest_site *site,
                             const struct prof_guest_frame *frames, int nframes,
                             const struct prof_guest_walk *walk);
/* Names JIT trace traceno: it starts in prototype proto at line. A trace
** number the VM reuses is published again. */
void prof_guest_trace_symbol(uint64_t traceno, uint64_t proto, uint64_t line);

/*
** Publishes that the host function containing pc (a return address into it)
** is the guest VM's interpreter, named name (not from signal context): guest
** frames are placed right above each host frame in it, which is shown as
** name even in a stripped binary. A guest C frame at pc marks native code
** re-entering the interpreter between two runs of guest frames. Returns 0
** when the function's extent is unknown (no unwind table covers pc).
*/
int prof_guest_vm_function(uint64_t pc, const char *name);

/*
** A guest VM's step through its JIT-compiled code, which no unwind table
** covers (LuaJIT's traces run in the interpreter's own stack frame): for pc
** (an interrupted instruction, or a return address) in such code and the
** stack pointer sp there, it sets *vm_pc to an address of the VM's own code
** (which a table covers) and *vm_sp to the stack pointer that code had when
** it entered the JIT code, and returns 1; 0 when pc is not its code. The
** host stack of a CPU sample then shows the VM's frame (at *vm_pc) in place
** of the JIT code, and goes on to its callers instead of ending there.
** It is asked about every frame: covered says a table covers pc. In its
** VM's own code the step corrects frames whose stack pointer is not where
** the table says the VM keeps it (LuaJIT's trace exit handler lowers it
** by the registers it saves), and returns 0 for the others, which the table
** steps. Called in signal handlers: async-signal-safe, no lock, no
** allocation, every read checked.
*/
typedef int (*prof_guest_jit_step)(uint64_t pc, uint64_t sp, int covered, uint64_t *vm_pc,
                                   uint64_t *vm_sp);
void prof_register_guest_jit_step(prof_guest_jit_step step);

/*
** The kind of object the calling thread's next allocations are for, set by
** a VM's allocator wrapper around its real allocator call and reset to
** PROF_OBJECT_NONE after it: the allocation and reallocation events recorded
** meanwhile carry it (format/README.md, object-type). Thread-local, no
** syscall: cheap enough for every allocation. Not from signal context.
*/
#define PROF_OBJECT_NONE 0
#define PROF_OBJECT_STRING 1
#define PROF_OBJECT_TABLE 2
#define PROF_OBJECT_FUNCTION 3  /* a guest function (Lua closure) */
#define PROF_OBJECT_CFUNCTION 4 /* a native function with upvalues (C closure) */
#define PROF_OBJECT_USERDATA 5
#define PROF_OBJECT_THREAD 6    /* a coroutine */
#define PROF_OBJECT_PROTO 7     /* a function prototype */
#define PROF_OBJECT_UPVALUE 8
#define PROF_OBJECT_OTHER 9     /* the VM's memory outside object headers: table parts, stacks, buffers */

void prof_guest_object_type(unsigned type);

/* Run-time control: pause and resume recording, and label a point in time
** (prof_marker writes to the streams: not from a signal handler). */
void prof_start(void);
void prof_stop(void);
void prof_marker(const char *label);

#ifdef PROF_WEAK_API
#pragma weak prof_register_guest
#pragma weak prof_register_guest_recall
#pragma weak prof_register_guest_stack_recall
#pragma weak prof_guest_symbol
#pragma weak prof_guest_symbol_from_signal
#pragma weak prof_guest_cfunc_symbol
#pragma weak prof_guest_alloc
#pragma weak prof_guest_alloc_walked
#pragma weak prof_guest_trace_symbol
#pragma weak prof_guest_object_type
#pragma weak prof_guest_sample
#pragma weak prof_guest_signal_context
#pragma weak prof_guest_vm_function
#pragma weak prof_register_guest_jit_step
#pragma weak prof_start
#pragma weak prof_stop
#pragma weak prof_marker
#endif

#ifdef __cplusplus
}
#endif

#endif /* LIBPROF_H */
