/* Run with PROF_OUTPUT=/dev/full: every stream the agent opens fails at its
   first write. Then a pipe, made after the agent gave up, carries "from
   parent\n" to a forked child, which prints what it read ("child read: ...")
   and exits 3; the parent exits with the child's status. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int p[2];
  if (pipe(p) != 0) return 90;
  const pid_t pid = fork();
  if (pid == 0) {
    close(p[1]);
    char buf[64];
    const ssize_t n = read(p[0], buf, sizeof buf - 1);
    if (n < 0) {
      perror("child read");
      return 1;
    }
    buf[n] = 0;
    printf("child read: %s", buf);
    return 3;
  }
  close(p[0]);
  static const char msg[] = "from parent\n";
  if (write(p[1], msg, strlen(msg)) != (ssize_t)strlen(msg)) return 91;
  close(p[1]);
  int status;
  if (waitpid(pid, &status, 0) != pid) return 92;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 93;
}
