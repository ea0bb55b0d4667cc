/* Looks for itself as an operator's tools do, once its memory stream is
   open (it allocates first): `pidof -s NAME` and `pgrep -n -f NAME` must
   name its own pid, and no other process may have its command line (a
   single-instance check over /proc/ * /cmdline). Prints "pidof=P pgrep=P
   others=N" with P "self", "other" or "none". With "stop" it then has
   `kill -STOP $(pidof -s NAME)` run (its whole process stops), is continued
   0.5 s later (SIGCONT by its pid), allocates 1000 blocks of 6006 bytes
   and prints the milliseconds from the stop to that end. Runs its tools
   through popen(), whose children allocate: each has a stream of its own. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void *volatile sink;

/* The pid a command prints, or 0. */
static long pid_from(const char *command) {
  FILE *p = popen(command, "r");
  long pid = 0;
  if (!p || fscanf(p, "%ld", &pid) != 1) pid = 0;
  if (p) pclose(p);
  return pid;
}

/* Other processes whose command line is ours. */
static int others_like_me(int argc, char **argv) {
  char mine[4096];
  size_t len = 0;
  for (int i = 0; i < argc; i++) {
    const size_t n = strlen(argv[i]) + 1;
    if (len + n > sizeof mine) break;
    memcpy(mine + len, argv[i], n);
    len += n;
  }
  int others = 0;
  DIR *proc = opendir("/proc");
  struct dirent *e;
  while (proc && (e = readdir(proc))) {
    const long pid = atol(e->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    char path[300], line[4096];
    snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    const size_t n = fread(line, 1, sizeof line, f);
    fclose(f);
    if (n == len && memcmp(line, mine, len) == 0) others++;
  }
  if (proc) closedir(proc);
  return others;
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000L + t.tv_nsec / 1000000;
}

int main(int argc, char **argv) {
  for (int i = 0; i < 100; i++) sink = malloc(5005);
  const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  char command[512];
  snprintf(command, sizeof command, "pidof -s %s", name);
  const long pidof = pid_from(command);
  /* ([x]yz: the shell running pgrep, whose command line holds the
     pattern, does not match it.) */
  snprintf(command, sizeof command, "pgrep -n -f '[%c]%s'", name[0], name + 1);
  const long pgrep = pid_from(command);
  const int others = others_like_me(argc, argv);
  printf("pidof=%s pgrep=%s others=%d\n", pidof == getpid() ? "self" : (pidof ? "other" : "none"),
         pgrep == getpid() ? "self" : (pgrep ? "other" : "none"), others);
  fflush(stdout);
  if (argc > 1 && !strcmp(argv[1], "stop")) {
    snprintf(command, sizeof command,
             "kill -STOP $(pidof -s %s); sleep 0.5; kill -CONT %ld", name, (long)getpid());
    const long stopped = now_ms();
    FILE *p = popen(command, "r");
    if (!p) return 1;
    /* (Stopped meanwhile, then continued.) */
    for (int i = 0; i < 1000; i++) sink = malloc(6006);
    pclose(p);
    printf("%ld\n", now_ms() - stopped);
  }
  return 0;
}
