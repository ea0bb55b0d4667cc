/* dlopen()s the plugin given as argv[1], leaks 3 blocks of 9009 B made in
   it, dlclose()s it, and prints the plugin function's address. */
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  if (argc < 2) return 2;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_DEEPBIND);
  if (!h) return 3;
  void *(*fn)(void) = (void *(*)(void))dlsym(h, "plugin_alloc");
  for (int i = 0; i < 3; i++) fn();
  printf("plugin_alloc %p\n", (void *)fn);
  dlclose(h);
  return 0;
}
