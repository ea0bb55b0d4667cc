/* Allocation churn on stacks that are not the thread's own:
   `cpu_other_stacks coroutine SECONDS`: mallocs and frees 48-byte blocks on
   a makecontext() stack (a coroutine's, from malloc) until the thread's
   CPU clock has advanced SECONDS.
   `cpu_other_stacks altstack SECONDS`: the same in a SIGUSR1 handler that
   runs on a sigaltstack(). Prints "allocs N". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "thread_cpu.h"

static double seconds;
static unsigned long allocs;
static void *volatile sink;
static ucontext_t main_context, coroutine_context;

static void churn_off_stack(void) {
  const double t0 = thread_cpu();
  while (thread_cpu() - t0 < seconds)
    for (int i = 0; i < 1000; i++, allocs++) {
      void *p = malloc(48);
      sink = p;
      free(p);
    }
}

static void on_usr1(int sig) {
  (void)sig;
  churn_off_stack();
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  seconds = atof(argv[2]);
  const size_t size = 256 * 1024;
  void *stack = malloc(size);
  if (!stack) return 1;
  if (strcmp(argv[1], "coroutine") == 0) {
    getcontext(&coroutine_context);
    coroutine_context.uc_stack.ss_sp = stack;
    coroutine_context.uc_stack.ss_size = size;
    coroutine_context.uc_link = &main_context;
    makecontext(&coroutine_context, churn_off_stack, 0);
    swapcontext(&main_context, &coroutine_context);
  } else if (strcmp(argv[1], "altstack") == 0) {
    stack_t ss = {.ss_sp = stack, .ss_size = size, .ss_flags = 0};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0) return 1;
    raise(SIGUSR1);
  } else {
    return 2;
  }
  printf("allocs %lu\n", allocs);
  return 0;
}
