/* The sampling signal as a program sees it: `sig_view MODE`, SIGPROF's
   disposition printed as "found DFL" (or IGN, or HANDLER), then
   - restore: every signal's disposition read and set back (a save-all,
     restore-all), then 0.3 s of CPU burnt; prints "restored";
   - wait: every signal blocked, 0.3 s of CPU burnt, then whether SIGPROF
     is pending ("pending 0") and what a wait for every signal gets
     ("waited -1 11": none, EAGAIN);
   - exec: runs itself as `sig_view found` after a fork, and prints how the
     child ended ("child exit 0"; the child sends itself SIGPROF first, which
     an ignored SIGPROF survives). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void burn(double seconds) {
  struct timespec t0, t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  volatile unsigned long sink = 0;
  do {
    for (int i = 0; i < 100000; i++) sink += (unsigned long)i * i;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  } while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

static const char *found(void) {
  struct sigaction sa;
  sigaction(SIGPROF, NULL, &sa);
  if (sa.sa_flags & SA_SIGINFO) return "HANDLER";
  return sa.sa_handler == SIG_IGN ? "IGN" : sa.sa_handler == SIG_DFL ? "DFL" : "HANDLER";
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  printf("found %s\n", found());
  fflush(stdout);
  if (!strcmp(mode, "restore")) {
    struct sigaction saved[65];
    for (int s = 1; s < 65; s++) sigaction(s, NULL, &saved[s]);
    for (int s = 1; s < 65; s++)
      if (s != SIGKILL && s != SIGSTOP) sigaction(s, &saved[s], NULL);
    burn(0.3);
    printf("restored\n");
  } else if (!strcmp(mode, "wait")) {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    burn(0.3);
    sigset_t pending;
    sigpending(&pending);
    printf("pending %d\n", sigismember(&pending, SIGPROF));
    const struct timespec zero = {0, 0};
    siginfo_t info;
    const int got = sigtimedwait(&all, &info, &zero);
    printf("waited %d %d\n", got, got < 0 ? errno : 0);
  } else if (!strcmp(mode, "exec")) {
    const pid_t child = fork();
    if (child == 0) {
      execl(argv[0], argv[0], "found", (char *)NULL);
      _exit(99);
    }
    int status;
    waitpid(child, &status, 0);
    printf("child %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  } else if (!strcmp(mode, "found")) {
    kill(getpid(), SIGPROF);
  }
  return 0;
}
