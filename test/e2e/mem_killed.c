/* Allocates 1000 blocks of 9009 bytes and frees 400 of them, waits for the
   agent's writer to sync its file (every 100 ms), then SIGKILLs the writer
   (the task "libprof-writer" that its parent, a subreaper, adopted) and
   itself: nothing of the agent ends the stream, whose compressed frame
   stays open. Exits 3 if it finds no writer.
   With "writer-only" it kills the writer alone, while it writes (on a CPU,
   as far as /proc tells), and goes on: a second thread churns malloc/free (the writer busy compressing),
   main kills the writer, makes 2,000,000 more malloc/free pairs and ends
   the churn, then prints the seconds from the kill to the end. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "find_writer.h"

static volatile int stop;

static void *churn(void *arg) {
  (void)arg;
  while (!stop) {
    void *volatile p = malloc(48);
    free(p);
  }
  return NULL;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

/* Whether task pid is running on a CPU now (state R in its stat). */
static int running(pid_t pid) {
  char path[64], stat[512], name[64], state = 0;
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int got = 0;
  if (fgets(stat, sizeof stat, f)) got = sscanf(stat, "%*d (%63[^)]) %c", name, &state) == 2;
  fclose(f);
  return got && state == 'R';
}

static int kill_writer_alone(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, churn, NULL) != 0) return 1;
  const struct timespec busy = {0, 300 * 1000 * 1000};
  nanosleep(&busy, NULL);
  const pid_t writer = find_writer();
  if (!writer) return 3;
  /* Most likely in a write when it is on a CPU. */
  for (int i = 0; i < 100000 && !running(writer); i++) {
  }
  kill(writer, SIGKILL);
  const double killed = now_s();
  for (int i = 0; i < 2000000; i++) {
    void *volatile p = malloc(32);
    free(p);
  }
  stop = 1;
  pthread_join(t, NULL);
  printf("%.1f\n", now_s() - killed);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "writer-only")) return kill_writer_alone();
  static void *blocks[1000];
  for (int i = 0; i < 1000; i++) blocks[i] = malloc(9009);
  for (int i = 0; i < 400; i++) free(blocks[i]);
  const struct timespec wait = {0, 400 * 1000 * 1000};
  nanosleep(&wait, NULL);
  const pid_t writer = find_writer();
  if (!writer) return 3;
  kill(writer, SIGKILL);
  kill(getpid(), SIGKILL);
  return 1;
}
