/* Three threads named by the program, each burning known CPU time in its own
   function: alpha-worker names itself with pthread_setname_np (0.4 s in
   alpha_work), beta-worker with prctl(PR_SET_NAME) (0.2 s in beta_work), and
   main names the third gamma-worker with pthread_setname_np before it starts
   (0.1 s in gamma_work). Each also allocates 100 blocks of 1000 B, freed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

void *volatile sink;
sem_t named;

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void allocate(void) {
  for (int i = 0; i < 100; i++) {
    void *p = malloc(1000);
    sink = p;
    free(p);
  }
}

#define BURNER(name)                                         \
  __attribute__((noinline)) void name(double seconds) {      \
    volatile unsigned x = 0;                                 \
    const double end = cpu_seconds() + seconds;              \
    while (cpu_seconds() < end)                              \
      for (unsigned i = 0; i < 10000; i++) x = x * 3 + i;    \
  }
BURNER(alpha_work)
BURNER(beta_work)
BURNER(gamma_work)

static void *alpha(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "alpha-worker");
  allocate();
  alpha_work(0.4);
  return NULL;
}

static void *beta(void *arg) {
  (void)arg;
  prctl(PR_SET_NAME, "beta-worker", 0, 0, 0);
  allocate();
  beta_work(0.2);
  return NULL;
}

static void *gamma_main(void *arg) {
  (void)arg;
  sem_wait(&named);
  allocate();
  gamma_work(0.1);
  return NULL;
}

int main(void) {
  sem_init(&named, 0, 0);
  pthread_t a, b, g;
  pthread_create(&a, NULL, alpha, NULL);
  pthread_create(&b, NULL, beta, NULL);
  pthread_create(&g, NULL, gamma_main, NULL);
  pthread_setname_np(g, "gamma-worker");
  sem_post(&named);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  pthread_join(g, NULL);
  return 0;
}
