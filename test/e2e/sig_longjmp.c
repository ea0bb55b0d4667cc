/* A signal handler that siglongjmps out of the agent, then known blocks:
   `sig_longjmp HOW N [thread]`. HOW is how the SIGALRM handler is
   installed: "sigaction", or "raw" (the rt_sigaction system call, which the
   agent does not see). The handler jumps back to main whenever it
   interrupted libprof.so itself, or the guest backtracer (registered here,
   called inside the allocation hook) asked for it: main allocates and frees
   333 B blocks while a 20 us timer signals it, until 20 jumps or two
   seconds (not with "raw": there a jump may leave the agent anywhere, even
   where it cannot be put right), then while the backtracer raises SIGALRM
   inside the hook, until 20 more jumps or two seconds. Then it makes N
   blocks of 555 B and frees them. With
   "thread", a second thread (SIGALRM blocked) makes and frees 200000 blocks
   of 666 B meanwhile, several times what the agent's ring holds. Prints
   "jumps J"; exit 0, 3 without the agent, 1 without a jump, 99 when a
   watchdog finds the program still running after 60 s. */
#define _GNU_SOURCE
#define PROF_WEAK_API
#include "libprof.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

enum { kJumpsTimed = 20, kJumpsInside = 20, kThreadBlocks = 200000 };

static sigjmp_buf back;
static volatile int jumping, raise_next, raised, timed;
static volatile long jumps;
static uintptr_t agent_lo, agent_hi; /* libprof.so's code */
static void *volatile sink;

static void on_alarm(int sig, siginfo_t *info, void *ucontext) {
  (void)sig, (void)info;
  const uintptr_t pc = (uintptr_t)((ucontext_t *)ucontext)->uc_mcontext.gregs[REG_RIP];
  const int in_agent = pc >= agent_lo && pc < agent_hi;
  if (!jumping || !(raised || in_agent)) return;
  raised = 0;
  jumps++;
  siglongjmp(back, 1);
}

static int raise_inside(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate) {
  (void)ctx, (void)frames, (void)max;
  *vmstate = PROF_VMST_INTERP;
  if (raise_next) {
    raise_next = 0;
    raised = 1;
    raise(SIGALRM);
  }
  return 0;
}

static int find_agent(struct dl_phdr_info *info, size_t size, void *base) {
  (void)size;
  if (info->dlpi_addr != (uintptr_t)base) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    agent_lo = info->dlpi_addr + ph->p_vaddr;
    agent_hi = agent_lo + ph->p_memsz;
  }
  return 1;
}

/* The rt_sigaction system call needs the return trampoline glibc's own
   sigaction supplies. */
extern void restore_rt(void);
__asm__(".text\n.type restore_rt,@function\nrestore_rt:\n mov $15, %rax\n syscall\n");

static void install(const char *how) {
  struct sigaction sa = {0};
  sa.sa_sigaction = on_alarm;
  sa.sa_flags = SA_SIGINFO;
  if (strcmp(how, "raw") != 0) {
    sigaction(SIGALRM, &sa, NULL);
    return;
  }
  struct {
    void *handler;
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
  } k = {(void *)on_alarm, SA_SIGINFO | 0x04000000 /* SA_RESTORER */, restore_rt, 0};
  syscall(SYS_rt_sigaction, SIGALRM, &k, NULL, 8);
}

/* Allocates at the same depth as make_known() below, so that the frames a
   jump leaves behind lie deeper than the next allocation's. */
static __attribute__((noinline)) void churn(void) {
  void *p = malloc(333);
  sink = p;
  free(p);
}

static __attribute__((noinline)) void make_known(int n) {
  void **blocks = malloc(sizeof(void *) * (size_t)n);
  for (int i = 0; i < n; i++) blocks[i] = malloc(555);
  for (int i = 0; i < n; i++) free(blocks[i]);
  free(blocks);
}

static void *other_thread(void *arg) {
  (void)arg;
  sigset_t alarm;
  sigemptyset(&alarm);
  sigaddset(&alarm, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &alarm, NULL);
  for (int i = 0; i < kThreadBlocks; i++) {
    void *p = malloc(666);
    sink = p;
    free(p);
  }
  return NULL;
}

static void *watchdog(void *arg) {
  (void)arg;
  sleep(60);
  syscall(SYS_exit_group, 99);
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (!prof_register_guest || argc < 3) return 3;
  const int n = atoi(argv[2]);
  Dl_info agent;
  if (!dladdr((void *)prof_register_guest, &agent)) return 3;
  dl_iterate_phdr(find_agent, agent.dli_fbase);

  sigset_t alarm;
  sigemptyset(&alarm);
  sigaddset(&alarm, SIGALRM);
  pthread_t wd, other;
  pthread_sigmask(SIG_BLOCK, &alarm, NULL); /* the threads start with it blocked */
  pthread_create(&wd, NULL, watchdog, NULL);
  const int threaded = argc > 3 && !strcmp(argv[3], "thread");
  if (threaded) pthread_create(&other, NULL, other_thread, NULL);
  install(argv[1]);
  prof_register_guest(raise_inside, NULL);

  timer_t timer;
  struct sigevent sev = {0};
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = SIGALRM;
  sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  timer_create(CLOCK_MONOTONIC, &sev, &timer);

  const int raw = !strcmp(argv[1], "raw");
  const double timer_until = raw ? 0 : now() + 2, inside_until = now() + 4;
  struct itimerspec every = {{0, 20000}, {0, 20000}};
  if (!raw) timer_settime(timer, 0, &every, NULL);
  sigsetjmp(back, 1); /* the mask saved: SIGALRM unblocked below */
  pthread_sigmask(SIG_UNBLOCK, &alarm, NULL);
  jumping = 1;
  while (jumps < kJumpsTimed && now() < timer_until) churn();
  if (!timed) {
    timed = 1;
    timer_delete(timer);
  }
  while (jumps < (raw ? 0 : kJumpsTimed) + kJumpsInside && now() < inside_until) {
    raise_next = 1;
    churn();
  }
  raise_next = 0;
  jumping = 0;
  prof_register_guest(NULL, NULL);

  make_known(n);
  if (threaded) pthread_join(other, NULL);
  printf("jumps %ld\n", jumps);
  return jumps > 0 ? 0 : 1;
}
