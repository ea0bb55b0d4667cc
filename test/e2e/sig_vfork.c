/* A vfork child resets a handler before it execs, as gdb's and shells'
   children do: the parent's handler must still run. It installs a SIGUSR1
   handler (sigaction, then signal()), vforks a child that sets SIGUSR1 back
   to SIG_DFL with the same call and _exits, then raises SIGUSR1: exits 0
   when the handler ran each time, 1 when a signal was lost. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

static volatile sig_atomic_t caught;
static void on_usr1(int sig) { (void)sig; caught++; }

/* Sets SIGUSR1's handler with signal() or with sigaction(). */
static void set_usr1(void (*handler)(int), int with_signal_fn) {
  if (with_signal_fn) {
    signal(SIGUSR1, handler);
    return;
  }
  struct sigaction sa = {0};
  sa.sa_handler = handler;
  sigaction(SIGUSR1, &sa, NULL);
}

static int round_trip(int with_signal_fn) {
  set_usr1(on_usr1, with_signal_fn);
  const pid_t pid = vfork();
  if (pid == 0) {
    set_usr1(SIG_DFL, with_signal_fn);
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  const int before = caught;
  raise(SIGUSR1);
  return caught == before + 1;
}

int main(void) {
  void *volatile block = malloc(100);  /* an event: the agent records */
  free(block);
  return round_trip(0) && round_trip(1) ? 0 : 1;
}
