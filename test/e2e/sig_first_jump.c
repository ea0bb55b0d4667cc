/* A handler the agent never sees (installed with the rt_sigaction system
   call) siglongjmps out of wherever a 200 us timer finds the program, from
   its very first allocation on, which opens the profile: the program
   allocates and frees 100 B blocks until 3 jumps, stops the timer, then
   leaks 10 blocks of 555 B. Prints "jumps 3". */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static sigjmp_buf back;
static volatile int jumps;
static void *volatile sink;

static void on_alarm(int sig) {
  (void)sig;
  /* (One that fires after the third, before the timer is stopped, is let be.) */
  if (jumps >= 3) return;
  jumps++;
  siglongjmp(back, 1);
}

/* The rt_sigaction system call needs the return trampoline glibc's own
   sigaction supplies. */
extern void restore_rt(void);
__asm__(".text\n.type restore_rt,@function\nrestore_rt:\n mov $15, %rax\n syscall\n");

int main(void) {
  struct {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
  } k = {on_alarm, 0x04000000 /* SA_RESTORER */, restore_rt, 0};
  syscall(SYS_rt_sigaction, SIGALRM, &k, NULL, 8);
  const struct itimerval every = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &every, NULL);
  sigsetjmp(back, 1);
  while (jumps < 3) {
    void *p = malloc(100);
    sink = p;
    free(p);
  }
  setitimer(ITIMER_REAL, &off, NULL);
  for (int i = 0; i < 10; i++) sink = malloc(555);
  printf("jumps %d\n", jumps);
  return 0;
}
