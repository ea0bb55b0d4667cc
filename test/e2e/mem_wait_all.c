/* Reaps as strace, debuggers and supervisors do: waitpid(-1, __WALL) until
   no child is left. It leaks 100 x 1000 B (so the agent's writer runs),
   forks 3 children that each leak 10 x 2000 B and exit with 7, reaps, and
   exits with the count of children reaped that exited with 7 (3), printing
   "<n> others" for what else it reaped. Should the loop wait on a task
   that never ends, SIGALRM ends it after 20 s.
   With "subreaper" it first becomes a subreaper and execs itself, so that
   it is one from its start: it would then adopt, as any orphan, a task its
   children's agents left behind. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kChildren = 3 };

void *volatile sink;

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "subreaper")) {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return 102;
    execl("/proc/self/exe", argv[0], (char *)NULL);
    return 103;
  }
  alarm(20);
  for (int i = 0; i < 100; i++) sink = malloc(1000);
  for (int c = 0; c < kChildren; c++) {
    const pid_t pid = fork();
    if (pid < 0) return 100;
    if (pid == 0) {
      for (int i = 0; i < 10; i++) sink = malloc(2000);
      exit(7);
    }
  }
  int reaped = 0, others = 0, status;
  for (pid_t pid; (pid = waitpid(-1, &status, __WALL)) != -1;) {
    if (WIFEXITED(status) && WEXITSTATUS(status) == 7) reaped++;
    else others++;
  }
  printf("%d others\n", others);
  return errno == ECHILD ? reaped : 101;
}
