/* A program that closes every descriptor it did not open, as daemons and
   closefrom(3) do, then opens files of its own (in DIR), which get the
   lowest numbers, the agent's old ones among them. `mem_closefrom MODE DIR`:
   files: 10 x 1111 B leaked; descriptors 3..1023 closed; 4 data files
          opened; 5 rounds, each writing one line to each file
          ("data I round R") and 2000 x 2222 B allocated and freed, then
          0.15 s asleep (the agent's timed flush runs meanwhile); 10 x 3333 B
          leaked.
   fork:  10 x 1111 B leaked; descriptors 3..1023 closed; 4 log files
          opened, "parent before" written to each; a forked child allocates
          20 x 2002 B (leaked) and writes "child" to each; then the parent,
          having waited, writes "parent after" to each and leaks 5 x 5005 B.
   pipe:  10 x 1111 B leaked; descriptors 3..1023 closed; a pipe made (it
          gets the lowest numbers) and a line written into it; 8 threads one
          after the other allocate and free 4444 B (new stacks for the
          unwinder to check); then the pipe read back: prints "pipe intact"
          if it holds just that line, else "pipe changed: N bytes".
   lost:  descriptors 3..1023 closed, every file in DIR (where the profiles
          are) removed, then 0.3 s of CPU burnt.
   Exits 0, or 1 when a write fails. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void *volatile sink;
static void leak(int n, size_t size) {
  for (int i = 0; i < n; i++) sink = malloc(size);
}

enum { kFiles = 4 };
static int files[kFiles];

static void open_files(const char *dir, const char *stem) {
  for (int i = 0; i < kFiles; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%d", dir, stem, i);
    files[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (files[i] < 0) exit(1);
  }
}

static void write_each(const char *line) {
  for (int i = 0; i < kFiles; i++)
    if (write(files[i], line, strlen(line)) != (ssize_t)strlen(line)) exit(1);
}

static void *alloc_4444(void *arg) {
  (void)arg;
  sink = malloc(4444);
  free(sink);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  const char *mode = argv[1], *dir = argv[2];
  leak(10, 1111);
  for (int fd = 3; fd < 1024; fd++) close(fd);
  if (!strcmp(mode, "files")) {
    open_files(dir, "data");
    for (int round = 0; round < 5; round++) {
      for (int i = 0; i < kFiles; i++) {
        char line[64];
        snprintf(line, sizeof line, "data %d round %d\n", i, round);
        if (write(files[i], line, strlen(line)) != (ssize_t)strlen(line)) return 1;
      }
      for (int k = 0; k < 2000; k++) {
        sink = malloc(2222);
        free(sink);
      }
      const struct timespec nap = {0, 150000000};
      nanosleep(&nap, NULL);
    }
    for (int i = 0; i < kFiles; i++) close(files[i]);
    leak(10, 3333);
    return 0;
  }
  if (!strcmp(mode, "pipe")) {
    int p[2];
    if (pipe(p) != 0) return 1;
    static const char line[] = "the program's own bytes\n";
    if (write(p[1], line, strlen(line)) != (ssize_t)strlen(line)) return 1;
    for (int i = 0; i < 8; i++) {
      pthread_t t;
      if (pthread_create(&t, NULL, alloc_4444, NULL) != 0 || pthread_join(t, NULL) != 0) return 1;
    }
    close(p[1]);
    char got[4096];
    size_t n = 0;
    for (ssize_t k; n < sizeof got && (k = read(p[0], got + n, sizeof got - n)) > 0;) n += (size_t)k;
    if (n == strlen(line) && !memcmp(got, line, n))
      printf("pipe intact\n");
    else
      printf("pipe changed: %zu bytes\n", n);
    return 0;
  }
  if (!strcmp(mode, "lost")) {
    DIR *d = opendir(dir);
    if (!d) return 1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      if (e->d_name[0] != '.') unlink(path);
    }
    closedir(d);
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
      for (int i = 0; i < 20000; i++) sink = (void *)(long)i;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 300000000L);
    return 0;
  }
  if (!strcmp(mode, "fork")) {
    open_files(dir, "log");
    write_each("parent before\n");
    const pid_t pid = fork();
    if (pid == 0) {
      leak(20, 2002);
      write_each("child\n");
      exit(0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    write_each("parent after\n");
    leak(5, 5005);
    return 0;
  }
  return 2;
}
