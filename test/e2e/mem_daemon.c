/* A program that becomes a daemon with daemon(3). `mem_daemon DIR`: leaks
   3 x 1111 B, then daemon(1, 0) (its working directory kept, its standard
   descriptors put on /dev/null); the parent leaves there with status 0. The
   daemon (a session leader of its own, or it exits 3) leaks 5 x 2222 B and
   writes "daemon pid P sid S" to DIR/daemon.txt. Exits 0; 1 when daemon()
   fails, 2 when the file cannot be written. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void *volatile sink;

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  for (int i = 0; i < 3; i++) sink = malloc(1111);
  if (daemon(1, 0) != 0) return 1;
  if (getsid(0) != getpid()) return 3;
  for (int i = 0; i < 5; i++) sink = malloc(2222);
  char path[4096];
  snprintf(path, sizeof path, "%s/daemon.txt", argv[1]);
  FILE *f = fopen(path, "w");
  if (!f) return 2;
  fprintf(f, "daemon pid %d sid %d\n", (int)getpid(), (int)getsid(0));
  return fclose(f) == 0 ? 0 : 2;
}
