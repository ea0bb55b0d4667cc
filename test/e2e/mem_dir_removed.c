/* Makes 1000 blocks of 3003 bytes, then removes the directory DIR (argv[1])
   where its profile is written, every file in it first, then makes and
   frees 300 blocks of 3004 bytes every 2 ms for 0.4 s (the agent's ticks
   come meanwhile) and prints "done". */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

void *volatile sink;

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  for (int i = 0; i < 1000; i++) sink = malloc(3003);
  DIR *d = opendir(argv[1]);
  if (!d) return 1;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
    if (e->d_name[0] != '.') unlink(path);
  }
  closedir(d);
  if (rmdir(argv[1]) != 0) return 1;
  const struct timespec pause = {0, 2 * 1000 * 1000};
  for (int i = 0; i < 200; i++) {
    for (int j = 0; j < 300; j++) {
      sink = malloc(3004);
      free(sink);
    }
    nanosleep(&pause, NULL);
  }
  puts("done");
  return 0;
}
