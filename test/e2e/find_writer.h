/* The agent's writer task for the e2e programs: a sibling of the calling
   process (their parent, the test, is a subreaper) named "libprof-writer". */
#pragma once

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Its pid, or 0. */
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
