/* The kernel's floor for 1 kHz per-thread CPU sampling on this machine,
   without any profiler: a fixed busy loop, timed in thread CPU time, bare;
   with a perf task-clock event that overflows every 1 ms of it but signals
   no one (the timer interrupts alone); and with that event signalling an
   empty handler (what any signal-based 1 kHz sampler pays at least).
   `signal_floor [ROUNDS]`: the best of ROUNDS interleaved runs of each. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned long sink;
static volatile long hits;

static void on_signal(int sig) {
  (void)sig;
  hits++;
}

static double thread_cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double work(void) {
  const double t0 = thread_cpu();
  for (long i = 0; i < 2000000000L; i++) sink += (unsigned long)i;
  return thread_cpu() - t0;
}

/* A task-clock event on this thread overflowing every 1 ms of its CPU time;
   with_signal: each overflow sends SIGPROF to this thread. */
static int open_event(int with_signal) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_TASK_CLOCK;
  a.sample_period = 1000000;
  a.wakeup_events = 1;
  a.exclude_kernel = 1;
  const int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    perror("perf_event_open");
    exit(1);
  }
  if (with_signal) {
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    fcntl(fd, F_SETFL, O_ASYNC);
    fcntl(fd, F_SETSIG, SIGPROF);
    fcntl(fd, F_SETOWN_EX, &owner);
  }
  ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  return fd;
}

int main(int argc, char **argv) {
  signal(SIGPROF, on_signal);
  const int rounds = argc > 1 ? atoi(argv[1]) : 5;
  double best[3] = {1e9, 1e9, 1e9};
  for (int r = 0; r < rounds; r++)
    for (int m = 0; m < 3; m++) {
      const int fd = m ? open_event(m == 2) : -1;
      const double t = work();
      if (fd >= 0) close(fd);
      if (t < best[m]) best[m] = t;
    }
  printf("bare %.3fs | 1 kHz timer interrupts, no signal %.3fs (%.3fx) | "
         "and a signal to an empty handler %.3fs (%.3fx); %ld signals\n",
         best[0], best[1], best[1] / best[0], best[2], best[2] / best[0], hits);
  return 0;
}
