/* The program's errno across the agent's first event, which opens the
   stream (probing paths, and failing aloud where it cannot): errno is set
   to EDOM before the first malloc, in the process and then in a forked
   child (whose stream opens with its own first event). Exits 0 when errno
   held EDOM each time; 1 when the process's first malloc changed it, 2 when
   the child's did, 3 when the child did not exit. */
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;

int main(void) {
  errno = EDOM;
  sink = malloc(100);
  if (errno != EDOM) return 1;
  const pid_t child = fork();
  if (child == 0) {
    errno = EDOM;
    sink = malloc(200);
    _exit(errno == EDOM ? 0 : 2);
  }
  int status;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 3;
  return WEXITSTATUS(status);
}
