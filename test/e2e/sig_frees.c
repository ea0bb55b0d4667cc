/* A SIGALRM handler frees blocks main allocated, each time while main is
   inside the agent: `sig_frees N`. Main makes N blocks of 1234 B, then N
   blocks of 777 B. It registers a guest backtracer, which the agent calls
   inside its allocation hook while it records a block; during each 777 B
   allocation the backtracer raises SIGALRM there, and the handler frees
   the next 1234 B block. Main then frees the 777 B blocks: nothing leaks.
   Exit 0; 3 without the agent; 1 if the handler did not run N times. */
#define PROF_WEAK_API
#include "libprof.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void **kept;
static volatile int next_to_free, armed;

static void on_alarm(int sig) {
  (void)sig;
  free(kept[next_to_free++]);
}

static int raise_inside(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate) {
  (void)ctx, (void)frames, (void)max;
  *vmstate = PROF_VMST_INTERP;
  if (armed) {
    armed = 0;
    raise(SIGALRM);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (!prof_register_guest) return 3; /* the agent is not loaded */
  const int n = argc > 1 ? atoi(argv[1]) : 1000;
  kept = malloc(sizeof(void *) * (size_t)n);
  void **made = malloc(sizeof(void *) * (size_t)n);
  for (int i = 0; i < n; i++) kept[i] = malloc(1234);

  struct sigaction sa = {0};
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  prof_register_guest(raise_inside, NULL);
  for (int i = 0; i < n; i++) {
    armed = 1;
    made[i] = malloc(777);
  }
  prof_register_guest(NULL, NULL);

  for (int i = 0; i < n; i++) free(made[i]);
  free(made);
  free(kept);
  char line[64]; /* (stdio's buffer would be a block leaked by construction) */
  write(1, line, (size_t)snprintf(line, sizeof line, "handler_frees %d\n", next_to_free));
  return next_to_free == n ? 0 : 1;
}
