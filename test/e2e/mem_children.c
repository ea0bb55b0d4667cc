/* Descendants of every kind, for PROF_FOLLOW and PROF_OUTPUT. By argv[1]:
   exec-chain:  3 x 3003 B, then an exec of itself with "spawn" (same pid).
   spawn:       4 x 4004 B, then children one after the other, each waited
                for: a fork child (20 x 2002 B, prints "fork"), then vfork +
                exec, posix_spawn, system() and popen(), each an exec of
                itself with "child HOW".
   chdir DIR:   chdir(DIR), then as exec-chain.
   child HOW:   5 x 5005 B, prints HOW (popen's line is printed by its
                parent). */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void *volatile sink;
static void leak(int n, size_t size) {
  for (int i = 0; i < n; i++) sink = malloc(size);
}

static char self[4096];  /* this program's path, for the shell's command lines */

static int waited(pid_t pid) {
  int status;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

static int spawn(void) {
  char line[4200];
  leak(4, 4004);
  fflush(stdout);  /* nothing buffered twice in the fork child */
  pid_t pid = fork();
  if (pid == 0) {
    leak(20, 2002);
    printf("fork\n");
    exit(0);
  }
  if (!waited(pid)) return 1;
  pid = vfork();
  if (pid == 0) {
    execl(self, self, "child", "vfork", (char *)NULL);
    _exit(127);
  }
  if (!waited(pid)) return 2;
  char *const argv[] = {self, "child", "posix_spawn", NULL};
  if (posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0 || !waited(pid)) return 3;
  snprintf(line, sizeof line, "'%s' child system", self);
  if (system(line) != 0) return 4;
  snprintf(line, sizeof line, "'%s' child popen", self);
  FILE *p = popen(line, "r");
  if (!p || !fgets(line, sizeof line, p) || pclose(p) != 0) return 5;
  fputs(line, stdout);
  return 0;
}

static int exec_chain(void) {
  leak(3, 3003);
  execl(self, self, "spawn", (char *)NULL);
  return 99;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 98;
  self[n] = 0;
  if (!strcmp(mode, "exec-chain")) return exec_chain();
  if (!strcmp(mode, "spawn")) return spawn();
  if (!strcmp(mode, "chdir") && argc > 2) return chdir(argv[2]) != 0 ? 97 : exec_chain();
  if (!strcmp(mode, "child") && argc > 2) {
    leak(5, 5005);
    printf("%s\n", argv[2]);
    return 0;
  }
  return 2;
}
