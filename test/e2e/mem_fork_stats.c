/* Counters that belong to one process: the parent allocates 5 x 6060 B
   through a function without unwind information (hand-written, no CFI),
   which the agent's rule walk cannot step through (libunwind then takes
   the stack: unwind_fallbacks), then forks; the child allocates 7 x 7070 B
   from ordinary code and exits; the parent waits. All leaked. */
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

int main(void) {
  for (int i = 0; i < 5; i++) sink = malloc_without_cfi(6060);
  const pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 7; i++) sink = malloc(7070);
    exit(0);
  }
  int status;
  if (waitpid(pid, &status, 0) != pid) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
