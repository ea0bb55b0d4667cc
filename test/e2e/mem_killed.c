/* Allocates 1000 blocks of 9009 bytes and frees 400 of them, waits for the
   agent's writer to sync its file (every 100 ms), then SIGKILLs the writer
   (the task "libprof-writer" that its parent, a subreaper, adopted) and
   itself: nothing of the agent ends
   the stream, whose compressed frame stays open. Exits 3 if it finds no
   writer. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The pid of our sibling task named "libprof-writer", or 0. */
static pid_t find_writer(void) {
  DIR *proc = opendir("/proc");
  struct dirent *e;
  pid_t found = 0;
  while (proc && !found && (e = readdir(proc))) {
    char path[300], stat[512], name[64];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    int pid = 0, ppid = 0;
    char state;
    if (fgets(stat, sizeof stat, f) &&
        sscanf(stat, "%d (%63[^)]) %c %d", &pid, name, &state, &ppid) == 4 && ppid == getppid() &&
        !strcmp(name, "libprof-writer"))
      found = pid;
    fclose(f);
  }
  if (proc) closedir(proc);
  return found;
}

int main(void) {
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
