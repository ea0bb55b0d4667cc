// Allocation sites known by construction, for LLVM MemProf and libprof alike
// (test/llvm_memprof_e2e.cpp): 1,000 blocks of 64 bytes from small_site, all
// live at once; 10 of 4,096 from big_site; 5 of 1,024 from cold_site, never
// touched; one of 64 from hot_site, read and written 100,000 times.
#include <cstdlib>

extern "C" {
__attribute__((noinline)) void *small_site() { return malloc(64); }
__attribute__((noinline)) void *big_site() { return malloc(4096); }
__attribute__((noinline)) void *cold_site() { return malloc(1024); }
__attribute__((noinline)) void *hot_site() { return malloc(64); }
}

int main() {
  static void *keep[1000];
  for (int i = 0; i < 1000; i++) {
    keep[i] = small_site();
    static_cast<volatile char *>(keep[i])[0] = 1;
  }
  for (int i = 0; i < 1000; i++) free(keep[i]);
  for (int i = 0; i < 10; i++) {
    void *p = big_site();
    static_cast<volatile char *>(p)[0] = 1;
    free(p);
  }
  void *cold[5];
  for (void *&p : cold) p = cold_site();
  volatile long *hot = static_cast<volatile long *>(hot_site());
  hot[0] = 0;
  for (int i = 0; i < 100000; i++) hot[0] = hot[0] + 1;
  const int rc = hot[0] == 100000 ? 0 : 1;
  free(const_cast<long *>(hot));
  for (void *p : cold) free(p);
  return rc;
}
