/* A program that ends as soon as a debugger attaches to it (TracerPid in
** /proc/self/status), for test/attach_e2e.cpp: a process that exits while
** prof-run attaches. Prints "ready" first; a second thread watches (gdb's
** calls into the process run on one thread while the others go on). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int traced(void) {
  char buf[4096];
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  int tracer = 0;
  while (fgets(buf, sizeof buf, f))
    if (strncmp(buf, "TracerPid:", 10) == 0) tracer = atoi(buf + 10) != 0;
  fclose(f);
  return tracer;
}

static void *watch(void *arg) {
  for (int i = 0; i < 600000 && !traced(); i++) usleep(100);
  _exit(3);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, watch, NULL);
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}
