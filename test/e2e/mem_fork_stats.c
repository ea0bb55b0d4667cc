/* Counters that belong to one process: the parent allocates 5 x 6060 B
   through a function without unwind information (hand-written, no CFI),
   which the agent's rule walk cannot step through (libunwind then takes
   the stack: unwind_fallbacks), with a guest backtracer registered that
   raises SIGUSR1 inside the agent at its first call (held back and
   delivered as the agent returns: signals_deferred); it unregisters, then
   forks; the child allocates 7 x 7070 B from ordinary code and exits; the
   parent waits. All leaked. */
#define PROF_WEAK_API
#include "libprof.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;

void *malloc_without_cfi(size_t size);
__asm__(
    ".text\n"
    ".globl malloc_without_cfi\n"
    ".type malloc_without_cfi, @function\n"
    "malloc_without_cfi:\n"
    "\tsub $8, %rsp\n"
    "\tcall malloc@PLT\n"
    "\tadd $8, %rsp\n"
    "\tret\n"
    ".size malloc_without_cfi, .-malloc_without_cfi\n");

static volatile sig_atomic_t handled;
static void on_usr1(int sig) { handled = sig; }

static int raising_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate) {
  (void)ctx, (void)frames, (void)max, (void)vmstate;
  static int raised;
  if (!raised++) raise(SIGUSR1);
  return 0;
}

int main(void) {
  if (!prof_register_guest) return 3; /* the agent is not loaded */
  signal(SIGUSR1, on_usr1);
  prof_register_guest(raising_backtrace, NULL);
  for (int i = 0; i < 5; i++) sink = malloc_without_cfi(6060);
  prof_register_guest(NULL, NULL);
  if (handled != SIGUSR1) return 2;
  const pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 7; i++) sink = malloc(7070);
    exit(0);
  }
  int status;
  if (waitpid(pid, &status, 0) != pid) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
