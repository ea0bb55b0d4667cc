/* Lifecycle cases, chosen by argv[1]:
   fork:   parent 10 x 1001 B, child 20 x 2002 B, both leaked; parent waits.
   exec:   3 x 3003 B, then exec of itself with "after-exec" (4 x 4004 B);
           fexecve and execveat: the same, through those calls.
   exit-threads: a thread allocates 1500 B blocks forever while main allocates
           6 x 6006 B and calls exit().
   _exit / abort: 8 x 8008 B then _exit(5) / abort().
   quick_exit: 8 x 8008 B then quick_exit(6), whose handler (at_quick_exit)
           makes 2 x 9009 B.
   thread-exit: main allocates 7007 B (the agent's per-thread keys now
           exist); a thread allocates 7007 B, and its key destructor, which
           runs after the agent's own (its key is newer), 3 x 7007 B more.
   devnull: prints "hello" and exits 9 (for output/exit-code checks). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;
static void leak(int n, size_t size) {
  for (int i = 0; i < n; i++) sink = malloc(size);
}
static pthread_key_t late_key;
static void late_destructor(void *value) {
  (void)value;
  leak(3, 7007);
}
static void *exiting_thread(void *arg) {
  pthread_setspecific(late_key, arg);
  leak(1, 7007);
  return NULL;
}
static void leak_at_quick_exit(void) { leak(2, 9009); }
static void *spin(void *arg) {
  (void)arg;
  for (;;) free(malloc(1500));
  return NULL;
}
int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "fork")) {
    leak(10, 1001);
    pid_t pid = fork();
    if (pid == 0) {
      leak(20, 2002);
      exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    return WEXITSTATUS(status);
  }
  if (!strcmp(mode, "exec")) {
    leak(3, 3003);
    execl("/proc/self/exe", argv[0], "after-exec", (char *)NULL);
    return 99;
  }
  if (!strcmp(mode, "fexecve") || !strcmp(mode, "execveat")) {
    char *const args[] = {argv[0], "after-exec", NULL};
    extern char **environ;
    leak(3, 3003);
    if (!strcmp(mode, "fexecve"))
      fexecve(open("/proc/self/exe", O_RDONLY | O_CLOEXEC), args, environ);
    else
      execveat(AT_FDCWD, "/proc/self/exe", args, environ, 0);
    return 99;
  }
  if (!strcmp(mode, "after-exec")) {
    leak(4, 4004);
    return 0;
  }
  if (!strcmp(mode, "exit-threads")) {
    pthread_t t;
    pthread_create(&t, NULL, spin, NULL);
    leak(6, 6006);
    exit(0);
  }
  if (!strcmp(mode, "thread-exit")) {
    pthread_t t;
    leak(1, 7007);
    pthread_key_create(&late_key, late_destructor);
    pthread_create(&t, NULL, exiting_thread, (void *)1);
    pthread_join(t, NULL);
    return 0;
  }
  if (!strcmp(mode, "quick_exit")) {
    leak(8, 8008);
    at_quick_exit(leak_at_quick_exit);
    quick_exit(6);
  }
  if (!strcmp(mode, "_exit")) {
    leak(8, 8008);
    _exit(5);
  }
  if (!strcmp(mode, "abort")) {
    leak(8, 8008);
    signal(SIGABRT, SIG_DFL);
    abort();
  }
  printf("hello\n");
  return 9;
}
